"""The caller's arrays as aclTensor views, and results in the caller's kind, without copies.

An *operand* is what a functional call needs to know about an input array: where its first
byte is, its shape and strides in elements, its aclDataType, and the object that keeps the
memory alive.  numpy arrays, torch CPU tensors (any dtype the ops take, bf16 included) and any
CPU object with ``__dlpack__`` are read in place; only a numpy view whose strides are not whole
elements is copied.  torch is optional: it is imported only when a torch tensor is passed.

Results come back in the inputs' kind: torch in -> torch out, numpy (or DLPack) in -> numpy out.
"""

import sys

import numpy as np

from ._dtypes import acl_dtype, native_byte_order, numpy_dtype
from ._meta import contiguous_strides  # noqa: F401  (used by _dispatch too)

# kinds of array a call can take and return
NUMPY = "numpy"
TORCH = "torch"

_NUMPY_CODES = {}      # np.dtype -> aclDataType, filled on first use of each dtype
_TORCH_CODES = None    # torch.dtype -> aclDataType, built on first torch input
_TORCH_DTYPES = None   # aclDataType -> torch.dtype


class Operand:
    """One input array as the library sees it.

    ``address``: the lowest byte the view touches (an int); ``offset``: elements from there to
    the view's first element (non-zero only for negative strides); ``shape``/``strides`` in
    elements; ``extent``: elements from ``address`` to the last one the view touches, plus one;
    ``signature``: what a cached executor depends on (shape, strides, dtype - not the address);
    ``owner``: the object that keeps the memory alive for the call.
    """

    __slots__ = ("address", "offset", "shape", "strides", "dtype", "extent", "signature", "owner")

    def __init__(self, address, offset, shape, strides, dtype, owner):
        self.address = address
        self.offset = offset
        self.shape = shape
        self.strides = strides
        self.dtype = dtype
        self.owner = owner
        self.signature = (shape, strides, dtype)
        extent = offset + 1
        for dim, stride in zip(shape, strides):
            if dim == 0:
                extent = 0
                break
            if stride > 0:
                extent += stride * (dim - 1)
        self.extent = extent

    @property
    def nbytes_spanned(self):
        """Bytes from ``address`` to the end of the last element the view touches."""
        return self.extent * self.itemsize

    @property
    def itemsize(self):
        return numpy_dtype(self.dtype).itemsize


def _numpy_code(dtype):
    code = _NUMPY_CODES.get(dtype)
    if code is None:
        code = _NUMPY_CODES[dtype] = acl_dtype(dtype)
    return code


def _torch_module():
    return sys.modules.get("torch")


def is_torch_tensor(obj):
    torch = _torch_module()
    return torch is not None and isinstance(obj, torch.Tensor)


def _torch_tables():
    global _TORCH_CODES, _TORCH_DTYPES
    if _TORCH_CODES is None:
        import torch
        names = ["float32", "float16", "bfloat16", "float64", "int8", "int16", "int32", "int64",
                 "uint8", "bool", "complex64", "complex128", "uint16", "uint32", "uint64"]
        codes = {}
        for name in names:
            dtype = getattr(torch, name, None)
            if dtype is not None:
                codes[dtype] = acl_dtype(name)
        _TORCH_DTYPES = {code: dtype for dtype, code in codes.items()}
        _TORCH_CODES = codes
    return _TORCH_CODES


def torch_dtype(code):
    """The torch dtype for an aclDataType code."""
    _torch_tables()
    try:
        return _TORCH_DTYPES[code]
    except KeyError:
        raise TypeError("pyaclnn: torch has no dtype for aclDataType %d" % code) from None


def _from_numpy(array):
    if not array.dtype.isnative:
        array = native_byte_order(array)
    code = _numpy_code(array.dtype)
    itemsize = array.itemsize
    address = array.__array_interface__["data"][0]
    if array.flags.c_contiguous:
        shape = array.shape
        strides = contiguous_strides(shape)
        return Operand(address, 0, shape, strides, code, array)
    byte_strides = array.strides
    if any(s % itemsize for s in byte_strides):
        array = np.ascontiguousarray(array)   # fields of a record, odd byte strides: no view
        return _from_numpy(array)
    strides = tuple(s // itemsize for s in byte_strides)
    # aclTensor views start at an offset from their base; a negative stride reaches below the
    # first element, so the base is the lowest element the view touches.
    below = sum(s * (d - 1) for s, d in zip(strides, array.shape) if s < 0 and d > 0)
    return Operand(address + below * itemsize, -below, array.shape, strides, code, array)


def _from_torch(tensor):
    if tensor.device.type != "cpu":
        raise TypeError("pyaclnn: tensors must be on the CPU (got device %s); move them with .cpu()"
                        % tensor.device)
    if tensor.requires_grad:
        tensor = tensor.detach()
    if tensor.is_conj() or tensor.is_neg():
        tensor = tensor.resolve_conj().resolve_neg()
    code = dtype_code(tensor)
    shape = tuple(tensor.shape)
    strides = tuple(tensor.stride())
    return Operand(tensor.data_ptr(), 0, shape, strides, code, tensor)


def operand(obj, name="argument"):
    """An :class:`Operand` for a numpy array, torch tensor, DLPack object or array-like."""
    if type(obj) is np.ndarray:
        return _from_numpy(obj)
    if is_torch_tensor(obj):
        return _from_torch(obj)
    if hasattr(obj, "__dlpack__") and not isinstance(obj, np.ndarray):
        return _from_dlpack(obj)
    if isinstance(obj, np.ndarray):   # a subclass
        return _from_numpy(np.asarray(obj))
    try:
        return _from_numpy(np.asarray(obj))
    except TypeError as exc:
        raise TypeError("pyaclnn: %s must be a numpy array, a torch CPU tensor or a DLPack "
                        "object, got %s (%s)" % (name, type(obj).__name__, exc)) from None


def _from_dlpack(obj):
    """numpy reads the common dtypes through DLPack; torch (if present) reads bf16 too."""
    try:
        return _from_numpy(np.from_dlpack(obj))
    except (TypeError, BufferError, RuntimeError) as numpy_error:
        try:
            import torch
        except ImportError:
            raise TypeError("pyaclnn: numpy cannot read this DLPack object (%s); installing torch "
                            "adds bf16 DLPack support" % numpy_error) from None
        return _from_torch(torch.from_dlpack(obj))


def result_kind(objects):
    """TORCH when any input is a torch tensor, else NUMPY."""
    for obj in objects:
        if is_torch_tensor(obj):
            return TORCH
    return NUMPY


def to_numpy(obj):
    """A numpy array with ``obj``'s values (a view where possible; bf16 torch via ml_dtypes)."""
    if type(obj) is np.ndarray:
        return obj
    if is_torch_tensor(obj):
        tensor = obj.detach().cpu().resolve_conj().resolve_neg()
        code = _torch_tables()[tensor.dtype]
        if tensor.dtype.is_floating_point and tensor.element_size() == 2 and code != acl_dtype("float16"):
            import torch
            return tensor.contiguous().view(torch.int16).numpy().view(numpy_dtype(code))
        return tensor.numpy()
    if hasattr(obj, "__dlpack__"):
        op = operand(obj)
        return to_numpy(op.owner)
    return np.asarray(obj)


def from_numpy(array, kind):
    """``array`` as the caller's kind (torch shares the memory; bf16 through a bit view)."""
    if kind != TORCH:
        return array
    import torch
    array = np.ascontiguousarray(array)
    code = acl_dtype(array.dtype)
    if array.dtype.itemsize == 2 and code not in (acl_dtype("float16"), acl_dtype("int16"),
                                                   acl_dtype("uint16")):
        return torch.from_numpy(array.view(np.int16)).view(torch_dtype(code))
    return torch.from_numpy(array)


def as_array(obj, name="argument"):
    """``obj`` itself when it is a numpy array in the machine's byte order or a torch tensor; a
    big-endian array converted; a DLPack object read in place (numpy, or torch for dtypes numpy
    lacks); anything else through ``np.asarray``."""
    if type(obj) is np.ndarray:
        return obj if obj.dtype.isnative else native_byte_order(obj)
    if is_torch_tensor(obj):
        return obj
    if isinstance(obj, np.ndarray):
        return native_byte_order(np.asarray(obj))
    if hasattr(obj, "__dlpack__"):
        try:
            return np.from_dlpack(obj)
        except (TypeError, BufferError, RuntimeError):
            import torch
            return torch.from_dlpack(obj)
    try:
        return native_byte_order(np.asarray(obj))
    except Exception as exc:
        raise TypeError("pyaclnn: %s must be a numpy array, a torch CPU tensor or a DLPack "
                        "object, got %s (%s)" % (name, type(obj).__name__, exc)) from None


def as_arrays(*named):
    """:func:`as_array` of each ``(obj, name)``; when torch tensors and numpy arrays are mixed,
    the numpy ones become torch tensors (sharing memory where torch can), so that the call has
    one kind of result and autograd sees only tensors."""
    arrays = []
    numpy_seen = torch_seen = False
    for obj, name in named:
        array = as_array(obj, name)     # a numpy array or a torch tensor
        if type(array) is np.ndarray:
            numpy_seen = True
        else:
            torch_seen = True
        arrays.append(array)
    if numpy_seen and torch_seen:
        arrays = [_numpy_to_torch(a) if type(a) is np.ndarray else a for a in arrays]
    return arrays


def _numpy_to_torch(array):
    if not array.flags.writeable or any(s < 0 for s in array.strides):
        array = np.array(array)               # torch.from_numpy takes neither
    return from_numpy(array, TORCH)


def dtype_code(array):
    """The aclDataType of a numpy array or torch tensor."""
    if type(array) is np.ndarray:
        return _numpy_code(array.dtype)
    try:
        return _torch_tables()[array.dtype]
    except KeyError:
        raise TypeError("pyaclnn: no aclDataType for torch dtype %s" % array.dtype) from None


def has_instance(kind, args, kwargs):
    """Whether an argument or keyword argument is an instance of ``kind`` (torch.Tensor: the
    calls pyaclnn.functional routes to the torch ops)."""
    for value in args:
        if isinstance(value, kind):
            return True
    for value in kwargs.values():
        if isinstance(value, kind):
            return True
    return False


def is_channels_last(array):
    """Whether ``array`` is a 4-D torch tensor laid out channels-last (and not also contiguous):
    torch's results keep that memory format, and so do pyaclnn's for the same operators."""
    if type(array) is np.ndarray or getattr(array, "ndim", 0) != 4 or array.is_contiguous():
        return False
    return array.is_contiguous(memory_format=_torch_module().channels_last)
