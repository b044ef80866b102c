"""Checking mode's product warnings (docs/checking.md, "Product warnings"): where CANN's
documentation calls an operator (or a dtype) unsupported on the emulated product while op_api
accepts it (docs/compatibility.md lists them), phase 1 prints a WARNING naming the doc page; the
warning does not set the exit status, and the other products (and checking off) print none.
The expectations below are docs/compatibility.md's list, written out independently of the
tables in ops/products.c that drive the warnings."""
import re

import pytest

import support

PRODUCTS = ["Ascend910", "Ascend910B", "Ascend910_93", "Ascend950", "Ascend310P"]

# example program -> (operator, doc page, products whose docs call it unsupported)
EXAMPLES = {
    "im2col.cpp": ("aclnnIm2col", "docs/aclnnIm2col.md", {"Ascend910", "Ascend310P"}),
    "im2col_backward.cpp": ("aclnnIm2colBackward", "docs/aclnnIm2colBackward.md", {"Ascend910", "Ascend310P"}),
    "prelu_backward.cpp": ("aclnnPreluBackward", "docs/aclnnPreluBackward.md", {"Ascend310P"}),
    "upsample_nearest_exact1d.cpp": ("aclnnUpsampleNearestExact1d", "docs/aclnnUpsampleNearestExact1d.md",
                                     {"Ascend910"}),  # FLOAT: on 310P only BF16/UINT8 are undocumented
    "upsample_nearest_exact1d_backward.cpp": ("aclnnUpsampleNearestExact1dBackward",
                                              "docs/aclnnUpsampleNearestExact1dBackward.md",
                                              {"Ascend910", "Ascend310P"}),
    "prelu.cpp": ("aclnnPrelu", None, set()),
    "replication_pad2d.cpp": ("aclnnReplicationPad2d", None, set()),
}


def warnings_in(output):
    return [line for line in output.splitlines() if line.startswith("========= ACLNN_CHECK WARNING (product)")]


def run(exe, soc, check="1", args=()):
    env = {"ACLNN_SOC_VERSION": soc, "ACLNN_CHECK_EXITCODE": "9"}
    if check is not None:
        env["ACLNN_CHECK"] = check
    result = support.run_program(exe, env=env, args=args)
    return result, result.stdout + result.stderr


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_examples_warn_where_the_docs_say_unsupported(name):
    op, page, unsupported = EXAMPLES[name]
    exe = support.compile_program(support.EXAMPLES / name, out_dir=support.BIN_DIR / "examples")
    for soc in PRODUCTS:
        if name.startswith("im2col_backward") and soc == "Ascend950":
            continue  # the example's shape is one Ascend950's Col2im path runs too; no doc question
        result, output = run(exe, soc)
        assert result.returncode == 0, output  # a warning never sets the exit status
        found = warnings_in(output)
        if soc in unsupported:
            assert found == [f"========= ACLNN_CHECK WARNING (product): {op}: CANN's documentation says "
                             f"{soc} does not support it"], output
            assert re.search(rf"^=========   doc:\s+{re.escape(page)} ", output, re.M), output
            assert re.search(rf"^=========   call:\s+{op}GetWorkspaceSize \(\w+ \w+\) on {soc}, at:$",
                             output, re.M), output
            assert "SUMMARY: 0 errors, 1 warning" in output
        else:
            assert found == [], output
        if soc in unsupported:
            result, output = run(exe, soc, check=None)
            assert "ACLNN_CHECK" not in output and result.returncode == 0, output


@pytest.mark.parametrize("dtype,warned", [("FLOAT", False), ("FLOAT16", False), ("BF16", True), ("UINT8", True)])
def test_upsample_dtypes_undocumented_on_310p(dtype, warned):
    named = {"BF16": "BFLOAT16"}.get(dtype, dtype)  # the library's dtype names
    exe = support.compile_program(support.ROOT / "tests" / "check_programs" / "upsample_dtype.c")
    result, output = run(exe, "Ascend310P", args=(dtype,))
    assert result.returncode == 0 and "status 0" in output, output
    expected = [f"========= ACLNN_CHECK WARNING (product): aclnnUpsampleNearestExact1d with self {named}: "
                f"CANN's documentation says Ascend310P does not support it"] if warned else []
    assert warnings_in(output) == expected, output
    result, output = run(exe, "Ascend910B", args=(dtype,))
    assert warnings_in(output) == [], output


def test_product_warnings_alone():
    """ACLNN_CHECK=product gives the warnings without turning a tool on."""
    exe = support.compile_program(support.EXAMPLES / "prelu_backward.cpp", out_dir=support.BIN_DIR / "examples")
    result, output = run(exe, "Ascend310P", check="product")
    assert len(warnings_in(output)) == 1 and result.returncode == 0, output


# The determinism warning (docs/checking.md, "Determinism warning"): CANN's operator list calls
# MaxPool2dWithMaskBackward nondeterministic by default on A2/A3 and MaxPool2dWithIndicesBackward
# on A2/A3 and Ascend950 (ops-nn docs/zh/op_api_list.md); the card adds overlapping windows'
# gradients with atomics unless the process set ACL_OPT_DETERMINISTIC (aclrtSetSysParamOpt, what
# CANN's opbase reads at phase 1).  Expected: one warning per process, only with overlapping
# windows, only there, not after aclrtSetSysParamOpt.
DETERMINISM = {  # (variant, soc) -> the card may be nondeterministic
    ("mask", "Ascend910B"): True, ("mask", "Ascend910_93"): True, ("mask", "Ascend910"): False,
    ("indices", "Ascend910B"): True, ("indices", "Ascend910_93"): True, ("indices", "Ascend950"): True,
}
OP_NAMES = {"mask": "aclnnMaxPool2dWithMaskBackward", "indices": "aclnnMaxPool2dWithIndicesBackward"}


@pytest.fixture(scope="module")
def determinism_exe():
    return support.compile_program(support.ROOT / "tests" / "check_programs" / "max_pool_determinism.c")


@pytest.mark.parametrize("variant,soc", sorted(DETERMINISM))
def test_determinism_warning_once_with_overlapping_windows(determinism_exe, variant, soc):
    op = OP_NAMES[variant]
    result, output = run(determinism_exe, soc, args=(variant, "overlap"))
    assert result.returncode == 0 and output.count("launch 0 sync 0") == 2, output
    expected = [f"========= ACLNN_CHECK WARNING (product): {op}: nondeterministic on {soc} unless deterministic "
                f"mode is on"] if DETERMINISM[variant, soc] else []
    assert warnings_in(output) == expected, output  # two phase-1 calls, one warning
    if expected:
        assert re.search(rf"^=========   call:\s+{op}GetWorkspaceSize with overlapping windows", output, re.M), output
        assert "aclrtSetSysParamOpt(ACL_OPT_DETERMINISTIC, 1)" in output
        assert "SUMMARY: 0 errors, 1 warning" in output


@pytest.mark.parametrize("variant", ["mask", "indices"])
def test_no_determinism_warning_without_overlap_or_with_deterministic_mode(determinism_exe, variant):
    for args in ((variant, "apart"), (variant, "overlap", "det")):
        result, output = run(determinism_exe, "Ascend910B", args=args)
        assert result.returncode == 0 and output.count("launch 0 sync 0") == 2, output
        assert warnings_in(output) == [], (args, output)


def test_determinism_warning_ignores_the_context_option(determinism_exe):
    """aclrtCtxSetSysParamOpt is not what CANN's opbase reads for deterministic kernels: still warned."""
    result, output = run(determinism_exe, "Ascend910B", args=("mask", "overlap", "ctxdet"))
    assert len(warnings_in(output)) == 1 and result.returncode == 0, output


def test_determinism_warning_only_in_checking_mode(determinism_exe):
    result, output = run(determinism_exe, "Ascend910B", check=None, args=("mask", "overlap"))
    assert "ACLNN_CHECK" not in output and result.returncode == 0, output
    result, output = run(determinism_exe, "Ascend910B", check="product", args=("mask", "overlap"))
    assert len(warnings_in(output)) == 1 and result.returncode == 0, output
