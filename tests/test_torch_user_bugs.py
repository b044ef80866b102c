"""What a PyTorch user meets in an afternoon with pyaclnn.functional: mixed numpy/torch inputs,
byte order, argument types and the exception classes, autograd of every differentiable operator,
products per thread, empty batches and scale factors, memory formats, resizable results and the
size of what a max-pool forward keeps for its backward.

Expected values come from PyTorch CPU (torch.nn.functional / aten) or NumPy, never from pyaclnn.
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import pyaclnn
import pyaclnn.functional as F


def _data(*shape, seed=1, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


# ---- exceptions and argument types -------------------------------------------------------------
def test_exception_classes_derive_from_the_python_builtins():
    assert issubclass(pyaclnn.ParamInvalidError, ValueError)
    assert issubclass(pyaclnn.ParamNullptrError, ValueError)
    assert issubclass(pyaclnn.RuntimeError_, RuntimeError)
    assert issubclass(pyaclnn.InnerError, RuntimeError)
    assert issubclass(pyaclnn.AclParamError, ValueError)
    for cls in (pyaclnn.AclResourceError, pyaclnn.AclStateError, pyaclnn.AclInternalError):
        assert issubclass(cls, RuntimeError)
    # the names and attributes stay
    with pytest.raises(ValueError) as info:
        F.replication_pad2d(np.zeros((1, 1, 3, 3), np.float32), (1, 1, 1))
    error = info.value
    assert isinstance(error, pyaclnn.ParamInvalidError)
    assert error.code == 161002 and error.name == "ACLNN_ERR_PARAM_INVALID"
    assert "padding" in error.message and error.func.startswith("aclnnReplicationPad2d")


@pytest.mark.parametrize("call, name", [
    (lambda x: F.replication_pad2d(x, (1.5, 1, 1, 1)), "padding"),
    (lambda x: F.replication_pad2d(x, (1.0, 1, 1, 1)), "padding"),
    (lambda x: F.max_pool2d_with_mask(x, 2.0), "kernel_size"),
    (lambda x: F.max_pool2d_with_mask(x, 2, stride=(1, 1.0)), "stride"),
    (lambda x: F.max_pool2d_with_indices(x, 3, 2, padding=0.5), "padding"),
    (lambda x: F.im2col(x, 2, dilation=1.0), "dilation"),
    (lambda x: F.upsample_nearest_exact1d(x[0], 4.0), "output_size"),
    (lambda x: F.im2col(x, "2"), "kernel_size"),
])
def test_float_attributes_are_a_type_error_naming_the_argument(call, name):
    x = _data(1, 2, 6, 6)
    with pytest.raises(TypeError, match=name):
        call(x)


def test_integer_attributes_of_any_integer_type_are_taken():
    x = _data(1, 2, 6, 6)
    want = TF.pad(x, (1, 2, 0, 1), mode="replicate")
    for padding in ([np.int64(1), 2, 0, 1], torch.tensor([1, 2, 0, 1]), np.array([1, 2, 0, 1])):
        assert torch.equal(F.replication_pad2d(x, padding), want)
    assert torch.equal(F.max_pool2d_with_mask(x, np.int32(2))[0], TF.max_pool2d(x, 2))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_prelu_takes_a_python_number_as_one_weight_of_x_dtype(dtype):
    x = _data(2, 3, 4, 4, dtype=dtype)
    got = F.prelu(x, 0.25)
    assert got.dtype == dtype
    assert torch.equal(got, TF.prelu(x, torch.tensor([0.25], dtype=dtype)))
    xn = x.float().numpy()
    np.testing.assert_array_equal(F.prelu(xn, -1), TF.prelu(x.float(), torch.tensor([-1.0])).numpy())


def test_prelu_scalar_weight_with_autograd():
    x = _data(2, 3, 4, 4)
    a, b = x.clone().requires_grad_(), x.clone().requires_grad_()
    F.prelu(a, 0.25).sum().backward()
    TF.prelu(b, torch.tensor([0.25])).sum().backward()
    assert torch.equal(a.grad, b.grad)


# ---- mixed numpy / torch inputs ----------------------------------------------------------------
def test_prelu_with_grad_and_a_numpy_weight():
    x = _data(2, 3, 5, 5)
    w = np.array([0.1, -0.3, 0.7], np.float32)
    a, b = x.clone().requires_grad_(), x.clone().requires_grad_()
    y = F.prelu(a, w)
    assert isinstance(y, torch.Tensor) and y.grad_fn is not None
    y.sum().backward()
    TF.prelu(b, torch.from_numpy(w)).sum().backward()
    torch.testing.assert_close(a.grad, b.grad, rtol=0, atol=0)


def test_prelu_with_a_numpy_x_and_a_weight_that_requires_grad():
    x = _data(2, 3, 5, 5)
    wa = torch.tensor([0.1, -0.3, 0.7], requires_grad=True)
    wb = wa.detach().clone().requires_grad_()
    y = F.prelu(x.numpy(), wa)
    assert isinstance(y, torch.Tensor)
    y.sum().backward()
    TF.prelu(x, wb).sum().backward()
    torch.testing.assert_close(wa.grad, wb.grad, rtol=1e-5, atol=1e-5)


def test_backward_functions_take_mixed_inputs():
    x = _data(2, 3, 5, 5)
    g = _data(2, 3, 7, 8, seed=2)
    got = F.replication_pad2d_backward(g, x.numpy(), (1, 2, 1, 1))
    want = torch.ops.aten.replication_pad2d_backward(g, x, [1, 2, 1, 1])
    assert isinstance(got, torch.Tensor) and torch.equal(got, want)
    readonly = g.numpy().copy()
    readonly.flags.writeable = False
    got = F.replication_pad2d_backward(readonly[:, :, ::-1][:, :, ::-1], x, (1, 2, 1, 1))
    assert torch.equal(got, want)


# ---- byte order ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [">f4", ">f8", ">i4", ">f2"])
def test_big_endian_arrays_are_converted(dtype):
    x = (np.arange(24).reshape(1, 2, 3, 4) - 7).astype(dtype)
    got = F.replication_pad2d(x, (1, 0, 2, 1))
    want = np.pad(x.astype(x.dtype.newbyteorder("=")), [(0, 0), (0, 0), (2, 1), (1, 0)], mode="edge")
    assert got.dtype.isnative
    np.testing.assert_array_equal(got, want)
    # a strided big-endian view, and the two-phase layer's Tensor.from_numpy
    np.testing.assert_array_equal(F.replication_pad2d(x[:, :, :, ::2], (1, 1, 1, 1)),
                                  np.pad(want[:, :, 2:5, 1::2], [(0, 0), (0, 0), (1, 1), (1, 1)],
                                         mode="edge"))
    with pyaclnn.Tensor.from_numpy(x) as t:
        np.testing.assert_array_equal(t.numpy(), x.astype(x.dtype.newbyteorder("=")))


def test_big_endian_weight_is_converted():
    x = np.linspace(-2, 2, 2 * 3 * 4).reshape(2, 3, 4).astype(np.float32)
    w = np.array([0.5, -1.0, 2.0], ">f4")
    want = np.where(x > 0, x, w.astype(np.float32).reshape(1, 3, 1) * x)
    np.testing.assert_array_equal(F.prelu(x, w), want)


# ---- upsample: empty batches and scale factors -------------------------------------------------
@pytest.mark.parametrize("kind", ["torch", "numpy"])
def test_upsample_empty_batch_is_answered_like_torch(kind):
    x = torch.randn(0, 3, 5)
    want = TF.interpolate(x, size=7, mode="nearest-exact")
    got = F.upsample_nearest_exact1d(x if kind == "torch" else x.numpy(), 7)
    assert tuple(got.shape) == tuple(want.shape) == (0, 3, 7)
    assert isinstance(got, torch.Tensor) == (kind == "torch")
    g = F.upsample_nearest_exact1d_backward(torch.randn(0, 3, 7), 7, (0, 3, 5))
    assert tuple(g.shape) == (0, 3, 5)
    a = x.clone().requires_grad_()
    F.upsample_nearest_exact1d(a, 7).sum().backward()
    assert a.grad.shape == (0, 3, 5)
    with pytest.raises(pyaclnn.ParamInvalidError):   # torch refuses C = 0 too
        F.upsample_nearest_exact1d(torch.randn(0, 0, 5), 7)


@pytest.mark.parametrize("length, scale", [(5, 2.5), (7, 1.7), (9, 0.5), (10, 3.0), (3, 1.3)])
def test_upsample_from_scales_alone_follows_torch_scale_factor(length, scale):
    x = _data(2, 3, length)
    want = TF.interpolate(x, scale_factor=scale, mode="nearest-exact")
    got = F.upsample_nearest_exact1d(x, None, scales=scale)
    assert torch.equal(got, want)
    a, b = x.clone().requires_grad_(), x.clone().requires_grad_()
    grad = _data(*want.shape, seed=3)
    F.upsample_nearest_exact1d(a, None, scales=scale).backward(grad)
    TF.interpolate(b, scale_factor=scale, mode="nearest-exact").backward(grad)
    assert torch.equal(a.grad, b.grad)
    got = F.upsample_nearest_exact1d_backward(grad, None, x.shape, scales=scale)
    assert torch.equal(got, b.grad)
    # recompute_scale_factor=True is the size alone
    want = TF.interpolate(x, scale_factor=scale, mode="nearest-exact", recompute_scale_factor=True)
    assert torch.equal(F.upsample_nearest_exact1d(x, int(length * scale)), want)
