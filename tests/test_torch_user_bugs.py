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
import reference as ref


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
    # the default product (Atlas A2) sums in its kernel's order (docs/precision.md)
    want = torch.from_numpy(ref.replication_pad2d_backward_a2(g.numpy(), tuple(x.shape), (1, 2, 1, 1)))
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


# ---- autograd of every differentiable operator -------------------------------------------------
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("indices_dtype", [None, np.int64])
def test_max_pool2d_with_indices_carries_the_conv_gradient(dtype, indices_dtype):
    conv_a = torch.nn.Conv2d(3, 4, 3, padding=1).to(dtype)
    conv_b = torch.nn.Conv2d(3, 4, 3, padding=1).to(dtype)
    conv_b.load_state_dict(conv_a.state_dict())
    x = _data(2, 3, 9, 9, dtype=dtype)
    out_a, idx_a = F.max_pool2d_with_indices(conv_a(x), 3, 2, 1, indices_dtype=indices_dtype)
    out_b, idx_b = TF.max_pool2d_with_indices(conv_b(x), 3, 2, 1)
    assert out_a.grad_fn is not None and not idx_a.requires_grad
    assert torch.equal(out_a, out_b) and torch.equal(idx_a.long(), idx_b)
    assert idx_a.dtype == (torch.int64 if indices_dtype else torch.int32)
    grad = _data(*out_b.shape, seed=7, dtype=dtype)
    out_a.backward(grad)
    out_b.backward(grad)
    tol = {torch.float32: 1e-5, torch.float16: 1e-2, torch.bfloat16: 5e-2}[dtype]
    torch.testing.assert_close(conv_a.weight.grad, conv_b.weight.grad, rtol=tol, atol=tol)
    torch.testing.assert_close(conv_a.bias.grad, conv_b.bias.grad, rtol=tol, atol=tol)


@pytest.mark.filterwarnings("ignore:Input #")
def test_max_pool2d_with_indices_gradcheck():
    x = torch.randperm(2 * 3 * 7 * 7, generator=torch.Generator().manual_seed(3)).float()
    x = (x / 10).reshape(2, 3, 7, 7).requires_grad_()
    assert torch.autograd.gradcheck(lambda t: F.max_pool2d_with_indices(t, 3, 2, 1)[0], (x,),
                                    eps=1e-2, atol=1e-3, rtol=1e-3)


BACKWARD_CALLS = {
    "replication_pad2d_backward": lambda g: F.replication_pad2d_backward(
        g, torch.zeros(1, 2, 4, 4), (1, 1, 1, 1)),
    "upsample_nearest_exact1d_backward": lambda g: F.upsample_nearest_exact1d_backward(
        g.reshape(1, 6, 12), 12, (1, 6, 6)),
    "max_pool2d_with_mask_backward": lambda g: F.max_pool2d_with_mask_backward(
        g, torch.zeros(1, 2, 12, 12), *reversed(F.max_pool2d_with_mask(torch.zeros(1, 2, 12, 12), 2)[1:]), 2),
    "max_pool2d_with_indices_backward": lambda g: F.max_pool2d_with_indices_backward(
        g, torch.zeros(1, 2, 12, 12), torch.zeros(1, 2, 6, 6, dtype=torch.int32), 2),
    "im2col_backward": lambda g: F.im2col_backward(g.reshape(1, 8, 9), (4, 4), 2),
    "prelu_backward": lambda g: F.prelu_backward(g, torch.ones(1, 2, 6, 6), torch.ones(2)),
}


@pytest.mark.parametrize("name", sorted(BACKWARD_CALLS))
def test_backward_functions_are_differentiable(name):
    # Every gradient element lands in exactly one place of the result (x > 0 for PReLU, no
    # padding for col2im, one argmax per window), so d sum(result) / d g is all ones, as
    # torch's own double backwards give; the values of the second derivatives are checked by
    # tests/test_torch_ops.py's gradgradcheck.  The mask pooling and PReLU backwards raised
    # "... is not differentiable" here before they had their double backward.
    g = torch.ones(1, 2, 6, 6, requires_grad=True)
    result = BACKWARD_CALLS[name](g)
    out = result[0] if isinstance(result, tuple) else result
    out.sum().backward()
    assert torch.equal(g.grad, torch.ones_like(g))
    with torch.no_grad():
        BACKWARD_CALLS[name](g)
    BACKWARD_CALLS[name](g.detach())


# ---- products: per thread, and a backward on its forward's product -----------------------------
def test_soc_context_manager_is_per_thread_and_nests(soc):
    assert pyaclnn.soc_name() == "Ascend910B3"
    with pyaclnn.soc("Ascend910"):
        assert pyaclnn.soc_name() == "Ascend910A"
        assert pyaclnn.mask.product_layout() == "v1"
        with pyaclnn.soc("Ascend950"):
            assert pyaclnn.soc_name() == "Ascend950PR_9599"
        assert pyaclnn.soc_name() == "Ascend910A"
        soc("Ascend310P")                       # the process's selection does not override ours
        assert pyaclnn.soc_name() == "Ascend910A"
        with pyaclnn.soc(None):
            assert pyaclnn.soc_name() == "Ascend310P3"
    assert pyaclnn.soc_name() == "Ascend310P3"
    with pytest.raises(pyaclnn.ParamInvalidError, match="Ascend911"):
        with pyaclnn.soc("Ascend911"):
            pass
    soc(None)
    assert pyaclnn.soc_name() == "Ascend910B3"


def test_one_thread_switching_products_does_not_disturb_others():
    import threading
    x = _data(2, 16, 12, 12)
    want_out, want_idx = TF.max_pool2d_with_indices(x, 3, 2, 1)
    failures, done = [], threading.Event()

    def switcher():
        try:
            while not done.is_set():
                with pyaclnn.soc("Ascend950"):          # only Ascend950 takes a dilation
                    out, _ = F.max_pool2d_with_indices(x, 3, 1, 1, dilation=2)
                    assert torch.equal(out, TF.max_pool2d(x, 3, 1, 1, dilation=2))
                with pyaclnn.soc("Ascend910"):
                    _, mask = F.max_pool2d_with_mask(x, 3, 2, 1)
                    got = pyaclnn.indices_from_mask(mask.numpy(), want_out.shape, x.shape, 2,
                                                    kernel_size=3, padding=1)
                    assert np.array_equal(got, want_idx.numpy())
        except Exception as exc:   # noqa: BLE001 - reported below
            failures.append(("switcher", repr(exc)))

    def worker():
        for _ in range(200):
            try:
                out, mask = F.max_pool2d_with_mask(x, 3, 2, 1)
                assert torch.equal(out, want_out)
                assert np.array_equal(pyaclnn.indices_from_mask(mask.numpy(), out.shape), want_idx.numpy())
            except Exception as exc:   # noqa: BLE001 - counted
                failures.append(("worker", repr(exc)))

    threads = [threading.Thread(target=worker) for _ in range(3)]
    switching = threading.Thread(target=switcher)
    switching.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    switching.join()
    assert failures == []


def test_backward_runs_on_the_forward_product(soc):
    # values exact in fp16 (Ascend910 computes fp32 as fp16) and distinct (no ties); gradients
    # multiples of 1/4 below 8, so that their sums are exact in fp16 too
    data = torch.randperm(2 * 16 * 8 * 8, generator=torch.Generator().manual_seed(9)).float() / 8
    data = data.reshape(2, 16, 8, 8)
    grad = (torch.arange(2 * 16 * 4 * 4) % 61 - 30).float().reshape(2, 16, 4, 4) / 4
    cases = [((2, 2), (2, 2, 0)), ((3, 2, 1), (3, 2, 1))]
    for forward, backward in (("Ascend910B", "Ascend910"), ("Ascend910", "Ascend910B"),
                              ("Ascend910_93", "Ascend310P"), ("Ascend910", "Ascend950")):
        for ours, theirs in cases:
            soc(forward)
            a = data.clone().requires_grad_()
            out = F.max_pool2d_with_mask(a, *ours)[0]
            soc(backward)
            out.backward(grad)
            c = data.clone().requires_grad_()
            TF.max_pool2d(c, *theirs).backward(grad)
            assert torch.equal(a.grad, c.grad), (forward, backward, ours)
    soc(None)


# ---- what a max-pool forward keeps for its backward --------------------------------------------
@pytest.mark.parametrize("product, kernel, kept, shape", [
    ("Ascend910B", 3, lambda n, c, ho, wo: 4 * n * c * ho * wo, (2, 20, 80, 80)),   # int32 stream
    ("Ascend910", 3, lambda n, c, ho, wo: n * -(-c // 16) * 9 * (-(-ho * wo // 16) + 1) * 32,
     (2, 20, 80, 80)),
    ("Ascend910B", 1, lambda n, c, ho, wo: 1, (2, 32, 256, 256)),                   # not read
])
def test_max_pool_mask_kept_for_backward_is_only_what_the_backward_reads(soc, product, kernel, kept, shape):
    soc(product)
    n, c, h, w = shape
    # whole numbers below 2048 (exact in fp16, which Ascend910 computes in), distinct inside any
    # window (2039 is prime): no ties for the argmax
    x = (torch.arange(h * w) * 7 % 2039 + torch.arange(n * c)[:, None] % 5).float()
    x = x.reshape(shape).requires_grad_()
    out, mask = F.max_pool2d_with_mask(x, kernel, 2, kernel // 2)
    assert mask.numel() >= 1 << 20          # a container the forward cuts to what is read
    saved = [t for t in out.grad_fn.saved_tensors if t.dtype == torch.int8]
    assert len(saved) == 1
    n, c, ho, wo = out.shape
    assert saved[0].numel() == kept(n, c, ho, wo) < mask.numel()
    assert saved[0].untyped_storage().nbytes() == saved[0].numel()      # a copy, not a view
    del mask
    b = x.detach().clone().requires_grad_()
    grad = _data(*out.shape, seed=11)
    out.backward(grad)
    TF.max_pool2d(b, kernel, 2, kernel // 2).backward(grad)
    tol = 0 if product == "Ascend910B" else 2e-2          # Ascend910 computes fp32 as fp16
    torch.testing.assert_close(x.grad, b.grad, rtol=tol, atol=tol)


def test_max_pool_small_mask_container_is_kept_whole():
    """Under 1 MiB the container itself is saved (cutting it cost a small step more than its
    bytes), and the backward still gives torch's gradient."""
    x = _data(2, 20, 15, 15).requires_grad_()
    out, mask = F.max_pool2d_with_mask(x, 3, 2, 1)
    assert mask.numel() < 1 << 20
    saved = [t for t in out.grad_fn.saved_tensors if t.dtype == torch.int8]
    assert len(saved) == 1 and saved[0].data_ptr() == mask.data_ptr()
    b = x.detach().clone().requires_grad_()
    grad = _data(*out.shape, seed=12)
    out.backward(grad)
    TF.max_pool2d(b, 3, 2, 1).backward(grad)
    assert torch.equal(x.grad, b.grad)


# ---- results: memory format and resizing --------------------------------------------------------
CL = torch.channels_last


def _is_cl(t):
    return t.is_contiguous(memory_format=CL) and not t.is_contiguous()


FORMAT_CASES = {   # ours, torch's: each torch keeps channels-last for (checked in the test)
    "replication_pad2d": (lambda x: F.replication_pad2d(x, (1, 2, 0, 1)),
                          lambda x: TF.pad(x, (1, 2, 0, 1), mode="replicate")),
    "max_pool2d_with_mask": (lambda x: F.max_pool2d_with_mask(x, 3, 2, 1)[0],
                             lambda x: TF.max_pool2d(x, 3, 2, 1)),
    "max_pool2d_with_indices": (lambda x: F.max_pool2d_with_indices(x, 2)[0],
                                lambda x: TF.max_pool2d(x, 2)),
    "prelu": (lambda x: F.prelu(x, torch.tensor([0.1, -0.2, 0.3, 0.5])),
              lambda x: TF.prelu(x, torch.tensor([0.1, -0.2, 0.3, 0.5]))),
}


@pytest.mark.parametrize("name", sorted(FORMAT_CASES))
def test_channels_last_inputs_give_channels_last_results_and_gradients(name):
    ours, theirs = FORMAT_CASES[name]
    x = _data(2, 4, 9, 9).to(memory_format=CL)
    a, b = x.clone().requires_grad_(), x.clone().requires_grad_()
    ya, yb = ours(a), theirs(b)
    assert _is_cl(yb) and _is_cl(ya)
    assert torch.equal(ya, yb)
    with torch.no_grad():
        assert _is_cl(ours(x)) and torch.equal(ours(x), yb)
    grad = _data(*yb.shape, seed=5)
    ya.backward(grad)
    yb.backward(grad)
    assert _is_cl(b.grad) and _is_cl(a.grad)
    torch.testing.assert_close(a.grad, b.grad, rtol=1e-6, atol=1e-6)
    # contiguous inputs keep contiguous results
    assert ours(x.contiguous()).is_contiguous()


def test_channels_last_indices_and_backward_functions():
    x = _data(2, 4, 9, 9).to(memory_format=CL)
    out, idx = F.max_pool2d_with_indices(x, 3, 2, 1)
    want_out, want_idx = TF.max_pool2d_with_indices(x, 3, 2, 1)
    assert _is_cl(idx) and torch.equal(idx.long(), want_idx) and torch.equal(out, want_out)
    g = _data(*out.shape, seed=2)
    got = F.max_pool2d_with_indices_backward(g, x, idx, 3, 2, 1)
    want = torch.ops.aten.max_pool2d_with_indices_backward(g, x, [3, 3], [2, 2], [1, 1], [1, 1], False,
                                                           want_idx)
    assert _is_cl(got) and _is_cl(want) and torch.equal(got, want)
    gp = _data(2, 4, 11, 12, seed=3)
    got = F.replication_pad2d_backward(gp, x, (2, 1, 1, 1))
    want = ref.replication_pad2d_backward_a2(gp.contiguous().numpy(), tuple(x.shape), (2, 1, 1, 1))
    assert _is_cl(got) and torch.equal(got, torch.from_numpy(want))
    gx, gw = F.prelu_backward(g.contiguous(), out, torch.full((4,), 0.25))
    assert _is_cl(gx)


def test_large_torch_results_are_resizable():
    x = _data(8, 64, 32, 32)                         # a 2.4 MB result, from the result blocks
    y = F.replication_pad2d(x, (1, 1, 1, 1))
    assert y.untyped_storage().resizable()
    parts = [_data(8, 64, 34, 34, seed=s) for s in (1, 2)]
    with pytest.warns(UserWarning, match="resized"):
        torch.cat(parts, out=y)
    assert y.shape == (16, 64, 34, 34) and torch.equal(y, torch.cat(parts))
    z = F.max_pool2d_with_mask(x, 2)[1]             # the mask as well
    z.resize_(2 * z.numel())
    # a freed result's block serves the next result of its size; a resized one does not
    address = F.replication_pad2d(x, (1, 1, 1, 1)).data_ptr()
    again = F.replication_pad2d(x, (1, 1, 1, 1))
    assert again.data_ptr() == address and again.data_ptr() != y.data_ptr()
    assert torch.equal(again, TF.pad(x, (1, 1, 1, 1), mode="replicate"))
    pyaclnn.empty_cache()
