"""Device memory, streams and events."""

import numpy as np

from ._core import ffi, lib, call_acl, ensure_init
from ._handle import Handle

# Objects an asynchronous launch must keep alive until its stream is synchronized:
# {stream handle value: [objects]}; key 0 is the default stream.
_in_flight = {}


def _stream_key(stream):
    if stream is None:
        return 0
    return int(ffi.cast("uintptr_t", stream.ptr))


def stream_ptr(stream):
    """The aclrtStream for a Stream, a raw cdata, or None (the default stream)."""
    if stream is None:
        return ffi.NULL
    if isinstance(stream, Stream):
        return stream.ptr
    return stream


def keep_until_synchronized(stream, *objects):
    _in_flight.setdefault(_stream_key(stream if isinstance(stream, Stream) else None), []).extend(objects)


def address_of(obj):
    """The device address (void *) of a DeviceBuffer, an int, a cdata pointer, or None (NULL)."""
    if obj is None:
        return ffi.NULL
    if isinstance(obj, DeviceBuffer):
        return obj.ptr
    if isinstance(obj, int):
        return ffi.cast("void *", obj)
    return ffi.cast("void *", obj)


class DeviceBuffer(Handle):
    """``nbytes`` of device memory from ``aclrtMalloc``; freed by ``aclrtFree`` on close().

    ``.ptr`` is the ``void *``, ``.address`` the same as an int, ``.nbytes`` the size asked for.
    """

    def __init__(self, nbytes, policy=None):
        ensure_init()
        nbytes = int(nbytes)
        if nbytes <= 0:
            raise ValueError("DeviceBuffer: nbytes must be positive (aclrtMalloc rejects 0), got %d"
                             % nbytes)
        if policy is None:
            policy = lib.ACL_MEM_MALLOC_HUGE_FIRST
        out = ffi.new("void **")
        call_acl("aclrtMalloc", out, nbytes, policy)
        self.nbytes = nbytes
        self._own(out[0], _free_device)

    @property
    def address(self):
        return int(ffi.cast("uintptr_t", self.ptr))

    def copy_from_host(self, array, offset=0):
        """Copy a numpy array's bytes (C order) to this buffer at byte ``offset`` (aclrtMemcpy H2D)."""
        host = np.ascontiguousarray(array)
        count = host.nbytes
        if offset < 0 or offset + count > self.nbytes:
            raise ValueError("copy_from_host: %d bytes at offset %d do not fit in %d bytes"
                             % (count, offset, self.nbytes))
        if count:
            dst = ffi.cast("char *", self.ptr) + offset
            call_acl("aclrtMemcpy", dst, self.nbytes - offset, ffi.from_buffer(host), count,
                     lib.ACL_MEMCPY_HOST_TO_DEVICE)

    def copy_to_host(self, out=None, nbytes=None, offset=0, dtype=np.uint8):
        """Copy bytes back (aclrtMemcpy D2H) into ``out`` or a new 1-D array of ``dtype``."""
        if out is None:
            dtype = np.dtype(dtype)
            if nbytes is None:
                nbytes = self.nbytes - offset
            out = np.empty(nbytes // dtype.itemsize, dtype=dtype)
        if not out.flags.c_contiguous or not out.flags.writeable:
            raise ValueError("copy_to_host: out must be a writeable C-contiguous array")
        count = out.nbytes
        if offset < 0 or offset + count > self.nbytes:
            raise ValueError("copy_to_host: %d bytes at offset %d exceed %d bytes"
                             % (count, offset, self.nbytes))
        if count:
            src = ffi.cast("char *", self.ptr) + offset
            call_acl("aclrtMemcpy", ffi.from_buffer(out), count, src, count,
                     lib.ACL_MEMCPY_DEVICE_TO_HOST)
        return out

    def memset(self, value=0, nbytes=None):
        """Fill bytes with ``value`` (aclrtMemset)."""
        nbytes = self.nbytes if nbytes is None else nbytes
        call_acl("aclrtMemset", self.ptr, self.nbytes, int(value), nbytes)


def _free_device(ptr):
    lib.aclrtFree(ptr)


class Stream(Handle):
    """An ``aclrtStream`` (aclrtCreateStream); close() destroys it after its work finishes."""

    def __init__(self):
        ensure_init()
        out = ffi.new("aclrtStream *")
        call_acl("aclrtCreateStream", out)
        self._own(out[0], _destroy_stream)

    def synchronize(self):
        """Wait for every task queued on the stream; raise AclError for a failed task."""
        synchronize(self)

    def close(self):
        if not self.closed:
            key = _stream_key(self)
            super().close()
            _in_flight.pop(key, None)


def _destroy_stream(ptr):
    lib.aclrtDestroyStream(ptr)


def synchronize(stream=None):
    """aclrtSynchronizeStream(stream); None is the default stream.  Raises AclError on failure."""
    ensure_init()
    key = _stream_key(stream if isinstance(stream, Stream) else None)
    try:
        call_acl("aclrtSynchronizeStream", stream_ptr(stream))
    finally:
        _in_flight.pop(key, None)


def synchronize_device():
    """aclrtSynchronizeDevice(): wait for every stream of the current device."""
    ensure_init()
    try:
        call_acl("aclrtSynchronizeDevice")
    finally:
        _in_flight.clear()


class Event(Handle):
    """An ``aclrtEvent``.  ``flag`` selects aclrtCreateEventWithFlag (e.g. lib.ACL_EVENT_SYNC)."""

    def __init__(self, flag=None):
        ensure_init()
        out = ffi.new("aclrtEvent *")
        if flag is None:
            call_acl("aclrtCreateEvent", out)
        else:
            call_acl("aclrtCreateEventWithFlag", out, flag)
        self._own(out[0], _destroy_event)

    def record(self, stream=None):
        """Capture the work queued so far on ``stream`` (aclrtRecordEvent)."""
        call_acl("aclrtRecordEvent", self.ptr, stream_ptr(stream))

    def wait(self, stream=None):
        """Make later work on ``stream`` wait for this event (aclrtStreamWaitEvent)."""
        call_acl("aclrtStreamWaitEvent", stream_ptr(stream), self.ptr)

    def synchronize(self):
        """Block until the captured work is done (aclrtSynchronizeEvent)."""
        call_acl("aclrtSynchronizeEvent", self.ptr)

    def query(self):
        """True when the captured work is complete (aclrtQueryEventStatus)."""
        status = ffi.new("aclrtEventRecordedStatus *")
        call_acl("aclrtQueryEventStatus", self.ptr, status)
        return status[0] == lib.ACL_EVENT_RECORDED_STATUS_COMPLETE

    def elapsed_time(self, end):
        """Milliseconds from this event to ``end`` (aclrtEventElapsedTime)."""
        ms = ffi.new("float *")
        call_acl("aclrtEventElapsedTime", ms, self.ptr, end.ptr)
        return float(ms[0])


def _destroy_event(ptr):
    lib.aclrtDestroyEvent(ptr)


def memcpy(dst, dst_size, src, count, kind):
    """aclrtMemcpy with AclError on failure (addresses as DeviceBuffer, int or cdata)."""
    if isinstance(src, np.ndarray):
        src = ffi.from_buffer(src)
    if isinstance(dst, np.ndarray):
        dst = ffi.from_buffer(dst)
    call_acl("aclrtMemcpy", address_of(dst) if not isinstance(dst, ffi.CData) else dst, dst_size,
             address_of(src) if not isinstance(src, ffi.CData) else src, count, kind)

