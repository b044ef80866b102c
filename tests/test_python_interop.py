"""pyaclnn.functional on the caller's memory: numpy views, torch tensors (bf16 too), DLPack,
autograd, the executor cache, the result cache, ACLNN_STRICT=1 and the copying path.

Expected values come from PyTorch CPU (torch.nn.functional / aten) or small NumPy expressions in
this file, never from pyaclnn itself.
"""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import pyaclnn
import pyaclnn.functional as F
from pyaclnn import _dispatch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def edge_pad(x, padding):
    left, right, top, bottom = padding
    widths = [(0, 0)] * (x.ndim - 2) + [(top, bottom), (left, right)]
    return np.pad(x, widths, mode="edge")


def prelu_reference(x, w):
    shape = [1] * x.ndim
    shape[1] = w.size
    return np.where(x > 0, x, w.reshape(shape) * x)


# ---- numpy layouts -----------------------------------------------------------------------------
@pytest.mark.parametrize("view", ["transposed", "reversed", "strided", "offset"])
def test_numpy_views_are_read_in_place(rng, view):
    base = rng.standard_normal((3, 4, 12, 10)).astype(np.float32)
    x = {"transposed": base.transpose(0, 1, 3, 2),
         "reversed": base[:, :, ::-1, ::-1],
         "strided": base[:, :, ::2, ::3],
         "offset": base[1:, 1:3, 2:9, 1:]}[view]
    assert not x.flags.c_contiguous
    got = F.replication_pad2d(x, (2, 1, 0, 3))
    np.testing.assert_array_equal(got, edge_pad(np.ascontiguousarray(x), (2, 1, 0, 3)))
    w = rng.random(x.shape[1]).astype(np.float32)
    np.testing.assert_array_equal(F.prelu(x, w), prelu_reference(x, w))


def test_readonly_and_broadcast_inputs(rng):
    x = rng.standard_normal((2, 3, 5, 5)).astype(np.float32)
    x.flags.writeable = False
    w = np.broadcast_to(np.float32(0.25), (3,))            # stride 0
    np.testing.assert_array_equal(F.prelu(x, w), prelu_reference(x, np.full(3, 0.25, np.float32)))


def test_results_are_fresh_contiguous_writeable_arrays(rng):
    x = rng.standard_normal((2, 3, 64, 64)).astype(np.float32)
    first = F.replication_pad2d(x, (1, 1, 1, 1))
    second = F.replication_pad2d(x, (1, 1, 1, 1))
    assert first.flags.c_contiguous and first.flags.writeable
    assert first.__array_interface__["data"][0] != second.__array_interface__["data"][0]
    first[...] = 0                                          # the caller owns it
    np.testing.assert_array_equal(second, edge_pad(x, (1, 1, 1, 1)))


# ---- torch -------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_torch_tensors_in_torch_tensors_out(dtype):
    torch.manual_seed(1)
    x = torch.randn(2, 3, 7, 9).to(dtype)
    y = F.replication_pad2d(x, (1, 2, 3, 0))
    assert isinstance(y, torch.Tensor) and y.dtype == dtype
    assert torch.equal(y, TF.pad(x.float(), (1, 2, 3, 0), mode="replicate").to(dtype))
    w = torch.rand(3).to(dtype)
    assert torch.equal(F.prelu(x, w), TF.prelu(x.float(), w.float()).to(dtype))
    cols = F.im2col(x, 3, 1, 1, 2)
    assert torch.equal(cols, TF.unfold(x.float(), 3, 1, 1, 2).to(dtype))


def test_torch_non_contiguous_and_requires_grad_without_grad_mode():
    torch.manual_seed(2)
    x = torch.randn(2, 8, 6, 3).permute(0, 3, 1, 2)        # channels-last view
    assert not x.is_contiguous()
    out, mask = F.max_pool2d_with_mask(x, 3, 2, 1)
    want, indices = TF.max_pool2d(x, 3, 2, 1, return_indices=True)
    assert torch.equal(out, want)
    assert np.array_equal(pyaclnn.indices_from_mask(mask.numpy(), out.shape), indices.numpy())
    leaf = torch.randn(2, 3, 4, 4, requires_grad=True)
    with torch.no_grad():
        y = F.replication_pad2d(leaf, (1, 1, 1, 1))
    assert y.grad_fn is None and not y.requires_grad


def test_dlpack_objects_are_read_in_place(rng):
    class Producer:
        """A foreign array type that only speaks DLPack."""

        def __init__(self, array):
            self._array = array

        def __dlpack__(self, **kwargs):
            return self._array.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self._array.__dlpack_device__()

    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    got = F.replication_pad2d(Producer(x), (1, 0, 0, 2))
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, edge_pad(x, (1, 0, 0, 2)))
    bf16 = torch.randn(2, 3, 4, 5).bfloat16()
    got = F.replication_pad2d(Producer(bf16), (1, 0, 0, 2))   # numpy has no bf16 DLPack
    assert torch.equal(torch.as_tensor(got), TF.pad(bf16.float(), (1, 0, 0, 2),
                                                    mode="replicate").bfloat16())


def test_meta_tensors_get_the_result_shape_only():
    # torch tensors go through torch.ops.aclnn (pyaclnn.torch_ops), whose fake implementation
    # serves the meta device: shape inference, as torch.nn.functional gives
    x = torch.randn(1, 1, 2, 3, device="meta")
    y = F.replication_pad2d(x, (1, 1, 2, 0))
    assert y.device.type == "meta" and tuple(y.shape) == (1, 1, 4, 5)


# ---- autograd ----------------------------------------------------------------------------------
def _distinct(shape):
    """Values far apart (no max-pool ties, no prelu kink within gradcheck's eps)."""
    count = int(np.prod(shape))
    values = (torch.randperm(count, generator=torch.Generator().manual_seed(3)).float() + 1) / 8
    signs = torch.where(torch.arange(count) % 3 == 0, -1.0, 1.0)
    return (values * signs).reshape(shape)


GRADCHECK_CASES = {
    "replication_pad2d": (lambda t: F.replication_pad2d(t, (1, 2, 2, 1)), (2, 3, 5, 6)),
    "upsample_nearest_exact1d": (lambda t: F.upsample_nearest_exact1d(t, 11), (2, 3, 7)),
    "max_pool2d_with_mask": (lambda t: F.max_pool2d_with_mask(t, 3, 2, 1)[0], (2, 3, 8, 8)),
    "im2col": (lambda t: F.im2col(t, 3, 1, 1, 2), (2, 3, 6, 6)),
}


@pytest.mark.filterwarnings("ignore:Input #")
@pytest.mark.parametrize("name", sorted(GRADCHECK_CASES))
def test_gradcheck(name):
    function, shape = GRADCHECK_CASES[name]
    x = _distinct(shape).requires_grad_()
    # fp32 (the ops have no double), so finite differences need a wide step and tolerance;
    # the functions are piecewise linear, so the differences are exact up to rounding.
    assert torch.autograd.gradcheck(function, (x,), eps=1e-2, atol=1e-3, rtol=1e-3)


def test_gradcheck_pad_in_double():
    x = torch.randn(2, 3, 4, 5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: F.replication_pad2d(t, (2, 1, 1, 3)), (x,))


@pytest.mark.filterwarnings("ignore:Input #")
def test_gradcheck_prelu_both_gradients():
    x = _distinct((2, 3, 4, 4)).requires_grad_()
    w = torch.tensor([0.25, -0.5, 1.5], requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, b: F.prelu(a, b), (x, w), eps=1e-2, atol=1e-3,
                                    rtol=1e-3)


AUTOGRAD_CASES = {
    "replication_pad2d": (lambda t: F.replication_pad2d(t, (1, 2, 2, 1)),
                          lambda t: TF.pad(t, (1, 2, 2, 1), mode="replicate"), (2, 3, 5, 6)),
    "upsample_nearest_exact1d": (lambda t: F.upsample_nearest_exact1d(t, 11),
                                 lambda t: TF.interpolate(t, size=11, mode="nearest-exact"),
                                 (2, 3, 7)),
    "max_pool2d_with_mask": (lambda t: F.max_pool2d_with_mask(t, 3, 2, 1)[0],
                             lambda t: TF.max_pool2d(t, 3, 2, 1), (2, 3, 9, 9)),
    "im2col": (lambda t: F.im2col(t, (3, 2), (1, 2), (1, 0), (2, 1)),
               lambda t: TF.unfold(t, (3, 2), (1, 2), (1, 0), (2, 1)), (2, 3, 7, 8)),
}


@pytest.mark.parametrize("name", sorted(AUTOGRAD_CASES))
def test_gradients_equal_torch_autograd(name):
    ours, reference, shape = AUTOGRAD_CASES[name]
    data = torch.randn(*shape, generator=torch.Generator().manual_seed(4))
    a, b = data.clone().requires_grad_(), data.clone().requires_grad_()
    ya, yb = ours(a), reference(b)
    assert ya.grad_fn is not None
    assert torch.equal(ya, yb)
    grad = torch.randn(yb.shape, generator=torch.Generator().manual_seed(5))
    ya.backward(grad)
    yb.backward(grad)
    torch.testing.assert_close(a.grad, b.grad, rtol=1e-6, atol=1e-6)


def test_prelu_gradients_equal_torch_autograd():
    data = torch.randn(4, 3, 5, 5, generator=torch.Generator().manual_seed(6))
    weight = torch.tensor([0.1, -0.3, 0.7])
    a, b = data.clone().requires_grad_(), data.clone().requires_grad_()
    wa, wb = weight.clone().requires_grad_(), weight.clone().requires_grad_()
    F.prelu(a, wa).sum().backward()                         # an expanded (stride-0) gradient
    TF.prelu(b, wb).sum().backward()
    torch.testing.assert_close(a.grad, b.grad, rtol=0, atol=0)
    torch.testing.assert_close(wa.grad, wb.grad, rtol=1e-5, atol=1e-5)


def test_max_pool_mask_is_not_differentiable():
    x = torch.randn(1, 2, 6, 6, requires_grad=True)
    out, mask = F.max_pool2d_with_mask(x, 2)
    assert out.requires_grad and not mask.requires_grad and mask.dtype == torch.int8


def test_bf16_autograd_runs_backward_kernel():
    data = torch.randn(2, 3, 6, 6).bfloat16()
    x = data.clone().requires_grad_()
    y = F.replication_pad2d(x, (2, 2, 2, 2))
    grad = torch.randn(y.shape).bfloat16()
    y.backward(grad)
    # the backward sums in fp32 and rounds once: compare with an fp64 sum rounded once
    want = torch.ops.aten.replication_pad2d_backward(grad.double(), data.double(), [2, 2, 2, 2])
    assert torch.equal(x.grad, want.bfloat16())


# ---- the executor cache --------------------------------------------------------------------------
# Under ACLNN_STRICT=1 and ACLNN_CHECK's memcheck every call runs phase 1, so that every address is
# checked: no executor is cached (docs/python.md, docs/checking.md).  The suite runs in both modes.
CACHING = not _dispatch._STRICT


def test_cached_executor_is_rebound_to_each_calls_memory(rng):
    _dispatch.empty_cache()
    shape = (2, 3, 6, 6)
    for _ in range(3):
        x = rng.standard_normal(shape).astype(np.float32)
        np.testing.assert_array_equal(F.replication_pad2d(x, (1, 1, 1, 1)), edge_pad(x, (1,) * 4))
    assert len(_dispatch._state().executors) == (1 if CACHING else 0)
    F.replication_pad2d(np.zeros((2, 3, 6, 7), np.float32), (1, 1, 1, 1))   # another shape
    F.replication_pad2d(np.zeros(shape, np.float32), (2, 1, 1, 1))          # another attribute
    assert len(_dispatch._state().executors) == (3 if CACHING else 0)


def test_executor_cache_is_bounded(monkeypatch, rng):
    _dispatch.empty_cache()
    monkeypatch.setattr(_dispatch, "CACHE_ENTRIES", 4)
    for width in range(1, 10):
        x = rng.standard_normal((1, 1, 3, width)).astype(np.float32)
        np.testing.assert_array_equal(F.replication_pad2d(x, (0, 0, 1, 1)), edge_pad(x, (0, 0, 1, 1)))
    assert len(_dispatch._state().executors) == (4 if CACHING else 0)


def test_errors_are_not_cached(rng):
    x = rng.standard_normal((1, 1, 3, 3)).astype(np.float32)
    for _ in range(2):
        with pytest.raises(pyaclnn.ParamInvalidError, match="padding"):
            F.replication_pad2d(x, (1, 1, 1))
    np.testing.assert_array_equal(F.replication_pad2d(x, (1, 1, 1, 1)), edge_pad(x, (1,) * 4))


def test_threads_each_get_their_own_executors():
    failures = []

    def work(seed):
        local = np.random.default_rng(seed)
        for _ in range(200):
            x = local.standard_normal((2, 3, 8, 8)).astype(np.float32)
            w = local.random(3).astype(np.float32)
            if not np.array_equal(F.prelu(x, w), prelu_reference(x, w)):
                failures.append(seed)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_empty_tensors_take_the_uncached_path():
    x = np.zeros((0, 3, 4, 4), np.float32)
    assert F.replication_pad2d(x, (1, 1, 1, 1)).shape == (0, 3, 6, 6)
    gx, gw = F.prelu_backward(np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32),
                              np.ones(3, np.float32))
    assert gx.shape == (0, 3)
    np.testing.assert_array_equal(gw, np.zeros(3, np.float32))


# ---- the result cache ----------------------------------------------------------------------------
def test_large_results_reuse_cached_blocks(rng):
    _dispatch.empty_cache()
    x = rng.standard_normal((4, 16, 64, 64)).astype(np.float32)   # a 1 MiB result
    if _dispatch._MEMCHECK:   # results are host arrays: aclrtMalloc memory is not host memory
        np.testing.assert_array_equal(F.replication_pad2d(x, (0, 0, 0, 0)), x)
        assert _dispatch.results.cached_bytes == 0
        return
    first = F.replication_pad2d(x, (0, 0, 0, 0))
    address = first.__array_interface__["data"][0]
    assert _dispatch.results.cached_bytes == 0
    del first
    assert _dispatch.results.cached_bytes > 0
    again = F.replication_pad2d(x, (0, 0, 0, 0))
    assert again.__array_interface__["data"][0] == address
    np.testing.assert_array_equal(again, x)
    tensor = F.replication_pad2d(torch.from_numpy(x), (0, 0, 0, 0))   # torch results too
    view = tensor[0]
    del tensor
    np.testing.assert_array_equal(view.numpy(), x[0])                 # a view keeps its block
    del view, again
    pyaclnn.empty_cache()
    assert _dispatch.results.cached_bytes == 0


# ---- the other paths, each in a process of its own ----------------------------------------------
def _run_python(code, **env):
    full_env = dict(os.environ, **env)
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=full_env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


STRICT_CHECK = """
import numpy as np, torch, pyaclnn, pyaclnn.functional as F
from pyaclnn import ffi, lib
x = np.random.default_rng(7).standard_normal((2, 3, 5, 5)).astype(np.float32)[:, :, ::-1]
w = np.array([0.5, -1.0, 2.0], np.float32)
np.testing.assert_array_equal(F.prelu(x, w), np.where(x > 0, x, w[None, :, None, None] * x))
g = F.prelu(torch.from_numpy(np.ascontiguousarray(x)).requires_grad_(), torch.from_numpy(w))
g.sum().backward()
# the library itself rejects memory that is neither aclrtMalloc'd nor registered:
t = pyaclnn.Tensor((2,), np.float32, buffer=ffi.from_buffer(np.ones(2, np.float32)))
try:
    pyaclnn.aclnnPreluGetWorkspaceSize(t, pyaclnn.Tensor.from_numpy(w[:1]), t)
except pyaclnn.ParamInvalidError as exc:
    assert "ACLNN_STRICT" in str(exc), exc
else:
    raise AssertionError("strict mode accepted host memory")
print("ok")
"""


def test_strict_mode_registers_the_callers_memory():
    assert _run_python(STRICT_CHECK, ACLNN_STRICT="1").strip().endswith("ok")


def test_host_register_follows_cann(acl):
    lib, ffi = acl.lib, acl.ffi
    page = np.zeros(3 * 4096, np.uint8)
    start = (page.__array_interface__["data"][0] + 4095) // 4096 * 4096
    device = ffi.new("void **")
    register = lib.aclrtHostRegister
    assert register(ffi.cast("void *", start + 8), 64, 0, device) == lib.ACL_ERROR_INVALID_PARAM
    assert "4 KiB" in acl.recent_error_message()
    assert register(ffi.cast("void *", start), 0, 0, device) == lib.ACL_ERROR_INVALID_PARAM
    assert register(ffi.cast("void *", start), 64, 1, device) == lib.ACL_ERROR_INVALID_PARAM
    assert register(ffi.cast("void *", start), 4096, 0, device) == 0
    assert int(ffi.cast("uintptr_t", device[0])) == start
    assert register(ffi.cast("void *", start), 64, 0, device) == \
        lib.ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED
    assert lib.aclrtHostUnregister(ffi.cast("void *", start + 4096)) == \
        lib.ACL_ERROR_HOST_MEMORY_NOT_REGISTERED
    assert lib.aclrtHostUnregister(ffi.cast("void *", start)) == 0
    acl.recent_error_message()


COPY_PATH_CHECK = """
import numpy as np, torch, pyaclnn.functional as F
from pyaclnn import _dispatch
_dispatch._HOST_IS_DEVICE = False          # what pyaclnn does on a real CANN
rng = np.random.default_rng(8)
x = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)[:, :, ::2]
np.testing.assert_array_equal(F.replication_pad2d(x, (1, 1, 1, 1)),
                              np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), mode="edge"))
b = torch.randn(2, 3, 4, 4).bfloat16()
y = F.replication_pad2d(b, (1, 1, 1, 1))
assert y.dtype == torch.bfloat16 and torch.equal(y, torch.nn.functional.pad(b.float(), (1,) * 4, mode="replicate").bfloat16())
out, mask = F.max_pool2d_with_mask(x, 2)
assert mask.dtype == np.int8
print("ok")
"""


def test_copy_path_for_real_cann_gives_the_same_results():
    assert _run_python(COPY_PATH_CHECK).strip().endswith("ok")


NO_TORCH_CHECK = """
import sys
sys.modules["torch"] = None                 # as if torch were not installed
import numpy as np, pyaclnn, pyaclnn.functional as F
x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
assert F.replication_pad2d(x, (1, 0, 0, 0)).tolist() == [[[[0, 0, 1], [2, 2, 3]]]]
print("ok")
"""


def test_import_works_without_torch():
    assert _run_python(NO_TORCH_CHECK).strip().endswith("ok")


def test_a_finished_threads_executors_are_destroyed(acl):
    def work():
        F.prelu(np.ones((1, 2, 2, 2), np.float32), np.ones(2, np.float32))
        seen.extend(executor.pointer for executor in _dispatch._state().executors.values())

    seen = []
    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    import gc
    gc.collect()
    assert len(seen) == (1 if CACHING else 0)
    # the library no longer knows the executor: destroying it again is an error, not a crash
    for pointer in seen:
        assert acl.lib.aclDestroyAclOpExecutor(pointer) == acl.lib.ACLNN_ERR_INNER
        acl.recent_error_message()
