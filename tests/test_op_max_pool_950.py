"""aclnnMaxPool2dWithIndices[Backward] per product (docs/compatibility.md, "Products"): Ascend950's
MaxPoolWithArgmaxV3 pair (dilation > 0, NHWC, INT32/INT64 indices, FLOAT16/BF16 gradients) against
PyTorch CPU, and what A2/A3 keeps rejecting (dilation != 1, INT64 indices in the backward, INT8
indices failing at launch)."""
import re

import ml_dtypes
import numpy as np
import pytest
import torch

import pyaclnn
from pyaclnn import Tensor
from tiers import Run, run_script

BF16 = ml_dtypes.bfloat16
INVALID, INNER, AICORE = 161002, 561000, 507015

# shape (N, C, H, W or C, H, W), kernel, stride, padding, dilation, ceil_mode
CASES = [
    ((2, 3, 11, 9), (3, 2), (1, 1), (1, 1), (2, 3), False),
    ((2, 3, 11, 9), (3, 2), (2, 3), (1, 1), (2, 3), True),
    ((1, 4, 8, 8), (2, 2), (2, 2), (0, 0), (2, 2), False),   # the 2x2 s2 shape of a fast path
    ((2, 2, 9, 10), (3, 3), (2, 2), (1, 1), (2, 1), True),   # the 3x3 s2 p1 shape of a fast path
    ((3, 7, 6), (2, 3), (1, 2), (1, 0), (1, 2), True),       # 3-D
    ((1, 1, 3, 3), (2, 2), (2, 2), (1, 1), (5, 5), True),    # a window with no cell in range
    ((1, 2, 6, 7), (3, 3), (2, 2), (1, 1), (1, 1), False),   # dilation 1 through the V3 path
]
IDS = ["d23", "d23_ceil", "k2s2d2", "k3s2p1d21", "3d", "empty_window", "d1"]


def to_nhwc(a):
    """NCHW (or CHW) -> NHWC (or HWC), contiguous: the memory order of an NHWC tensor."""
    return np.ascontiguousarray(np.moveaxis(a, -3, -1))


def from_nhwc(a):
    return np.moveaxis(a, -1, -3)


def bits(a):
    return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])


def torch_pool(x32, kernel, stride, padding, dilation, ceil_mode):
    """PyTorch's forward on the fp32 widening (exact for fp16/bf16) and its indices."""
    return torch.nn.functional.max_pool2d(torch.from_numpy(x32), kernel, stride, padding, dilation,
                                          ceil_mode=ceil_mode, return_indices=True)


def run_forward(x, attrs, ceil_mode, out_shape, index_dtype, nhwc):
    fmt = "NHWC" if nhwc else None
    xin = to_nhwc(x) if nhwc else x
    oshape = to_nhwc(np.empty(out_shape, np.int8)).shape if nhwc else out_shape
    with Tensor.from_numpy(xin, format=fmt) as x_t, Tensor.empty(oshape, x.dtype, format=fmt, fill=7) as out_t, \
            Tensor.empty(oshape, index_dtype, format=fmt, fill=-7) as idx_t:
        pyaclnn.run_op("MaxPool2dWithIndices", x_t, *attrs, ceil_mode, out_t, idx_t)
        out, idx = out_t.numpy(), idx_t.numpy()
    return (from_nhwc(out), from_nhwc(idx)) if nhwc else (out, idx)


def run_backward(grad, x, idx, attrs, ceil_mode, nhwc):
    fmt = "NHWC" if nhwc else None
    conv = to_nhwc if nhwc else (lambda a: a)
    with Tensor.from_numpy(conv(grad), format=fmt) as g_t, Tensor.from_numpy(conv(x), format=fmt) as x_t, \
            Tensor.from_numpy(conv(idx), format=fmt) as i_t, \
            Tensor.empty(conv(x).shape, x.dtype, format=fmt, fill=7) as gi_t:
        pyaclnn.run_op("MaxPool2dWithIndicesBackward", g_t, x_t, i_t, *attrs, ceil_mode, gi_t)
        out = gi_t.numpy()
    return from_nhwc(out) if nhwc else out


@pytest.mark.parametrize("nhwc", [False, True], ids=["nchw", "nhwc"])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16], ids=["f32", "f16", "bf16"])
@pytest.mark.parametrize("shape,kernel,stride,padding,dilation,ceil_mode", CASES, ids=IDS)
def test_950_forward_matches_torch(soc, shape, kernel, stride, padding, dilation, ceil_mode, dtype, index_dtype,
                                   nhwc):
    soc("Ascend950")
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape).astype(dtype)
    x.flat[::5] = x.flat[1]  # ties: the first maximum in window order wins
    ref, ref_idx = torch_pool(x.astype(np.float32), kernel, stride, padding, dilation, ceil_mode)
    attrs = (list(kernel), list(stride), list(padding), list(dilation))
    out, idx = run_forward(x, attrs, ceil_mode, tuple(ref.shape), index_dtype, nhwc)
    np.testing.assert_array_equal(bits(out), bits(ref.numpy().astype(dtype)))
    np.testing.assert_array_equal(idx, ref_idx.numpy().astype(index_dtype))


@pytest.mark.parametrize("nhwc", [False, True], ids=["nchw", "nhwc"])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16], ids=["f32", "f16", "bf16"])
@pytest.mark.parametrize("shape,kernel,stride,padding,dilation,ceil_mode", CASES[:5] + CASES[6:],
                         ids=IDS[:5] + IDS[6:])
def test_950_backward_matches_torch(soc, shape, kernel, stride, padding, dilation, ceil_mode, dtype, index_dtype,
                                    nhwc):
    """FLOAT16/BF16 gradients: PyTorch's fp32 backward of the widened gradient, rounded once to
    the dtype (what the V3 grad kernels do: fp32 accumulation, one CAST_RINT)."""
    soc("Ascend950")
    rng = np.random.default_rng(5)
    x = rng.standard_normal(shape).astype(dtype)
    x32 = x.astype(np.float32)
    ref, ref_idx = torch_pool(x32, kernel, stride, padding, dilation, ceil_mode)
    grad = rng.standard_normal(tuple(ref.shape)).astype(dtype)
    attrs = (list(kernel), list(stride), list(padding), list(dilation))
    want = torch.ops.aten.max_pool2d_with_indices_backward(torch.from_numpy(grad.astype(np.float32)),
                                                           torch.from_numpy(x32), *attrs, ceil_mode, ref_idx)
    got = run_backward(grad, x, ref_idx.numpy().astype(index_dtype), attrs, ceil_mode, nhwc)
    np.testing.assert_array_equal(bits(got), bits(want.numpy().astype(dtype)))


@pytest.mark.parametrize("nhwc", [False, True], ids=["nchw", "nhwc"])
def test_950_nan_rule_matches_torch(soc, nhwc):
    """Strict '>' with NaN taken: the last NaN of a window wins (CANN's V3 SIMT kernel, PyTorch)."""
    soc("Ascend950")
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 3, 10, 10)).astype(np.float32)
    x[rng.random(x.shape) < 0.15] = np.nan
    attrs = ([3, 3], [1, 2], [1, 1], [2, 2])
    ref, ref_idx = torch_pool(x, *attrs, False)
    out, idx = run_forward(x, attrs, False, tuple(ref.shape), np.int64, nhwc)
    np.testing.assert_array_equal(idx, ref_idx.numpy())
    np.testing.assert_array_equal(np.isnan(out), np.isnan(ref.numpy()))
    assert np.isnan(out).any() and (~np.isnan(out)).any()


def test_950_rejections(soc):
    soc("Ascend950")
    x = np.zeros((1, 2, 6, 6), np.float32)
    for dil in ([0, 1], [1, -2]):
        with Tensor.from_numpy(x) as x_t, Tensor.empty((1, 2, 3, 3), np.float32) as o_t, \
                Tensor.empty((1, 2, 3, 3), np.int32) as i_t, pytest.raises(pyaclnn.AclnnError) as err:
            pyaclnn.run_op("MaxPool2dWithIndices", x_t, [2, 2], [2, 2], [0, 0], dil, False, o_t, i_t)
        assert err.value.code == INVALID and "dilation should be greater than 0" in err.value.message
        with Tensor.from_numpy(x) as x_t, Tensor.empty((1, 2, 3, 3), np.float32) as g_t, \
                Tensor.empty((1, 2, 3, 3), np.int32) as i_t, Tensor.empty(x.shape, np.float32) as gi_t, \
                pytest.raises(pyaclnn.AclnnError) as err:
            pyaclnn.run_op("MaxPool2dWithIndicesBackward", g_t, x_t, i_t, [2, 2], [2, 2], [0, 0], dil, False, gi_t)
        assert err.value.code == INVALID and "dilation should be greater than 0" in err.value.message
    # INT8 indices are not in Ascend950's backward list
    with Tensor.from_numpy(x) as x_t, Tensor.empty((1, 2, 3, 3), np.float32) as g_t, \
            Tensor.empty((1, 2, 3, 3), np.int8) as i_t, Tensor.empty(x.shape, np.float32) as gi_t, \
            pytest.raises(pyaclnn.AclnnError) as err:
        pyaclnn.run_op("MaxPool2dWithIndicesBackward", g_t, x_t, i_t, [2, 2], [2, 2], [0, 0], [1, 1], False, gi_t)
    assert err.value.code == INVALID and "INT32, INT64" in err.value.message
    # a private format: the 950 message names NHWC
    with Tensor.from_numpy(x, format="NC1HWC0") as x_t, Tensor.empty((1, 2, 3, 3), np.float32, "NC1HWC0") as g_t, \
            Tensor.empty((1, 2, 3, 3), np.int32) as i_t, Tensor.empty(x.shape, np.float32, "NC1HWC0") as gi_t, \
            pytest.raises(pyaclnn.AclnnError) as err:
        pyaclnn.run_op("MaxPool2dWithIndicesBackward", g_t, x_t, i_t, [2, 2], [2, 2], [0, 0], [1, 1], False, gi_t)
    assert err.value.code == INVALID and "ND, NCHW or NHWC" in err.value.message
    # an NHWC self wants an NHWC-shaped out: [N, Ho, Wo, C]
    with Tensor.from_numpy(to_nhwc(x), format="NHWC") as x_t, \
            Tensor.empty((1, 2, 3, 3), np.float32, "NHWC") as o_t, Tensor.empty((1, 2, 3, 3), np.int32) as i_t, \
            pytest.raises(pyaclnn.AclnnError) as err:
        pyaclnn.run_op("MaxPool2dWithIndices", x_t, [2, 2], [2, 2], [0, 0], [1, 1], False, o_t, i_t)
    assert err.value.code == INVALID and "[1, 3, 3, 2]" in err.value.message


def test_950_forward_shape_inference_formats(soc):
    """MaxPoolWithArgmaxV3's shape inference takes a 4-D x in ND, NCHW or NHWC only: another
    public format fails after the checks (561103, CANN's NULL-result code); 3-D input and empty
    tensors never get there; A2/A3 reads it as NCHW."""
    x = np.arange(2 * 6 * 6, dtype=np.float32).reshape(1, 2, 6, 6)
    ref, ref_idx = torch_pool(x, (2, 2), (2, 2), (0, 0), (1, 1), False)
    for name, fails in (("Ascend950", True), ("Ascend910B", False)):
        soc(name)
        with Tensor.from_numpy(x, format="HWCN") as x_t, Tensor.empty((1, 2, 3, 3), np.float32, "HWCN") as o_t, \
                Tensor.empty((1, 2, 3, 3), np.int32) as i_t:
            if fails:
                with pytest.raises(pyaclnn.AclnnError) as err:
                    pyaclnn.run_op("MaxPool2dWithIndices", x_t, [2, 2], [2, 2], [0, 0], [1, 1], False, o_t, i_t)
                assert err.value.code == 561103 and "ND, NCHW or NHWC" in err.value.message
            else:
                pyaclnn.run_op("MaxPool2dWithIndices", x_t, [2, 2], [2, 2], [0, 0], [1, 1], False, o_t, i_t)
                np.testing.assert_array_equal(o_t.numpy(), ref.numpy())
    soc("Ascend950")
    with Tensor.from_numpy(x[0], format="HWCN") as x_t, Tensor.empty((2, 3, 3), np.float32, "HWCN") as o_t, \
            Tensor.empty((2, 3, 3), np.int64) as i_t:
        pyaclnn.run_op("MaxPool2dWithIndices", x_t, [2, 2], [2, 2], [0, 0], [1, 1], False, o_t, i_t)
        np.testing.assert_array_equal(i_t.numpy(), ref_idx.numpy()[0])
    with Tensor.empty((0, 2, 6, 6), np.float32, "HWCN") as x_t, Tensor.empty((0, 2, 3, 3), np.float32, "HWCN") as o_t, \
            Tensor.empty((0, 2, 3, 3), np.int32) as i_t:
        pyaclnn.run_op("MaxPool2dWithIndices", x_t, [2, 2], [2, 2], [0, 0], [1, 1], False, o_t, i_t)


@pytest.mark.parametrize("name", ["Ascend910B", "Ascend910_93"])
def test_a2_keeps_its_checks(soc, name):
    """A2/A3: dilation must be 1, the backward's indices are INT32 or INT8 (op_api's list) and the
    private-format message names ND and NCHW only."""
    soc(name)
    x = np.zeros((1, 2, 6, 6), np.float32)
    with Tensor.from_numpy(x) as x_t, Tensor.empty((1, 2, 2, 2), np.float32) as o_t, \
            Tensor.empty((1, 2, 2, 2), np.int32) as i_t, pytest.raises(pyaclnn.AclnnError) as err:
        pyaclnn.run_op("MaxPool2dWithIndices", x_t, [2, 2], [2, 2], [0, 0], [2, 2], False, o_t, i_t)
    assert err.value.code == INVALID and "dilation only supports 1" in err.value.message
    for dil, idt, word in (([2, 1], np.int32, "dilation only supports 1"), ([1, 1], np.int64, "[INT32, INT8]")):
        with Tensor.from_numpy(x) as x_t, Tensor.empty((1, 2, 3, 3), np.float32) as g_t, \
                Tensor.empty((1, 2, 3, 3), idt) as i_t, Tensor.empty(x.shape, np.float32) as gi_t, \
                pytest.raises(pyaclnn.AclnnError) as err:
            pyaclnn.run_op("MaxPool2dWithIndicesBackward", g_t, x_t, i_t, [2, 2], [2, 2], [0, 0], dil, False, gi_t)
        assert err.value.code == INVALID and word in err.value.message, err.value.message
    with Tensor.from_numpy(x, format="NC1HWC0") as x_t, Tensor.empty((1, 2, 3, 3), np.float32, "NC1HWC0") as g_t, \
            Tensor.empty((1, 2, 3, 3), np.int32) as i_t, Tensor.empty(x.shape, np.float32, "NC1HWC0") as gi_t, \
            pytest.raises(pyaclnn.AclnnError) as err:
        pyaclnn.run_op("MaxPool2dWithIndicesBackward", g_t, x_t, i_t, [2, 2], [2, 2], [0, 0], [1, 1], False, gi_t)
    assert err.value.code == INVALID and "ND or NCHW" in err.value.message and "NHWC" not in err.value.message


def test_a2_int8_indices_fail_at_launch(soc):
    """INT8 passes A2's op_api list, but MaxPool3DGradWithArgmax has int32 binaries only: phase 1
    succeeds, the launch fails with ACLNN_ERR_INNER and gradInput is not written."""
    soc("Ascend910B")
    x = np.arange(36, dtype=np.float32).reshape(1, 1, 6, 6)
    with Tensor.from_numpy(x) as x_t, Tensor.from_numpy(np.ones((1, 1, 3, 3), np.float32)) as g_t, \
            Tensor.from_numpy(np.zeros((1, 1, 3, 3), np.int8)) as i_t, \
            Tensor.empty(x.shape, np.float32, fill=7) as gi_t:
        ws, ex = pyaclnn.aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(g_t, x_t, i_t, [2, 2], [2, 2], [0, 0],
                                                                           [1, 1], False, gi_t)
        pyaclnn.aclnnMaxPool2dWithIndicesBackward(pyaclnn.DeviceBuffer(ws) if ws else None, ws, ex)
        with pytest.raises(pyaclnn.AclError) as err:  # the stream reports the failed launch
            pyaclnn.synchronize()
        assert err.value.code == INNER and "MaxPool3DGradWithArgmax" in err.value.message
        assert (gi_t.numpy() == 7).all()


def test_a2_reads_an_nhwc_tensor_as_nchw(soc):
    """Only Ascend950 pools NHWC: the default product keeps reading the dims as [N, C, H, W]."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 3, 4, 6)).astype(np.float32)
    ref, ref_idx = torch_pool(x, (2, 2), (2, 2), (0, 0), (1, 1), False)
    with Tensor.from_numpy(x, format="NHWC") as x_t, Tensor.empty(tuple(ref.shape), np.float32, "NHWC") as o_t, \
            Tensor.empty(tuple(ref.shape), np.int32) as i_t:
        pyaclnn.run_op("MaxPool2dWithIndices", x_t, [2, 2], [2, 2], [0, 0], [1, 1], False, o_t, i_t)
        np.testing.assert_array_equal(o_t.numpy(), ref.numpy())
        np.testing.assert_array_equal(i_t.numpy(), ref_idx.numpy())


@pytest.mark.parametrize("nhwc", [False, True], ids=["nchw", "nhwc"])
def test_950_bad_index_is_reported_not_followed(soc, nhwc):
    """A hand-made index outside the plane is skipped (nothing outside gradInput is touched) and
    the launch reports it, as on A2; the rest of the gradient is still right."""
    soc("Ascend950")
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    attrs = ([2, 2], [2, 2], [0, 0], [2, 2])
    ref, ref_idx = torch_pool(x, *attrs, True)
    idx = ref_idx.numpy().copy()
    idx[1, 2, 0, 1] = 36 + 5
    grad = rng.standard_normal(tuple(ref.shape)).astype(np.float32)
    keep = grad.copy()
    keep[1, 2, 0, 1] = 0
    want = torch.ops.aten.max_pool2d_with_indices_backward(torch.from_numpy(keep), torch.from_numpy(x), *attrs, True,
                                                           ref_idx)
    with pytest.raises(pyaclnn.AclError) as err:
        run_backward(grad, x, idx, attrs, True, nhwc)
    assert err.value.code == AICORE and "41" in err.value.message and "n=1, c=2, oh=0, ow=1" in err.value.message
    # the same call with the gradient written: check the planes on a fresh run of the kernel
    fmt = "NHWC" if nhwc else None
    conv = to_nhwc if nhwc else (lambda a: a)
    with Tensor.from_numpy(conv(grad), format=fmt) as g_t, Tensor.from_numpy(conv(x), format=fmt) as x_t, \
            Tensor.from_numpy(conv(idx), format=fmt) as i_t, Tensor.empty(conv(x).shape, np.float32, fmt) as gi_t:
        with pytest.raises(pyaclnn.AclError):
            pyaclnn.run_op("MaxPool2dWithIndicesBackward", g_t, x_t, i_t, *attrs, True, gi_t)
        got = from_nhwc(gi_t.numpy()) if nhwc else gi_t.numpy()
    np.testing.assert_array_equal(got, want.numpy())


PATH_SCRIPT = r"""
import numpy as np
import pyaclnn
from pyaclnn import Tensor
pyaclnn.set_soc_version("Ascend950")
x = np.random.default_rng(1).standard_normal((2, 3, 8, 8)).astype(np.float32)
xh = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
for fmt, xin, oshape in ((None, x, (2, 3, 3, 3)), ("NHWC", xh, (2, 3, 3, 3))):
    with Tensor.from_numpy(xin, format=fmt) as x_t, Tensor.empty(oshape, np.float32, fmt) as o_t, \
            Tensor.empty(oshape, np.int32, fmt) as i_t, Tensor.empty(xin.shape, np.float32, fmt) as gi_t:
        pyaclnn.run_op("MaxPool2dWithIndices", x_t, [2, 2], [2, 2], [0, 0], [2, 2], False, o_t, i_t)
        pyaclnn.run_op("MaxPool2dWithIndicesBackward", o_t, x_t, i_t, [2, 2], [2, 2], [0, 0], [2, 2], False, gi_t)
"""


def test_950_dilation_and_nhwc_take_the_general_paths():
    """Dilation 2 with the 2x2 stride-2 shape of the tiled fast path: the forward runs the general
    kernel and the backward the portable scatter (NCHW) or its NHWC form, on the best tier."""
    out = run_script(PATH_SCRIPT, Run("best", threads=2, extra=(("ASCEND_GLOBAL_LOG_LEVEL", "1"),
                                                                ("ASCEND_SLOG_PRINT_TO_STDOUT", "1"))))
    paths = re.findall(r"\[(aclnnMaxPool2dWithIndices\w*)\] exec .* kernel=(\S+)", out)
    assert paths == [("aclnnMaxPool2dWithIndices", "max_pool_portable_general"),
                     ("aclnnMaxPool2dWithIndicesBackward", "max_pool_bw_portable_scatter"),
                     ("aclnnMaxPool2dWithIndices", "max_pool_portable_general"),
                     ("aclnnMaxPool2dWithIndicesBackward", "max_pool_bw_portable_scatter_nhwc")], out


def test_functional_passes_dilation_through(soc):
    """pyaclnn.functional.max_pool2d_with_indices[_backward]: dilation reaches the operator."""
    import pyaclnn.functional as F
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 3, 12, 10)).astype(np.float32)
    ref, ref_idx = torch_pool(x, (3, 2), (2, 1), (1, 1), (2, 3), True)
    grad = rng.standard_normal(tuple(ref.shape)).astype(np.float32)
    want = torch.ops.aten.max_pool2d_with_indices_backward(torch.from_numpy(grad), torch.from_numpy(x), [3, 2],
                                                           [2, 1], [1, 1], [2, 3], True, ref_idx)
    with pytest.raises(pyaclnn.AclnnError) as err:  # A2: dilation must be 1
        F.max_pool2d_with_indices(x, (3, 2), (2, 1), (1, 1), (2, 3), True)
    assert err.value.code == INVALID
    soc("Ascend950")
    for index_dtype in (np.int32, np.int64):
        out, idx = F.max_pool2d_with_indices(x, (3, 2), (2, 1), (1, 1), (2, 3), True, indices_dtype=index_dtype)
        assert idx.dtype == index_dtype
        np.testing.assert_array_equal(out, ref.numpy())
        np.testing.assert_array_equal(idx, ref_idx.numpy())
        got = F.max_pool2d_with_indices_backward(grad, x, idx, (3, 2), (2, 1), (1, 1), (2, 3), True)
        np.testing.assert_array_equal(got, want.numpy())
    soc(None)  # A2 round trip: int32 indices by default, dilation 1
    ref1, ref1_idx = torch_pool(x, (2, 2), (2, 2), (0, 0), (1, 1), False)
    out, idx = F.max_pool2d_with_indices(x, 2)
    np.testing.assert_array_equal(idx, ref1_idx.numpy().astype(np.int32))
    got = F.max_pool2d_with_indices_backward(np.ones_like(out), x, idx, 2)
    want1 = torch.ops.aten.max_pool2d_with_indices_backward(torch.ones_like(ref1), torch.from_numpy(x), [2, 2],
                                                            [2, 2], [0, 0], [1, 1], False, ref1_idx)
    np.testing.assert_array_equal(got, want1.numpy())
