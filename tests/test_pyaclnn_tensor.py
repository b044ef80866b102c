"""Tensor round trips: every dtype, contiguous and strided/offset layouts, descriptor contents.

The reference is numpy itself: the values put in must come back bit for bit, the storage must hold
them exactly where ``offset + sum(i_k * stride_k)`` says (computed here with a plain loop), and the
library's getters must report the shape/strides/offset/dtype/format the tensor was created with.
"""

import itertools

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
from pyaclnn import ffi, lib
from pyaclnn.testing import assert_bitwise_equal, layouts, random_array

DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16, np.float64, np.int8, np.int16, np.int32,
          np.int64, np.uint8, np.bool_, np.complex64, np.complex128]
DTYPE_IDS = [np.dtype(d).name for d in DTYPES]

ACL_CODES = {"float32": "ACL_FLOAT", "float16": "ACL_FLOAT16", "bfloat16": "ACL_BF16",
             "float64": "ACL_DOUBLE", "int8": "ACL_INT8", "int16": "ACL_INT16",
             "int32": "ACL_INT32", "int64": "ACL_INT64", "uint8": "ACL_UINT8", "bool": "ACL_BOOL",
             "complex64": "ACL_COMPLEX64", "complex128": "ACL_COMPLEX128"}

SHAPES = [(), (7,), (3, 5), (2, 3, 4), (2, 1, 3, 5), (0, 3)]


def _values(shape, dtype, rng):
    values = random_array(shape, dtype, rng)
    if (np.dtype(dtype).kind == "f" or dtype is ml_dtypes.bfloat16) and values.size >= 3:  # special values must survive too
        flat = values.reshape(-1)
        flat[0], flat[1], flat[2] = -0.0, np.inf, np.nan
    return values


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_dtype_maps_both_ways(acl, dtype):
    code = getattr(lib, ACL_CODES[np.dtype(dtype).name])
    assert pyaclnn.acl_dtype(dtype) == code
    assert pyaclnn.acl_dtype(np.dtype(dtype)) == code
    assert pyaclnn.numpy_dtype(code) == np.dtype(dtype)


def test_dtype_aliases(acl):
    assert pyaclnn.acl_dtype("bf16") == lib.ACL_BF16
    assert pyaclnn.acl_dtype("fp16") == lib.ACL_FLOAT16
    assert pyaclnn.acl_dtype("float") == lib.ACL_FLOAT
    assert pyaclnn.acl_dtype("double") == lib.ACL_DOUBLE
    assert pyaclnn.acl_dtype("ACL_INT64") == lib.ACL_INT64
    assert pyaclnn.numpy_dtype(lib.ACL_BF16) == np.dtype(ml_dtypes.bfloat16)
    with pytest.raises(TypeError):
        pyaclnn.acl_dtype("float128")
    with pytest.raises(TypeError):
        pyaclnn.numpy_dtype(lib.ACL_STRING)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_from_numpy_round_trip(acl, rng, dtype, shape):
    values = _values(shape, dtype, rng)
    with pyaclnn.Tensor.from_numpy(values) as t:
        assert t.shape == shape and t.dtype == pyaclnn.acl_dtype(dtype)
        assert_bitwise_equal(t.numpy(), values)
        assert_bitwise_equal(t.storage_numpy(), values.reshape(-1))


def test_from_numpy_accepts_any_numpy_layout(acl, rng):
    base = rng.standard_normal((6, 8)).astype(np.float32)
    for view in (base.T, base[::2, 1::3], base[:, ::-1]):
        with pyaclnn.Tensor.from_numpy(view) as t:
            assert t.strides == pyaclnn.contiguous_strides(view.shape)
            assert_bitwise_equal(t.numpy(), np.ascontiguousarray(view))


def _expected_storage(values, strides, offset, storage_numel, fill_bytes):
    """Independent scatter: walk every index, place the value at offset + sum(i*stride)."""
    storage = np.frombuffer(bytes(fill_bytes), dtype=values.dtype).copy() if fill_bytes else None
    for index in itertools.product(*[range(d) for d in values.shape]):
        position = offset + sum(i * s for i, s in zip(index, strides))
        storage[position] = values[index]
    return storage


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4), (2, 3, 2, 3)], ids=str)
def test_strided_layouts_round_trip(acl, rng, dtype, shape):
    values = _values(shape, dtype, rng)
    for layout in layouts(shape):
        strides, offset, storage_numel = layout
        with pyaclnn.Tensor.strided(values, strides, offset, storage_numel) as t:
            assert t.strides == strides and t.offset == offset
            assert t.storage_shape == (storage_numel,)
            assert_bitwise_equal(t.numpy(), values)
            storage = t.storage_numpy()
            # where the view is, the values; everywhere else, the fill (NaN or the 0x5A byte)
            reached = np.zeros(storage_numel, bool)
            for index in itertools.product(*[range(d) for d in shape]):
                position = offset + sum(i * s for i, s in zip(index, strides))
                reached[position] = True
                assert_bitwise_equal(storage[position], values[index])
            unreached = storage[~reached]
            if np.dtype(dtype).kind in "fc" or dtype is ml_dtypes.bfloat16:
                assert np.isnan(unreached.astype(np.complex128)).all(), layout
            else:
                assert (unreached.view(np.uint8) == 0x5A).all(), layout


def test_strided_explicit_storage_and_fill(acl):
    values = np.arange(6, dtype=np.int32).reshape(2, 3)
    with pyaclnn.Tensor.strided(values, strides=(1, 2), offset=4, storage_numel=16, fill=-7) as t:
        storage = t.storage_numpy()
        expected = np.full(16, -7, np.int32)
        for i in range(2):
            for j in range(3):
                expected[4 + i * 1 + j * 2] = values[i, j]
        assert_bitwise_equal(storage, expected)
        assert_bitwise_equal(t.numpy(), values)
    with pytest.raises(ValueError):
        pyaclnn.Tensor.strided(values, strides=(3, 1), offset=0, storage_numel=5)


@pytest.mark.parametrize("shape", [(4, 5), (2, 3, 4)], ids=str)
def test_descriptor_reports_what_was_created(acl, shape):
    values = np.zeros(shape, np.float16)
    for strides, offset, storage_numel in layouts(shape):
        with pyaclnn.Tensor.strided(values, strides, offset, storage_numel,
                                    format="NCL" if len(shape) == 3 else None) as t:
            assert pyaclnn.get_view_shape(t) == shape
            assert pyaclnn.get_view_strides(t) == strides
            assert pyaclnn.get_view_offset(t) == offset
            assert pyaclnn.get_storage_shape(t) == (storage_numel,)
            assert pyaclnn.get_data_type(t) == lib.ACL_FLOAT16
            expected_format = lib.ACL_FORMAT_NCL if len(shape) == 3 else lib.ACL_FORMAT_ND
            assert pyaclnn.get_format(t) == expected_format
            assert t.get_addr() == t.buffer.address
    assert acl.testing.last_error() is None


def test_empty_fill_and_copy_from_numpy(acl, rng):
    with pyaclnn.Tensor.empty((3, 4), "bf16", fill=np.nan) as t:
        assert np.isnan(t.numpy().astype(np.float32)).all()
        values = rng.standard_normal((3, 4)).astype(ml_dtypes.bfloat16)
        t.copy_from_numpy(values)
        assert_bitwise_equal(t.numpy(), values)
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    strides, offset, storage_numel = list(layouts((3, 4)))[3]  # stepped
    with pyaclnn.Tensor.strided(base, strides, offset, storage_numel) as t:
        t.copy_from_numpy(-base)
        assert_bitwise_equal(t.numpy(), -base)
        assert np.isnan(t.storage_numpy()[1::2]).all()  # the gaps were left alone


def test_device_to_device_copy_moves_the_bytes(acl, rng):
    values = rng.standard_normal((4, 4)).astype(np.float64)
    with pyaclnn.Tensor.from_numpy(values) as src, pyaclnn.Tensor.empty((4, 4), np.float64) as dst:
        pyaclnn.memcpy(dst.buffer, dst.buffer.nbytes, src.buffer, src.storage_nbytes,
                       lib.ACL_MEMCPY_DEVICE_TO_DEVICE)
        assert_bitwise_equal(dst.numpy(), values)


def test_set_addr_rebinds_the_descriptor(acl):
    a = np.arange(4, dtype=np.int64)
    with pyaclnn.Tensor.from_numpy(a) as t, pyaclnn.DeviceBuffer(64) as other:
        other.copy_from_host(a[::-1].copy())
        t.set_addr(other)
        assert t.get_addr() == other.address
        assert_bitwise_equal(t.numpy(), a[::-1].copy())


def test_tensor_without_storage(acl):
    with pyaclnn.Tensor((2, 2), np.float32, allocate=False) as t:
        assert t.buffer is None
        assert t.get_addr() == 0
        raw = ffi.new("void **")
        assert lib.aclGetRawTensorAddr(t.ptr, raw) == 0 and raw[0] == ffi.NULL


def test_tensor_owning_no_data(acl):
    """A negative dim with storage dims = view dims (as CANN's op_api test harness builds it):
    created, nothing allocated, the getters report what was given, and every data method refuses
    it instead of sizing a copy from it."""
    with pyaclnn.Tensor((0, -2, 2, 3), np.float32) as t:
        assert t.owns_no_data and t.buffer is None and t.get_addr() == 0
        assert pyaclnn.get_view_shape(t) == (0, -2, 2, 3)
        assert pyaclnn.get_storage_shape(t) == (0, -2, 2, 3)
        for call in (t.numpy, t.storage_numpy, lambda: t.copy_from_numpy(np.zeros((0, 2, 2, 3), np.float32))):
            with pytest.raises(ValueError, match="owns no data"):
                call()
    # any other negative storage dim is refused at creation
    with pytest.raises(ValueError, match=r"storageDims\[0\] must be non-negative"):
        pyaclnn.Tensor((2, 3), np.float32, storage_shape=(-6,))
