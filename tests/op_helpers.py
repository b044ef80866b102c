"""Helpers shared by the operator tests (tests/test_op_*.py): NumPy <-> torch conversion with
bfloat16, bitwise comparison, strided layouts of a shape, window counts of im2col and pooling,
a repeatable executor's runs with its tensors moved, and the validation helpers.  Nothing here computes an expected value: the references are in
tests/reference.py, the runs under each SIMD tier in tests/tiers.py.
"""
import ml_dtypes
import numpy as np
import torch

BF16 = ml_dtypes.bfloat16


def to_torch(a):
    a = np.asarray(a)
    if a.dtype == BF16:
        return torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(a))


def from_torch(t, dtype=None):
    """A torch tensor as NumPy (bfloat16 through fp32); cast to `dtype` when given."""
    if t.dtype == torch.bfloat16:
        return t.float().numpy().astype(BF16)
    return t.numpy() if dtype is None else t.numpy().astype(dtype)


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def assert_bits(got, want, what="", nan_sign_free=False):
    """Same shape, same dtype and the same bits.  With nan_sign_free, NaNs must sit at the same
    places but their sign and payload may differ (PyTorch's vectorised bf16/fp16 paths sometimes
    return the default NaN)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    if nan_sign_free:
        nan_got, nan_want = np.isnan(got.astype(np.float32)), np.isnan(want.astype(np.float32))
        np.testing.assert_array_equal(nan_got, nan_want)
        got, want = np.where(nan_got, 0, got).astype(got.dtype), np.where(nan_want, 0, want).astype(want.dtype)
    bad = bits(got) != bits(want)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise AssertionError("%s: %d of %d differ; first at %s: got %r want %r"
                             % (what, bad.sum(), bad.size, where, got[where], want[where]))


def contiguous_strides(shape):
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * max(shape[i + 1], 1)
    return strides


def layouts(shape, offset_view=(5, 9), every_other=(1, 3), swapped=(2, 2)):
    """(strides, offset, storage_numel) of three non-contiguous layouts of `shape`: contiguous
    at an offset, every other element, and (rank >= 2) the last two dims swapped in memory.
    Each (offset, extra) pair gives the view's offset and the storage beyond what it spans."""
    nd = len(shape)
    contig = contiguous_strides(shape)
    numel = int(np.prod(shape, dtype=np.int64))
    yield tuple(contig), offset_view[0], numel + offset_view[1]
    yield tuple(2 * c for c in contig), every_other[0], 2 * numel + every_other[1]
    if nd >= 2:
        perm = list(range(nd - 2)) + [nd - 1, nd - 2]
        pstr = contiguous_strides([shape[i] for i in perm])
        strides = [0] * nd
        for pos, dim in enumerate(perm):
            strides[dim] = pstr[pos]
        yield tuple(strides), swapped[0], numel + swapped[1]


def windows(size, k, d, p, s):
    """Sliding-window positions along one dim (PyTorch's unfold formula)."""
    return (size + 2 * p - (d * (k - 1) + 1)) // s + 1


def pooled_size(size, k, s, p=0, ceil_mode=False):
    """PyTorch's pooled length: floor or ceil, with ceil's last window starting inside."""
    num = size + 2 * p - k + (s - 1 if ceil_mode else 0)
    o = num // s + 1
    if ceil_mode and (o - 1) * s >= size + p:
        o -= 1
    return o


def empty_tensor(shape, dtype=np.float32, fmt=None):
    """An uninitialised device tensor (for validation cases that never run)."""
    import pyaclnn
    return pyaclnn.Tensor.empty(shape, dtype, format=fmt)


def run_rebound(name, args, inputs=(), outputs=(), first_runs=1):
    """Runs aclnn<name> on one repeatable executor made from its GetWorkspaceSize `args`:
    `first_runs` times, then once more after set_input_addr / set_output_addr pointed each
    (index, tensor, new_tensor) of `inputs` / `outputs` at new_tensor's storage.  Returns the
    values of the outputs after each run: the tensors' after the first runs, the new tensors'
    after the last."""
    import pyaclnn
    size, executor = getattr(pyaclnn, "aclnn%sGetWorkspaceSize" % name)(*args)
    phase2 = getattr(pyaclnn, "aclnn" + name)
    results = []
    with executor:
        executor.set_repeatable()
        workspace = pyaclnn.DeviceBuffer(size) if size else None
        try:
            for _ in range(first_runs):
                phase2(workspace, size, executor)
                pyaclnn.synchronize()
                results.append([tensor.numpy() for _, tensor, _ in outputs])
            for index, tensor, new in inputs:
                executor.set_input_addr(index, tensor, new.buffer)
            for index, tensor, new in outputs:
                executor.set_output_addr(index, tensor, new.buffer)
            phase2(workspace, size, executor)
            pyaclnn.synchronize()
            results.append([new.numpy() for _, _, new in outputs])
        finally:
            if workspace is not None:
                workspace.close()
    return results


def empty_with_room(shape, dtype=np.float32, room=8):
    """A zero-element tensor whose storage still holds `room` elements of fill (NaN; the byte 0x5A
    for integer types), so that a write by an operator with nothing to do shows."""
    import pyaclnn
    return pyaclnn.Tensor.strided(np.empty(shape, dtype), storage_numel=room)


def assert_still_filled(tensor):
    """Every storage element of a tensor from empty_with_room still holds its fill."""
    storage = tensor.storage_numpy()
    if storage.dtype.kind == "f" or storage.dtype == BF16:
        assert np.isnan(storage.astype(np.float32)).all(), storage
    else:
        assert (storage.view(np.uint8) == 0x5A).all(), storage


def assert_rejected(code, needle, call, *args, **kwargs):
    """call(*args, **kwargs) raises pyaclnn.AclnnError with status `code` and a message that
    names `needle`."""
    import pyaclnn
    import pytest
    with pytest.raises(pyaclnn.AclnnError) as info:
        call(*args, **kwargs)
    assert info.value.code == code
    assert needle in str(info.value)


class DispatchLog:
    """A TorchDispatchMode that records the name of every operator the dispatcher runs under it
    (``with DispatchLog() as log: ...; log.ops``): what a tracer or mode sees."""

    def __new__(cls):
        from torch.utils._python_dispatch import TorchDispatchMode

        class _Log(TorchDispatchMode):
            def __init__(self):
                super().__init__()
                self.ops = []

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                self.ops.append(str(func))
                return func(*args, **(kwargs or {}))
        return _Log()

