"""Tensors, arrays, scalars and lists: the aclnn meta objects (``aclnn/acl_meta.h``)."""

import math

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ._core import ffi, lib, call_aclnn, ensure_init, function, recent_error_message
from ._dtypes import acl_dtype, numpy_dtype, dtype_name, is_floating, native_byte_order
from ._handle import Handle
from ._runtime import DeviceBuffer, address_of

# The byte written into unused storage of integer/bool tensors when the fill is NaN: an
# arbitrary, recognisable value that no kernel is likely to produce by accident.
GARBAGE_BYTE = 0x5A


def _created(ptr, func):
    """aclCreate* returns NULL on failure (no status): turn that into an exception."""
    if ptr == ffi.NULL:
        message = recent_error_message()
        raise ValueError("%s returned NULL%s" % (func, ": " + message if message else ""))
    return ptr


def acl_format(fmt):
    """An aclFormat code from None (ND), a name ('NCHW', 'ACL_FORMAT_NCL') or an int."""
    if fmt is None:
        return lib.ACL_FORMAT_ND
    if isinstance(fmt, str):
        name = fmt.upper()
        for candidate in (name, "ACL_FORMAT_" + name, "ACL_" + name):
            if hasattr(lib, candidate):
                return getattr(lib, candidate)
        raise ValueError("unknown aclFormat %r" % fmt)
    return int(fmt)


def contiguous_strides(shape):
    """Row-major strides, in elements."""
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * max(int(shape[i + 1]), 1)
    return tuple(strides)


def storage_extent(shape, strides, offset):
    """Smallest storage element count that holds the view (offset only, for an empty view)."""
    if any(int(d) == 0 for d in shape):
        return int(offset)
    return int(offset) + sum((int(d) - 1) * int(s) for d, s in zip(shape, strides)) + 1


def _int64_array(values, what):
    arr = np.ascontiguousarray(np.asarray(values, dtype=np.int64).reshape(-1))
    return arr, (ffi.from_buffer("int64_t[]", arr) if arr.size else ffi.NULL)


class Tensor(Handle):
    """An ``aclTensor`` descriptor plus the device storage it points to.

    Most code uses the constructors below.  The general form describes any view::

        Tensor(shape, dtype, strides=None, offset=0, storage_shape=None, format=None,
               buffer=None, allocate=True)

    ``strides``/``offset`` are in elements (as in ``aclCreateTensor``); ``storage_shape`` defaults to
    ``shape`` for a contiguous tensor and to ``(minimum element count,)`` otherwise; ``buffer`` is a
    :class:`DeviceBuffer` to point at (else one is allocated, unless ``allocate=False`` which leaves
    the data address NULL).  close() destroys the descriptor and frees the storage it allocated.
    """

    def __init__(self, shape, dtype, strides=None, offset=0, storage_shape=None, format=None,
                 buffer=None, allocate=True):
        ensure_init()
        self.shape = tuple(int(d) for d in shape)
        self.dtype = acl_dtype(dtype)
        self.np_dtype = numpy_dtype(self.dtype)
        self.strides = (contiguous_strides(self.shape) if strides is None
                        else tuple(int(s) for s in strides))
        if len(self.strides) != len(self.shape):
            raise ValueError("Tensor: %d strides for %d dims" % (len(self.strides), len(self.shape)))
        self.offset = int(offset)
        if storage_shape is None:
            if strides is None and self.offset == 0:
                storage_shape = self.shape
            else:
                storage_shape = (storage_extent(self.shape, self.strides, self.offset),)
        self.storage_shape = tuple(int(d) for d in storage_shape)
        self.format = acl_format(format)
        self._allocated = None    # the storage this object allocated, freed by close()
        # A negative dim (CANN's op_api test harness makes such a tensor with storage dims = view
        # dims) describes no memory: nothing is allocated and the data methods refuse it, as every
        # operator refuses it in phase 1.
        self.owns_no_data = any(d < 0 for d in self.shape + self.storage_shape)
        if buffer is None and allocate and not self.owns_no_data:
            buffer = self._allocated = DeviceBuffer(max(self.storage_nbytes, 1))
        self.buffer = buffer
        dims, dims_p = _int64_array(self.shape, "shape")
        strides_arr, strides_p = _int64_array(self.strides, "strides")
        storage, storage_p = _int64_array(self.storage_shape, "storage")
        ptr = lib.aclCreateTensor(dims_p, len(self.shape), self.dtype, strides_p, self.offset,
                                  self.format, storage_p, len(self.storage_shape),
                                  address_of(buffer))
        self._own(_created(ptr, "aclCreateTensor"), lib.aclDestroyTensor)
        self._keep.append(buffer)

    # ---- constructors ----------------------------------------------------------------------
    @classmethod
    def from_numpy(cls, array, format=None):
        """A contiguous device copy of ``array`` (any numpy layout; copied with aclrtMemcpy)."""
        array = native_byte_order(np.asarray(array))
        tensor = cls(array.shape, array.dtype, format=format)
        tensor.buffer.copy_from_host(np.ascontiguousarray(array).reshape(-1))
        return tensor

    @classmethod
    def empty(cls, shape, dtype, format=None, fill=None):
        """An uninitialised contiguous tensor, or one prefilled with ``fill`` (e.g. np.nan)."""
        if isinstance(shape, (int, np.integer)):
            shape = (int(shape),)
        tensor = cls(shape, dtype, format=format)
        if fill is not None:
            tensor.buffer.copy_from_host(_filled(tensor.np_dtype, tensor.storage_numel, fill))
        return tensor

    @classmethod
    def strided(cls, array, strides=None, offset=0, storage_numel=None, format=None, fill=np.nan):
        """A device tensor whose *view* holds ``array``'s values through the given layout.

        View shape = ``array.shape``; ``strides`` and ``offset`` in elements (default: contiguous,
        0); ``storage_numel`` defaults to the minimum that holds the view.  Storage elements the
        view does not reach are set to ``fill`` (NaN for floating types; for integer and bool
        types a NaN fill writes the byte 0x5A), so a kernel that reads or writes outside the view
        shows up in the result.  See ``pyaclnn.testing.layouts(shape)`` for ready-made layouts.
        """
        array = np.asarray(array)
        shape = array.shape
        strides = contiguous_strides(shape) if strides is None else tuple(int(s) for s in strides)
        needed = storage_extent(shape, strides, offset)
        if storage_numel is None:
            storage_numel = needed
        if storage_numel < needed:
            raise ValueError("Tensor.strided: storage_numel %d < %d needed by the layout"
                             % (storage_numel, needed))
        np_dtype = numpy_dtype(array.dtype)
        host = _filled(np_dtype, storage_numel, fill)
        if array.size:
            _view_of(host, shape, strides, offset)[...] = array
        tensor = cls(shape, np_dtype, strides=strides, offset=offset,
                     storage_shape=(storage_numel,), format=format)
        tensor.buffer.copy_from_host(host)
        return tensor

    # ---- properties ------------------------------------------------------------------------
    @property
    def ndim(self):
        return len(self.shape)

    @property
    def numel(self):
        return math.prod(self.shape)

    @property
    def storage_numel(self):
        return math.prod(self.storage_shape)

    @property
    def itemsize(self):
        return self.np_dtype.itemsize

    @property
    def storage_nbytes(self):
        return self.storage_numel * self.itemsize

    @property
    def is_contiguous(self):
        return self.strides == contiguous_strides(self.shape) or self.numel <= 1

    @property
    def address(self):
        """The data address (int) the descriptor holds, or 0."""
        buf = self.buffer
        if isinstance(buf, DeviceBuffer):
            return buf.address
        return int(ffi.cast("uintptr_t", address_of(buf)))

    # ---- data ------------------------------------------------------------------------------
    def storage_numpy(self):
        """The whole storage buffer, as a 1-D numpy array (aclrtMemcpy D2H)."""
        self._check_owns_data("storage_numpy")
        if not isinstance(self.buffer, DeviceBuffer):
            raise ValueError("Tensor.storage_numpy: the tensor has no DeviceBuffer")
        out = np.empty(self.storage_numel, dtype=self.np_dtype)
        if out.nbytes:
            self.buffer.copy_to_host(out.view(np.uint8))
        return out

    def numpy(self):
        """The view's values as a new contiguous numpy array (respects strides and offset)."""
        self._check_owns_data("numpy")
        if self.numel == 0:
            return np.empty(self.shape, dtype=self.np_dtype)
        storage = self.storage_numpy()
        return np.array(_view_of(storage, self.shape, self.strides, self.offset))

    def copy_from_numpy(self, array):
        """Write ``array`` (shape = view shape) into the view, leaving other storage untouched."""
        self._check_owns_data("copy_from_numpy")
        array = np.asarray(array, dtype=self.np_dtype)
        if array.shape != self.shape:
            raise ValueError("copy_from_numpy: shape %s != tensor shape %s" % (array.shape, self.shape))
        if self.is_contiguous and self.offset == 0 and self.storage_numel == self.numel:
            self.buffer.copy_from_host(np.ascontiguousarray(array).reshape(-1))
            return
        storage = self.storage_numpy()
        _view_of(storage, self.shape, self.strides, self.offset)[...] = array
        self.buffer.copy_from_host(storage)

    def _check_owns_data(self, what):
        if self.owns_no_data:
            raise ValueError("Tensor.%s: shape %s (storage %s) has a negative dim: the tensor owns no "
                             "data" % (what, self.shape, self.storage_shape))

    def set_addr(self, buffer):
        """Point the descriptor at another buffer or address (aclSetRawTensorAddr)."""
        call_aclnn("aclSetRawTensorAddr", self.ptr, address_of(buffer))
        self.buffer = buffer
        self._keep.append(buffer)

    def get_addr(self):
        """The data address the library holds (aclGetRawTensorAddr), as an int."""
        out = ffi.new("void **")
        call_aclnn("aclGetRawTensorAddr", self.ptr, out)
        return int(ffi.cast("uintptr_t", out[0]))

    def clone_descriptor(self):
        """A new aclTensor (raw cdata, caller owns it) with this tensor's view and address."""
        dims, dims_p = _int64_array(self.shape, "shape")
        strides_arr, strides_p = _int64_array(self.strides, "strides")
        storage, storage_p = _int64_array(self.storage_shape, "storage")
        ptr = lib.aclCreateTensor(dims_p, len(self.shape), self.dtype, strides_p, self.offset,
                                  self.format, storage_p, len(self.storage_shape),
                                  address_of(self.buffer))
        return _created(ptr, "aclCreateTensor")

    def close(self):
        super().close()
        if self._allocated is not None:
            self._allocated.close()
            self._allocated = None

    def __repr__(self):
        if self.closed:
            return "<Tensor closed>"
        extra = "" if self.is_contiguous and self.offset == 0 else \
            " strides=%s offset=%d storage=%s" % (self.strides, self.offset, self.storage_shape)
        return "<Tensor %s %s%s>" % (dtype_name(self.dtype), self.shape, extra)


def _view_of(storage, shape, strides, offset):
    """A numpy view of a 1-D storage array through element strides and offset."""
    itemsize = storage.dtype.itemsize
    byte_strides = tuple(s * itemsize for s in strides)
    try:
        return as_strided(storage[offset:], shape=shape, strides=byte_strides, writeable=True)
    except TypeError:
        # as_strided rebuilds the array from its interface, which numpy cannot read for the
        # float8 types ('<f1'): stride a same-width unsigned view and view it back
        plain = storage[offset:].view(np.dtype("u%d" % itemsize))
        return as_strided(plain, shape=shape, strides=byte_strides, writeable=True).view(storage.dtype)


def _filled(np_dtype, count, fill):
    """A 1-D host array of ``count`` elements set to ``fill`` (see Tensor.strided for NaN)."""
    np_dtype = np.dtype(np_dtype)
    is_nan = isinstance(fill, float) and math.isnan(fill)
    if is_nan and not (is_floating(np_dtype) or np_dtype.kind == "c"):
        out = np.empty(count, dtype=np_dtype)
        out.view(np.uint8)[...] = GARBAGE_BYTE
        return out
    return np.full(count, fill, dtype=np_dtype)


class _Array(Handle):
    _np_type = None
    _c_type = None
    _create = None
    _destroy = None
    _size = None

    def __init__(self, values):
        ensure_init()
        arr = np.ascontiguousarray(np.asarray(values, dtype=self._np_type).reshape(-1))
        self.host = arr
        data = ffi.from_buffer(self._c_type + "[]", arr) if arr.size else ffi.NULL
        ptr = function(self._create)(data, arr.size)
        self._own(_created(ptr, self._create), getattr(lib, self._destroy))
        self._keep.append(arr)

    @property
    def values(self):
        """The values as a tuple of Python numbers."""
        return tuple(self.host.tolist())

    def size(self):
        """The element count the library reports (aclGet*ArraySize)."""
        out = ffi.new("uint64_t *")
        call_aclnn(self._size, self.ptr, out)
        return int(out[0])

    def __len__(self):
        return int(self.host.size)

    def __repr__(self):
        return "<%s %s>" % (type(self).__name__, "closed" if self.closed else list(self.values))


class IntArray(_Array):
    """An ``aclIntArray`` of int64 values (copied by the library at creation)."""
    _np_type, _c_type = np.int64, "int64_t"
    _create, _destroy, _size = "aclCreateIntArray", "aclDestroyIntArray", "aclGetIntArraySize"


class FloatArray(_Array):
    """An ``aclFloatArray`` of float32 values."""
    _np_type, _c_type = np.float32, "float"
    _create, _destroy, _size = "aclCreateFloatArray", "aclDestroyFloatArray", "aclGetFloatArraySize"


class BoolArray(_Array):
    """An ``aclBoolArray`` of bool values."""
    _np_type, _c_type = np.bool_, "bool"
    _create, _destroy, _size = "aclCreateBoolArray", "aclDestroyBoolArray", "aclGetBoolArraySize"


def _default_scalar_dtype(value):
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (int, np.integer)):
        return "int64"
    if isinstance(value, complex):
        return "complex64"
    if isinstance(value, np.generic):
        return value.dtype
    return "float32"


class Scalar(Handle):
    """An ``aclScalar``: ``Scalar(1.5, 'float32')``; dtype defaults to FLOAT / INT64 / BOOL."""

    def __init__(self, value, dtype=None):
        ensure_init()
        self.dtype = acl_dtype(_default_scalar_dtype(value) if dtype is None else dtype)
        self.np_dtype = numpy_dtype(self.dtype)
        self.host = np.array([value], dtype=self.np_dtype)
        ptr = lib.aclCreateScalar(ffi.cast("void *", ffi.from_buffer(self.host)), self.dtype)
        self._own(_created(ptr, "aclCreateScalar"), lib.aclDestroyScalar)
        self._keep.append(self.host)

    @property
    def value(self):
        return self.host[0].item()

    def __repr__(self):
        return "<Scalar %s %r>" % (dtype_name(self.dtype), None if self.closed else self.value)


class TensorList(Handle):
    """An ``aclTensorList`` over :class:`Tensor` objects.

    CANN's list owns its elements (aclDestroyTensorList destroys them), so the list is built
    from *copies* of the tensors' descriptors; the Tensor objects stay usable and are kept alive
    (with their storage) for as long as the list is.
    """

    def __init__(self, tensors):
        ensure_init()
        self.tensors = list(tensors)
        clones = ffi.new("aclTensor *[]", max(len(self.tensors), 1))
        made = []
        try:
            for i, tensor in enumerate(self.tensors):
                clones[i] = tensor.clone_descriptor()
                made.append(clones[i])
        except Exception:
            for ptr in made:
                lib.aclDestroyTensor(ptr)
            raise
        ptr = lib.aclCreateTensorList(clones, len(self.tensors))
        if ptr == ffi.NULL:
            for p in made:
                lib.aclDestroyTensor(p)
        self._own(_created(ptr, "aclCreateTensorList"), lib.aclDestroyTensorList)
        self._keep.extend(self.tensors)

    def __len__(self):
        return len(self.tensors)

    def __getitem__(self, i):
        return self.tensors[i]


class ScalarList(Handle):
    """An ``aclScalarList``; like TensorList it owns private copies of the scalars."""

    def __init__(self, scalars):
        ensure_init()
        self.scalars = [s if isinstance(s, Scalar) else Scalar(s) for s in scalars]
        clones = ffi.new("aclScalar *[]", max(len(self.scalars), 1))
        made = []
        for i, s in enumerate(self.scalars):
            clone = lib.aclCreateScalar(ffi.cast("void *", ffi.from_buffer(s.host)), s.dtype)
            clones[i] = _created(clone, "aclCreateScalar")
            made.append(clone)
        ptr = lib.aclCreateScalarList(clones, len(self.scalars))
        if ptr == ffi.NULL:
            for p in made:
                lib.aclDestroyScalar(p)
        self._own(_created(ptr, "aclCreateScalarList"), lib.aclDestroyScalarList)
        self._keep.extend(self.scalars)

    def __len__(self):
        return len(self.scalars)


# ---- getters that return library-allocated arrays ---------------------------------------------
_array_freer = None


def _find_array_freer():
    """How to release the int64 arrays aclGetViewShape & co. allocate.

    libaclnn exports ``aclnnCpuFreeArray``; real CANN allocates them with C++ ``new[]``, so
    the fallback is libstdc++'s ``operator delete[]`` (``_ZdaPv``).
    """
    try:
        return lib.aclnnCpuFreeArray
    except AttributeError:
        pass
    import cffi
    helper = cffi.FFI()
    helper.cdef("void aclnnCpuFreeArray(void *); void _ZdaPv(void *);")
    from ._core import LIBRARY_PATH
    for path, name in ((LIBRARY_PATH.split(":")[-1], "aclnnCpuFreeArray"),
                       ("libstdc++.so.6", "_ZdaPv")):
        try:
            handle = helper.dlopen(path)
            fn = getattr(handle, name)
        except (OSError, AttributeError):
            continue
        return lambda ptr, fn=fn, keep=handle: fn(helper.cast("void *", int(ffi.cast("uintptr_t", ptr))))
    raise NotImplementedError("no way to free arrays returned by aclGetViewShape: neither "
                              "aclnnCpuFreeArray nor libstdc++'s operator delete[] was found")


def free_array(ptr):
    """Release an array returned by aclGetViewShape / aclGetStorageShape / aclGetViewStrides."""
    global _array_freer
    if ptr == ffi.NULL:
        return
    if _array_freer is None:
        _array_freer = _find_array_freer()
    _array_freer(ffi.cast("void *", ptr))


def _tensor_ptr(tensor):
    return tensor.ptr if isinstance(tensor, Tensor) else tensor


def _get_int64_list(func, tensor):
    values = ffi.new("int64_t **")
    count = ffi.new("uint64_t *")
    call_aclnn(func, _tensor_ptr(tensor), values, count)
    try:
        return tuple(int(values[0][i]) for i in range(count[0]))
    finally:
        free_array(values[0])


def get_view_shape(tensor):
    """aclGetViewShape as a tuple (the library's array is freed for you)."""
    return _get_int64_list("aclGetViewShape", tensor)


def get_view_strides(tensor):
    """aclGetViewStrides as a tuple."""
    return _get_int64_list("aclGetViewStrides", tensor)


def get_storage_shape(tensor):
    """aclGetStorageShape as a tuple."""
    return _get_int64_list("aclGetStorageShape", tensor)


def get_view_offset(tensor):
    """aclGetViewOffset as an int."""
    out = ffi.new("int64_t *")
    call_aclnn("aclGetViewOffset", _tensor_ptr(tensor), out)
    return int(out[0])


def get_format(tensor):
    """aclGetFormat as an aclFormat int."""
    out = ffi.new("aclFormat *")
    call_aclnn("aclGetFormat", _tensor_ptr(tensor), out)
    return int(out[0])


def get_data_type(tensor):
    """aclGetDataType as an aclDataType int."""
    out = ffi.new("aclDataType *")
    call_aclnn("aclGetDataType", _tensor_ptr(tensor), out)
    return int(out[0])

