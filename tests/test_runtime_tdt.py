"""Data channels and queues through pyaclnn's cffi binding (docs/runtime.md, "Data channels and
queues"): NumPy arrays of several dtypes and shapes go through a channel as one dataset and come
back equal, element for element, with their dims and ACL dtypes; bytes with user data go through
a queue between two Python threads in order; a process started with multiprocessing's "spawn"
(a fresh interpreter that loads the library anew) reaches a queue by its id once granted.
The references are the NumPy arrays themselves: the library must hand back exactly what it was
given."""
import multiprocessing
import os
import threading

import ml_dtypes
import numpy as np
import pytest

QUEUE_EMPTY = 207013
PERMISSION_DEQUEUE, PERMISSION_ENQUEUE = 2, 4

# NumPy dtype -> ACL dtype code (acl_base.h: aclDataType).
ACL_DTYPES = [(np.float32, 0), (np.float16, 1), (np.int8, 2), (np.int32, 3), (np.uint8, 4), (np.int64, 9),
              (np.float64, 11), (np.bool_, 12), (ml_dtypes.bfloat16, 27)]


def _new_channel(acl, name, capacity):
    ch = acl.lib.acltdtCreateChannelWithCapacity(0, name.encode(), capacity)
    assert ch != acl.ffi.NULL, acl.recent_error_message()
    return ch


def test_arrays_round_trip_through_a_channel(acl, rng):
    lib, ffi = acl.lib, acl.ffi
    shapes = [(2, 3), (5,), (), (1, 4, 2), (3, 1)]
    arrays = []
    for i, (dtype, _) in enumerate(ACL_DTYPES):
        shape = shapes[i % len(shapes)]
        values = np.clip(rng.standard_normal(shape) * 50, -120, 120)  # every dtype holds it
        arrays.append(np.ascontiguousarray(values.astype(dtype) if dtype != np.bool_ else values > 0))
    ch = _new_channel(acl, "py_trip_%d" % os.getpid(), 4)
    sent = lib.acltdtCreateDataset()
    keep = []  # the items point at the arrays' memory until the send copied it
    for array, (_, code) in zip(arrays, ACL_DTYPES):
        dims = ffi.new("int64_t[]", list(array.shape) or [0])
        item = lib.acltdtCreateDataItem(0, dims if array.ndim else ffi.NULL, array.ndim, code,
                                        ffi.cast("void *", array.ctypes.data), array.nbytes)
        assert item != ffi.NULL, acl.recent_error_message()
        keep.append(item)
        assert lib.acltdtAddDataItem(sent, item) == 0
    assert lib.acltdtSendTensor(ch, sent, 1000) == 0, acl.recent_error_message()
    size = ffi.new("size_t *")
    assert lib.acltdtQueryChannelSize(ch, size) == 0 and size[0] == 1

    got = lib.acltdtCreateDataset()
    assert lib.acltdtReceiveTensor(ch, got, 1000) == 0, acl.recent_error_message()
    assert lib.acltdtGetDatasetSize(got) == len(arrays)
    for i, (array, (dtype, code)) in enumerate(zip(arrays, ACL_DTYPES)):
        item = lib.acltdtGetDataItem(got, i)
        assert lib.acltdtGetDataTypeFromItem(item) == code
        ndim = lib.acltdtGetDimNumFromItem(item)
        dims = ffi.new("int64_t[]", max(ndim, 1))
        if ndim:
            assert lib.acltdtGetDimsFromItem(item, dims, ndim) == 0
        assert tuple(dims[j] for j in range(ndim)) == array.shape
        nbytes = lib.acltdtGetDataSizeFromItem(item)
        assert nbytes == array.nbytes
        raw = ffi.buffer(lib.acltdtGetDataAddrFromItem(item), nbytes)
        back = np.frombuffer(raw, dtype=dtype).reshape(array.shape)
        np.testing.assert_array_equal(back.view(np.uint8), array.view(np.uint8))
    assert lib.acltdtDestroyDataset(got) == 0
    for item in keep:
        lib.acltdtDestroyDataItem(item)
    lib.acltdtDestroyDataset(sent)
    assert lib.acltdtDestroyChannel(ch) == 0


def _make_queue(acl, depth):
    qid = acl.ffi.new("uint32_t *")
    attr = acl.lib.acltdtCreateQueueAttr()
    value = acl.ffi.new("uint32_t *", depth)
    assert acl.lib.acltdtSetQueueAttr(attr, 1, 4, value) == 0
    assert acl.lib.acltdtCreateQueue(attr, qid) == 0, acl.recent_error_message()
    acl.lib.acltdtDestroyQueueAttr(attr)
    return qid[0]


def test_bytes_between_two_threads(acl, rng):
    lib, ffi = acl.lib, acl.ffi
    qid = _make_queue(acl, 3)
    messages = [rng.integers(0, 256, size=int(n), dtype=np.uint8) for n in rng.integers(1, 5000, size=100)]
    received, tags = [], []

    def consume():
        buf = ffi.new("unsigned char[]", 5000)
        user = ffi.new("uint32_t *")
        got = ffi.new("size_t *")
        for _ in messages:
            assert lib.acltdtDequeueData(qid, buf, 5000, got, user, 4, -1) == 0
            received.append(np.frombuffer(ffi.buffer(buf, got[0]), dtype=np.uint8).copy())
            tags.append(user[0])

    thread = threading.Thread(target=consume)
    thread.start()
    for i, message in enumerate(messages):
        tag = ffi.new("uint32_t *", 1000 + i)
        assert lib.acltdtEnqueueData(qid, ffi.from_buffer(message), message.nbytes, tag, 4, -1, 0) == 0
    thread.join()
    assert tags == [1000 + i for i in range(len(messages))]
    for want, got in zip(messages, received):
        np.testing.assert_array_equal(got, want)
    assert lib.acltdtDequeueData(qid, ffi.new("char[8]"), 8, ffi.new("size_t *"), ffi.NULL, 0, 0) == QUEUE_EMPTY
    assert lib.acltdtDestroyQueue(qid) == 0


def _other_process(qid, answer_qid, ready):
    import pyaclnn
    pyaclnn.init()
    lib, ffi = pyaclnn.lib, pyaclnn.ffi
    ready.put("started")
    permission = ffi.new("uint32_t *")
    assert lib.acltdtAttachQueue(qid, 10000, permission) == 0, pyaclnn.recent_error_message()
    assert lib.acltdtAttachQueue(answer_qid, 10000, permission) == 0
    buf = ffi.new("double[16]")
    got = ffi.new("size_t *")
    assert lib.acltdtDequeueData(qid, buf, ffi.sizeof(buf), got, ffi.NULL, 0, 10000) == 0
    values = np.frombuffer(ffi.buffer(buf, got[0]), dtype=np.float64)
    answer = np.ascontiguousarray(np.cumsum(values))
    assert lib.acltdtEnqueueData(answer_qid, ffi.from_buffer(answer), answer.nbytes, ffi.NULL, 0, 10000, 0) == 0


def test_a_spawned_process_reaches_a_queue_by_id(acl, rng):
    lib, ffi = acl.lib, acl.ffi
    qid, answer_qid = _make_queue(acl, 2), _make_queue(acl, 2)
    values = rng.standard_normal(16)
    context = multiprocessing.get_context("spawn")
    ready = context.Queue()
    child = context.Process(target=_other_process, args=(qid, answer_qid, ready))
    child.start()
    assert ready.get(timeout=60) == "started"
    assert lib.acltdtGrantQueue(qid, child.pid, PERMISSION_DEQUEUE, 0) == 0, acl.recent_error_message()
    assert lib.acltdtGrantQueue(answer_qid, child.pid, PERMISSION_ENQUEUE, 0) == 0
    assert lib.acltdtEnqueueData(qid, ffi.from_buffer(values), values.nbytes, ffi.NULL, 0, 1000, 0) == 0
    buf = ffi.new("double[16]")
    got = ffi.new("size_t *")
    code = lib.acltdtDequeueData(answer_qid, buf, ffi.sizeof(buf), got, ffi.NULL, 0, 30000)
    child.join(60)
    assert code == 0 and child.exitcode == 0, acl.recent_error_message()
    np.testing.assert_array_equal(np.frombuffer(ffi.buffer(buf, got[0]), dtype=np.float64), np.cumsum(values))
    assert lib.acltdtDestroyQueue(qid) == 0 and lib.acltdtDestroyQueue(answer_qid) == 0


@pytest.mark.parametrize("capacity", [1, 8193])
def test_capacity_outside_the_documented_range_is_refused(acl, capacity):
    assert acl.lib.acltdtCreateChannelWithCapacity(0, b"py_bad_capacity", capacity) == acl.ffi.NULL
    assert "capacity" in (acl.recent_error_message() or "")
