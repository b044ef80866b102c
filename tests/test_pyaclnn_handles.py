"""Handle classes, exceptions and the two-phase wrappers.

* arrays, scalars and lists are created, report their size through the library, and free cleanly;
* close() frees the C object (a second free of the same address is refused by the runtime), is
  idempotent, leaves no error message behind, and ffi.gc frees what was never closed;
* every failure raises the typed exception with the code, the constant's name and the message;
* the two-phase wrappers run an operator (Prelu, checked against a numpy formula), consume a
  normal executor, and rebind a repeatable one; rebinding follows the tensor (any index, or
  aclSetRawTensorAddr after phase 1) and a tensor destroyed before the launch is an error.
"""

import gc

import numpy as np
import pytest

import pyaclnn
from pyaclnn import ffi, lib
from pyaclnn.testing import assert_bitwise_equal, assert_close, last_error


def _prelu_reference(x, weight):
    w = weight.reshape((1, -1) + (1,) * (x.ndim - 2)) if weight.size > 1 else weight.reshape(())
    return np.where(x > 0, x, x * w).astype(x.dtype)


# ---- arrays, scalars, lists ------------------------------------------------------------------
@pytest.mark.parametrize("cls, values", [
    (pyaclnn.IntArray, [1, -2, 3, 2 ** 40]),
    (pyaclnn.FloatArray, [0.5, -1.25, 3.0]),
    (pyaclnn.BoolArray, [True, False, True, True]),
    (pyaclnn.IntArray, []),
])
def test_arrays(acl, cls, values):
    with cls(values) as arr:
        assert arr.size() == len(values) == len(arr)
        assert list(arr.values) == list(values)
    assert arr.closed
    assert last_error() is None


@pytest.mark.parametrize("value, dtype, expected_dtype", [
    (1.5, None, "ACL_FLOAT"), (3, None, "ACL_INT64"), (True, None, "ACL_BOOL"),
    (2.5, "float16", "ACL_FLOAT16"), (2.5, "bf16", "ACL_BF16"), (-7, np.int8, "ACL_INT8"),
    (1.0 + 2.0j, "complex128", "ACL_COMPLEX128"), (0.1, np.float64, "ACL_DOUBLE"),
])
def test_scalars(acl, value, dtype, expected_dtype):
    with pyaclnn.Scalar(value, dtype) as s:
        assert s.dtype == getattr(lib, expected_dtype)
        assert s.value == pytest.approx(value, rel=1e-2)
    assert last_error() is None


def test_scalar_of_unsupported_dtype_is_refused(acl):
    with pytest.raises(TypeError):
        pyaclnn.Scalar(1, "string")


def test_tensor_list_owns_copies_of_descriptors(acl):
    a = pyaclnn.Tensor.from_numpy(np.arange(3, dtype=np.float32))
    b = pyaclnn.Tensor.from_numpy(np.ones((2, 2), np.float32))
    with pyaclnn.TensorList([a, b]) as tl:
        size = ffi.new("uint64_t *")
        assert lib.aclGetTensorListSize(tl.ptr, size) == 0 and size[0] == 2
    # destroying the list destroyed its own descriptors, not the tensors'
    assert_bitwise_equal(a.numpy(), np.arange(3, dtype=np.float32))
    assert pyaclnn.get_view_shape(b) == (2, 2)
    a.close()
    b.close()
    assert last_error() is None


def test_scalar_list(acl):
    with pyaclnn.ScalarList([1.0, 2, pyaclnn.Scalar(True)]) as sl:
        size = ffi.new("uint64_t *")
        assert lib.aclGetScalarListSize(sl.ptr, size) == 0 and size[0] == 3


# ---- lifetime ----------------------------------------------------------------------------------
def _freed(address):
    """True when the runtime no longer knows the allocation (a second free is refused)."""
    return lib.aclrtFree(ffi.cast("void *", address)) != 0


def test_close_frees_and_is_idempotent(acl):
    buf = pyaclnn.DeviceBuffer(256)
    address = buf.address
    with buf:
        pass
    assert buf.closed
    buf.close()  # second close: no-op, no crash
    assert _freed(address)
    last_error()  # the refused free above left a message; clear it
    with pytest.raises(ValueError):
        buf.ptr


def test_tensor_close_frees_its_storage(acl):
    t = pyaclnn.Tensor.from_numpy(np.zeros((4, 4), np.float32))
    address = t.address
    t.close()
    t.close()
    assert t.closed and _freed(address)
    last_error()


def test_tensor_close_keeps_a_buffer_it_did_not_allocate(acl):
    with pyaclnn.DeviceBuffer(64) as buf:
        t = pyaclnn.Tensor((4,), np.float32, buffer=buf)
        t.close()
        assert not buf.closed
    assert buf.closed


def test_gc_is_a_backstop(acl):
    buf = pyaclnn.DeviceBuffer(128)
    address = buf.address
    del buf
    gc.collect()
    assert _freed(address)
    last_error()


def test_clean_close_leaves_no_error_message(acl):
    last_error()
    with pyaclnn.Stream() as stream, pyaclnn.Event() as event, \
            pyaclnn.Tensor.from_numpy(np.ones(8, np.float16)) as t, \
            pyaclnn.IntArray([1, 2]), pyaclnn.FloatArray([1.0]), pyaclnn.BoolArray([True]), \
            pyaclnn.Scalar(1.0):
        event.record(stream)
        stream.synchronize()
        event.synchronize()
        assert event.query()
        assert t.numpy().sum() == 8
    assert last_error() is None


def test_events_time_a_stream(acl):
    with pyaclnn.Stream() as stream, pyaclnn.Event() as start, pyaclnn.Event() as end:
        start.record(stream)
        end.record(stream)
        stream.synchronize()
        assert start.elapsed_time(end) >= 0.0


# ---- errors ------------------------------------------------------------------------------------
def test_runtime_error_carries_code_name_and_message(acl):
    last_error()
    with pytest.raises(pyaclnn.AclError) as info:
        pyaclnn._core.call_acl("aclrtFree", ffi.NULL)
    err = info.value
    assert isinstance(err, pyaclnn.AclParamError)
    assert err.code == lib.ACL_ERROR_INVALID_PARAM == 100000
    assert err.name == "ACL_ERROR_INVALID_PARAM"
    assert err.func == "aclrtFree"
    assert err.message, "aclGetRecentErrMsg had no text for the failure"
    assert "100000" in str(err) and "ACL_ERROR_INVALID_PARAM" in str(err)
    assert last_error() is None  # the message was consumed by the exception


def test_memcpy_overflow_is_an_acl_error(acl):
    with pyaclnn.DeviceBuffer(16) as buf:
        with pytest.raises(pyaclnn.AclError) as info:
            pyaclnn.memcpy(buf, 16, np.zeros(8, np.float32), 32, lib.ACL_MEMCPY_HOST_TO_DEVICE)
        assert info.value.code == lib.ACL_ERROR_RT_PARAM_INVALID


def test_meta_error_is_an_aclnn_error(acl):
    values = ffi.new("int64_t **")
    count = ffi.new("uint64_t *")
    with pytest.raises(pyaclnn.ParamNullptrError) as info:
        pyaclnn._core.call_aclnn("aclGetViewShape", ffi.NULL, values, count)
    assert info.value.code == 161001 and info.value.name == "ACLNN_ERR_PARAM_NULLPTR"
    assert isinstance(info.value, pyaclnn.AclnnError) and isinstance(info.value, pyaclnn.ParamError)


@pytest.mark.parametrize("code, cls", [
    (161001, pyaclnn.ParamNullptrError), (161002, pyaclnn.ParamInvalidError),
    (361001, pyaclnn.RuntimeError_), (561103, pyaclnn.InnerError), (561000, pyaclnn.InnerError),
])
def test_status_families(code, cls):
    err = pyaclnn._errors.aclnn_error_class(code)(code, None, "text", "aclnnX")
    assert isinstance(err, cls) and isinstance(err, pyaclnn.AclnnError)
    assert err.name == pyaclnn.ACLNN_STATUS_NAMES[code]


def test_phase1_failure_raises_with_the_op_message(acl):
    x = np.ones((2, 3), np.float32)
    with pyaclnn.Tensor.from_numpy(x) as t, pyaclnn.Tensor.empty((2, 3), np.float32) as out:
        with pytest.raises(pyaclnn.ParamNullptrError) as info:
            pyaclnn.aclnnPreluGetWorkspaceSize(t, None, out)
    err = info.value
    assert err.code == 161001 and err.func == "aclnnPreluGetWorkspaceSize"
    assert "weight" in err.message


def test_wrong_argument_count_and_type(acl):
    with pytest.raises(TypeError, match="takes 3 arguments"):
        pyaclnn.aclnnPreluGetWorkspaceSize(None, None)
    with pytest.raises(TypeError, match="self"):
        pyaclnn.aclnnPreluGetWorkspaceSize(np.ones(3), None, None)


# ---- two-phase calls and executors -------------------------------------------------------------
def test_two_phase_call_consumes_a_normal_executor(acl, rng):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    w = np.array([0.25, -0.5, 2.0], np.float32)
    with pyaclnn.Tensor.from_numpy(x) as t, pyaclnn.Tensor.from_numpy(w) as tw, \
            pyaclnn.Tensor.empty(x.shape, np.float32, fill=np.nan) as out:
        size, executor = pyaclnn.aclnnPreluGetWorkspaceSize(t, tw, out)
        workspace = pyaclnn.DeviceBuffer(size) if size else None
        pyaclnn.aclnnPrelu(workspace, size, executor)
        assert executor.closed  # phase 2 owns and frees a normal executor
        executor.close()
        pyaclnn.synchronize()
        assert_close(out.numpy(), _prelu_reference(x, w))
        if workspace is not None:
            workspace.close()
    assert last_error() is None


def test_run_op_on_a_stream(acl, rng):
    x = rng.standard_normal((3, 2, 5)).astype(np.float16)
    w = np.array([0.1, 0.3], np.float16)
    with pyaclnn.Stream() as stream, pyaclnn.Tensor.from_numpy(x) as t, \
            pyaclnn.Tensor.from_numpy(w) as tw, pyaclnn.Tensor.empty(x.shape, np.float16) as out:
        pyaclnn.run_op("Prelu", t, tw, out, stream=stream)
        expected = np.where(x > 0, x, (x.astype(np.float32) * w.astype(np.float32)[None, :, None]))
        assert_close(out.numpy(), expected.astype(np.float16))


def test_repeatable_executor_rebinds_addresses(acl, rng):
    x1 = rng.standard_normal((4, 2)).astype(np.float32)
    x2 = rng.standard_normal((4, 2)).astype(np.float32)
    w = np.array([0.5, 3.0], np.float32)
    with pyaclnn.Tensor.from_numpy(x1) as t, pyaclnn.Tensor.from_numpy(w) as tw, \
            pyaclnn.Tensor.empty(x1.shape, np.float32) as out, \
            pyaclnn.DeviceBuffer(x2.nbytes) as second:
        second.copy_from_host(x2)
        size, executor = pyaclnn.aclnnPreluGetWorkspaceSize(t, tw, out)
        with executor.set_repeatable():
            pyaclnn.aclnnPrelu(None, size, executor)
            pyaclnn.synchronize()
            assert_close(out.numpy(), _prelu_reference(x1, w))
            assert not executor.closed
            executor.set_input_addr(0, t, second)
            pyaclnn.aclnnPrelu(None, size, executor)
            pyaclnn.synchronize()
            assert_close(out.numpy(), _prelu_reference(x2, w))
            assert executor.runs == 2
        assert executor.closed
    assert last_error() is None


def test_rebinding_follows_the_tensor_not_the_index(acl, rng):
    # As CANN's opbase: aclSet*TensorAddr sets the given tensor's address and the launch uses the
    # tensors the executor was planned with, whatever index the call names.
    x = rng.standard_normal((3, 2, 4)).astype(np.float32)
    w = np.array([0.5, 3.0], np.float32)
    w2 = np.array([-1.5, 0.25], np.float32)
    with pyaclnn.Tensor.from_numpy(x) as t, pyaclnn.Tensor.from_numpy(w) as tw, \
            pyaclnn.Tensor.empty(x.shape, np.float32) as out, \
            pyaclnn.Tensor.empty(x.shape, np.float32, fill=np.nan) as out2, \
            pyaclnn.DeviceBuffer(w2.nbytes) as second_weight:
        second_weight.copy_from_host(w2)
        size, executor = pyaclnn.aclnnPreluGetWorkspaceSize(t, tw, out)
        with executor.set_repeatable():
            executor.set_input_addr(0, tw, second_weight)     # index 0 is self's: the weight moves
            executor.set_output_addr(7, out, out2.buffer)     # no output 7: still out's address
            pyaclnn.aclnnPrelu(None, size, executor)
            pyaclnn.synchronize()
        assert_close(out2.numpy(), _prelu_reference(x, w2))
    assert last_error() is None


def test_raw_address_after_phase1_redirects_the_launch(acl, rng):
    x1 = rng.standard_normal((4, 2)).astype(np.float32)
    x2 = rng.standard_normal((4, 2)).astype(np.float32)
    w = np.array([0.5, -3.0], np.float32)
    with pyaclnn.Tensor.from_numpy(x1) as t, pyaclnn.Tensor.from_numpy(w) as tw, \
            pyaclnn.Tensor.empty(x1.shape, np.float32) as out, \
            pyaclnn.DeviceBuffer(x2.nbytes) as second:
        second.copy_from_host(x2)
        size, executor = pyaclnn.aclnnPreluGetWorkspaceSize(t, tw, out)
        assert lib.aclSetRawTensorAddr(t.ptr, second.ptr) == 0
        pyaclnn.aclnnPrelu(None, size, executor)            # a normal executor, not rebound
        pyaclnn.synchronize()
        assert_close(out.numpy(), _prelu_reference(x2, w))
        assert lib.aclSetRawTensorAddr(t.ptr, t.buffer.ptr) == 0
    assert last_error() is None


def test_tensor_destroyed_before_the_launch_is_an_error(acl, rng):
    x = rng.standard_normal((4, 2)).astype(np.float32)
    with pyaclnn.Tensor.from_numpy(x) as t, pyaclnn.Tensor.from_numpy(np.ones(2, np.float32)) as tw, \
            pyaclnn.Tensor.empty(x.shape, np.float32) as out:
        size, executor = pyaclnn.aclnnPreluGetWorkspaceSize(t, tw, out)
        tw.close()                                          # CANN would read freed memory here
        with pytest.raises(pyaclnn.ParamInvalidError, match="input tensor 1 .*destroyed"):
            pyaclnn.aclnnPrelu(None, size, executor)
        executor.close()


def test_executor_never_run_is_destroyed_on_close(acl):
    x = np.ones((2, 2), np.float32)
    with pyaclnn.Tensor.from_numpy(x) as t, pyaclnn.Tensor.from_numpy(np.ones(1, np.float32)) as w, \
            pyaclnn.Tensor.empty((2, 2), np.float32) as out:
        _, executor = pyaclnn.aclnnPreluGetWorkspaceSize(t, w, out)
        executor.close()
        executor.close()
        assert executor.closed
    assert last_error() is None


def test_phase2_without_executor_is_a_nullptr_error(acl):
    with pytest.raises(pyaclnn.ParamNullptrError):
        pyaclnn.aclnnPrelu(None, 0, None)


def test_free_array_releases_getter_arrays(acl):
    with pyaclnn.Tensor.from_numpy(np.zeros((2, 3, 4), np.int8)) as t:
        dims = ffi.new("int64_t **")
        count = ffi.new("uint64_t *")
        assert lib.aclGetViewShape(t.ptr, dims, count) == 0
        assert [dims[0][i] for i in range(count[0])] == [2, 3, 4]
        pyaclnn.free_array(dims[0])
        pyaclnn.free_array(ffi.NULL)  # NULL is a no-op
