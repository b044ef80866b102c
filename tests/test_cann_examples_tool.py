"""tools/cann_examples.py builds CANN's own example programs against this tree (run by hand, it
needs CANN's repositories; docs/compatibility.md, "CANN's official examples").  These tests keep
its pieces from rotting without those repositories: the source reader, the output parser, the
PyTorch references, the comparison and the checksum case, on small programs written here in the
examples' style."""
import importlib.util
import subprocess

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import support

spec = importlib.util.spec_from_file_location("cann_examples", support.ROOT / "tools" / "cann_examples.py")
tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tool)

PRELU_SOURCE = """
int main() {
    // a comment with aclnnFooGetWorkspaceSize( that must not count
    std::vector<int64_t> xShape = {2, 3};
    std::vector<int64_t> wShape = {1};
    int64_t cols = 3;
    std::vector<float> xHost = {-1.5, 2, -3, 4.25, -0.5f, 6};
    std::vector<float> wHost(1);
    std::fill(wHost.begin(), wHost.end(), static_cast<float>(0.25f));
    std::vector<float> outHost(2 * cols, 0);
    ret = CreateAclTensor(xHost, xShape, &xAddr, aclDataType::ACL_FLOAT, &x);
    ret = CreateAclTensor(wHost, wShape, &wAddr, aclDataType::ACL_FLOAT, &w);
    ret = CreateAclTensor(outHost, xShape, &outAddr, aclDataType::ACL_FLOAT, &y);
    ret = aclnnPreluGetWorkspaceSize(x, w, y, &workspaceSize, &executor);
    for (int64_t i = 0; i < 6; i++) LOG_PRINT("result[%ld] is: %f\\n", i, r[i]);
}
"""
PRELU_STDOUT = "".join(f"result[{i}] is: {v:f}\n" for i, v in enumerate([-0.375, 2, -0.75, 4.25, -0.125, 6]))

IM2COL_BW_SOURCE = """
    std::vector<int64_t> gShape = {4, 2};
    std::vector<int64_t> oShape = {1, 1, 1};
    std::vector<float> gHost = {1, 2, 3, 4, 5, 6, 7, 8};
    std::vector<int64_t> sizeData = {1, 1};
    std::vector<int64_t> kData = {2, 2};
    std::vector<int64_t> dData = {1, 1};
    std::vector<int64_t> pData = {1, 1};
    std::vector<int64_t> sData = {1, 2};
    std::vector<float> oHost = {0};
    ret = CreateAclTensor(gHost, gShape, &gAddr, aclDataType::ACL_FLOAT, &grad);
    ret = CreateAclTensor(oHost, oShape, &oAddr, aclDataType::ACL_FLOAT, &out);
    inputSize = aclCreateIntArray(sizeData.data(), 2);
    kernel = aclCreateIntArray(kData.data(), 2);
    dilation = aclCreateIntArray(dData.data(), 2);
    padding = aclCreateIntArray(pData.data(), 2);
    auto stride = aclCreateIntArray(sData.data(), 2);
    ret = aclnnIm2colBackwardGetWorkspaceSize(grad, inputSize, kernel, dilation, padding, stride, out,
                                              &workspaceSize, &executor);
"""


def test_source_reader_resolves_the_call():
    src = tool.Source(PRELU_SOURCE)
    assert tool.called_ops(PRELU_SOURCE) == ["Prelu"]
    assert src.call_args("Prelu") == ["x", "w", "y", "&workspaceSize", "&executor"]
    x = src.value("x")
    assert x.dtype == "ACL_FLOAT" and x.data.shape == (2, 3)
    np.testing.assert_array_equal(x.data.ravel(), [-1.5, 2, -3, 4.25, -0.5, 6])
    np.testing.assert_array_equal(src.value("w").data, [0.25])  # the fill, not the constructor's 0


def test_reference_and_comparison():
    [want] = tool.expected_outputs(PRELU_SOURCE, "Prelu")
    ref = F.prelu(torch.tensor([[-1.5, 2, -3], [4.25, -0.5, 6]]), torch.tensor([0.25]))
    np.testing.assert_array_equal(want, ref.numpy())
    assert tool.check_printed(PRELU_SOURCE, "Prelu", PRELU_STDOUT) == (6, 6, "")
    wrong = PRELU_STDOUT.replace("result[2] is: -0.750000", "result[2] is: -0.700000")
    checked, correct, note = tool.check_printed(PRELU_SOURCE, "Prelu", wrong)
    assert (checked, correct) == (6, 5) and "[2]" in note


def test_im2col_backward_reference_reads_int_arrays():
    [want] = tool.expected_outputs(IM2COL_BW_SOURCE, "Im2colBackward")
    grad = torch.arange(1, 9, dtype=torch.float64).reshape(1, 4, 2)
    ref = F.fold(grad, [1, 1], [2, 2], 1, 1, [1, 2]).reshape(1, 1, 1)
    np.testing.assert_array_equal(want, ref.numpy())


def test_output_parser_groups_and_multi_value_lines():
    out = ("noise\nresult[0] is: 1.000000\nresult[1] is: 2.500000\nresult[0] is: 7\n"
           "gradWeight[0] is: -3.000000\n"
           "prelu input1[0] is: -2.000000, input2[0] is: -11.000000, result[0] is: 22.000000\n")
    assert tool.parse_output(out) == [("result", [1.0, 2.5]), ("result", [7.0]), ("gradWeight", [-3.0]),
                                      ("result", [22.0])]


def test_compare_prefix_and_undefined():
    checked, correct, notes = tool.compare([1.0, 2.0], [1.0, 2.0, 3.0])
    assert (checked, correct) == (2, 2) and "first 2 of 3" in notes[0]
    checked, correct, notes = tool.compare([1.0, 5.0, 3.0], [1.0, float("nan"), 3.0])
    assert (checked, correct) == (2, 2) and "undefined" in notes[0]
    assert tool.compare([1.0, 2.0, 3.0], [1.0, 2.0])[1] == 0


def test_data_read_past_the_vector_is_undefined():
    src = tool.Source(PRELU_SOURCE.replace("{-1.5, 2, -3, 4.25, -0.5f, 6}", "{-1.5, 2}"))
    x = src.value("x").data.ravel()
    assert x[:2].tolist() == [-1.5, 2] and np.isnan(x[2:]).all()


CHECKSUM_SOURCE = """
constexpr size_t BOOL_VALUE_MASK = 1U;
constexpr size_t TEST_DATA_MULTIPLIER = 5U;
constexpr size_t TEST_DATA_OFFSET = 1U;
constexpr size_t BYTE_VALUE_MASK = std::numeric_limits<uint8_t>::max();
constexpr uint64_t CHECKSUM_MULTIPLIER = 7U;
    result |= RunCase("small", stream, ACL_UINT8, sizeof(uint8_t), {1, 2, 3}, {2, 2}, {1, 1}, {0, 0},
                      {1, 1});
"""


def test_checksum_case():
    x = ((5 * np.arange(6) + 1) & 255).astype(np.float64).reshape(1, 1, 2, 3)
    cols = F.unfold(torch.from_numpy(x), 2).numpy().astype(np.uint8).ravel()
    checksum = 0
    for byte in cols.tolist():
        checksum = (checksum * 7 + byte) % (1 << 64)
    assert tool.checksum_cases(CHECKSUM_SOURCE) == {"small": (cols.size, checksum)}
    good = f"small: output_elements={cols.size} checksum={checksum}\n"
    assert tool.check_printed(CHECKSUM_SOURCE, "Im2col", good)[:2] == (2, 2)
    assert tool.check_printed(CHECKSUM_SOURCE, "Im2col", good.replace(str(checksum), "1"))[:2] == (2, 1)


def test_examples_products_and_compile_lines(tmp_path):
    assert tool.is_example("activation/p_relu/examples/test_aclnn_prelu.cpp")
    assert tool.is_example("pooling/x/examples/arch35/test_aclnn_x.cpp")
    assert not tool.is_example("activation/p_relu/tests/test_aclnn_prelu.cpp")
    assert tool.product_of("pooling/x/examples/arch35/test_aclnn_x.cpp") == "Ascend950"
    assert tool.product_of("experimental/a/b/examples/test_aclnn_b.cpp") == "Ascend950"
    assert tool.product_of("conversion/im2col/examples/test_aclnn_im2col.cpp") == "default"
    cmd = tool.compile_command("ops-cv", "image/x/examples/test_aclnn_x.cpp", "x.cpp", "x", tmp_path)
    assert cmd[-6:] == [f"-L{tmp_path / 'lib64'}", "-lopapi_cv", "-lascendcl", "-lnnopbase", "-o", "x"]
    cmd = tool.compile_command("ops-nn", "experimental/a/examples/test_aclnn_a.cpp", "a.cpp", "a", tmp_path)
    assert "-lcust_opapi" in cmd and f"-I{tmp_path / 'include' / 'aclnnop'}" in cmd
    assert tool.run_env(tmp_path, "Ascend950")["ACLNN_SOC_VERSION"] == "Ascend950"
    assert "ACLNN_SOC_VERSION" not in tool.run_env(tmp_path, "default")


def test_repo_reads_a_checkout_and_a_bare_repository(tmp_path):
    checkout = tmp_path / "ops-nn"
    (checkout / "activation" / "p_relu" / "examples").mkdir(parents=True)
    (checkout / "activation" / "p_relu" / "examples" / "test_aclnn_prelu.cpp").write_text(PRELU_SOURCE)
    repo = tool.Repo("ops-nn", checkout)
    assert not repo.bare
    [(found, rel)] = tool.find_examples([repo])
    assert rel == "activation/p_relu/examples/test_aclnn_prelu.cpp" and found is repo
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(checkout)]
    subprocess.run(git[:5] + ["init", "-q", str(checkout)], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "x"], check=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(checkout), str(tmp_path / "bare")], check=True)
    bare = tool.Repo("ops-nn", tmp_path / "bare")
    assert bare.bare and bare.read(rel) == PRELU_SOURCE


@pytest.mark.parametrize("line", ["result[0] is: nan", "result[0] is: -inf"])
def test_parser_reads_special_values(line):
    [(name, [v])] = tool.parse_output(line)
    assert name == "result" and not np.isfinite(v)
