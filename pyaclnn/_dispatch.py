"""Run one operator on the caller's arrays: the one place that decides how.

``launch(op, inputs, attrs, outputs)`` runs ``aclnn<op>GetWorkspaceSize`` + ``aclnn<op>`` and
returns the results.  Which path it takes depends on the library pyaclnn drives:

* **libaclnn** (device memory is host memory): the inputs are wrapped where they lie (numpy
  arrays, torch CPU tensors, DLPack objects, any strides), results are allocated once and never
  pre-filled, and the call goes through an executor cache: the first call with a given
  signature (operator, input shapes/strides/dtypes, attributes, output shapes/dtypes, the
  product chosen by ``set_soc_version`` and the thread's own, ``soc(...)``) runs phase 1 and
  keeps the executor with
  ``aclSetAclOpExecutorRepeatable``; later calls with the same signature set the data
  addresses of the executor's descriptors (``aclSetRawTensorAddr``: an executor launches with
  its tensors' current addresses, as CANN's do) and go straight to phase 2 - the scheme
  torch_npu uses for aclnn.
  The cache is per thread (an executor's addresses are state) and bounded (LRU).
* **libaclnn with ACLNN_STRICT=1** (tensors must lie in device memory): the inputs' pages are
  registered with ``aclrtHostRegister`` for the call (and unregistered after), results come
  from aclrtMalloc memory, and every call runs phase 1, so strict mode checks every address.
* **libaclnn with ACLNN_CHECK's memcheck** (docs/checking.md: device memory is not host
  memory, and strict mode's checks apply): as strict mode, but the results are host arrays
  whose pages are registered for the call too - numpy never touches aclrtMalloc memory.
* **real CANN** (``PYACLNN_LIBRARY`` names CANN's libraries): device memory is not host
  memory, so inputs are copied to device buffers and results copied back (aclrtMemcpy).

Calls that touch an empty tensor skip the cache (an operator may plan fewer operands for them).
"""

import atexit
import os
import sys
import threading
from collections import OrderedDict
from math import prod

import numpy as np

from . import _errors
from ._allocator import ResultCache, TorchBlocks
from . import _core
from ._core import ffi, lib, function, ensure_init, drives_libaclnn
from ._interop import (NUMPY, TORCH, contiguous_strides, operand, result_kind,
                       torch_dtype)
from ._dtypes import numpy_dtype
from ._meta import BoolArray, FloatArray, IntArray, _created

PHASE1_SUFFIX = "GetWorkspaceSize"
CACHE_ENTRIES = 256            # executors kept per thread
_PAGE = 4096

results = ResultCache()
atexit.register(results.close)
torch_blocks = TorchBlocks(results)
NULL = ffi.NULL
from_buffer = ffi.from_buffer
synchronize = lib.aclrtSynchronizeStream


def empty_cache():
    """Free every cached result block and every cached executor of the calling thread."""
    results.empty()
    torch_blocks.empty()
    state = _state()
    state.lanes.clear()
    state.numpy_lanes.clear()
    while state.executors:
        _, entry = state.executors.popitem(last=False)
        entry.destroy()


# ---- per-operator facts, read once from the cdef -----------------------------------------------
class _OpInfo:
    """The two C functions of an operator and the kind of each phase-1 parameter."""

    __slots__ = ("name", "phase1", "phase2", "kinds")

    def __init__(self, op):
        self.name = "aclnn" + op
        self.phase1 = function(self.name + PHASE1_SUFFIX)
        self.phase2 = function(self.name)
        kinds = []
        for ctype in ffi.typeof(self.phase1).args[:-2]:
            if ctype.kind == "pointer":
                kinds.append(ctype.item.cname.replace("const ", "").replace("struct ", "").strip())
            else:
                kinds.append(ctype.cname)
        self.kinds = tuple(kinds)

    def arguments(self, n_inputs, inputs, outputs, attrs):
        """Yields (role, kind, value) in the phase-1 parameter order: the first n_inputs
        aclTensor parameters are role "in" and take `inputs`, the other aclTensor parameters
        role "out" (`outputs`), every other parameter role "attr" (`attrs`)."""
        inputs, outputs, attrs = iter(inputs), iter(outputs), iter(attrs)
        tensors_seen = 0
        for kind in self.kinds:
            if kind != "aclTensor":
                yield "attr", kind, next(attrs)
            elif tensors_seen < n_inputs:
                tensors_seen += 1
                yield "in", kind, next(inputs)
            else:
                yield "out", kind, next(outputs)


_OPS = {}


def _op_info(op):
    info = _OPS.get(op)
    if info is None:
        info = _OPS[op] = _OpInfo(op)
    return info


# ---- results -------------------------------------------------------------------------------------
_NUMPY_DTYPES = {}


def _allocate(shape, code, kind):
    """(result object, its data pointer) for a contiguous result of ``shape`` and ``code``.
    Under ACLNN_STRICT=1 every result comes from the cache: it holds aclrtMalloc memory."""
    dtype = _NUMPY_DTYPES.get(code)
    if dtype is None:
        dtype = _NUMPY_DTYPES[code] = numpy_dtype(code)
    count = prod(shape)
    nbytes = count * dtype.itemsize
    # under memcheck aclrtMalloc memory is not host memory: results are host arrays (below)
    if (nbytes >= results.min_bytes and results.limit or _STRICT) and not _MEMCHECK:
        if kind == TORCH:
            import torch
            if nbytes == 0:
                return torch.empty(shape, dtype=torch_dtype(code)), results.block(1)
            if not _STRICT:      # a storage torch owns: resizable like any torch result
                tensor = torch_blocks.tensor(shape, torch_dtype(code), nbytes)
                return tensor, tensor.data_ptr()
            block = results.block(nbytes)
            buffer = ffi.buffer(block, nbytes)
            tensor = torch.frombuffer(buffer, dtype=torch_dtype(code), count=count).view(shape)
            return tensor, block
        block = results.block(max(nbytes, 1))
        buffer = ffi.buffer(block, nbytes)
        return np.frombuffer(buffer, dtype=dtype, count=count).reshape(shape), block
    if kind == TORCH:
        import torch
        tensor = torch.empty(shape, dtype=torch_dtype(code))
        return tensor, tensor.data_ptr()
    array = np.empty(shape, dtype=dtype)
    return array, from_buffer(array)


#: The third element of an output spec ``(shape, code, CHANNELS_LAST)``: a 4-D torch result laid
#: out N, H, W, C (torch.channels_last), as torch gives for a channels-last input.
CHANNELS_LAST = "channels_last"


def _make(spec, kind):
    """(result, data pointer) for an output spec ``(shape, code[, CHANNELS_LAST])``."""
    if len(spec) == 2:
        return _allocate(spec[0], spec[1], kind)
    n, c, h, w = spec[0]
    result, pointer = _allocate((n, h, w, c), spec[1], kind)
    return (result.permute(0, 3, 1, 2) if kind == TORCH else result.transpose(0, 3, 1, 2)), pointer


def _templates(outputs):
    """For torch results below the result cache's threshold: a zero-stride template of each
    (shape, dtype) that ``torch.empty_like`` allocates from.  A small call's result then costs
    ~1 us instead of torch.empty's ~5 us, most of it parsing the size (1x3x8x8: the largest
    part of a small call's time).  None when a result is large (those come from TorchBlocks)."""
    import torch
    templates = []
    for spec in outputs:
        shape, code = spec[0], spec[1]
        channels_last = len(spec) > 2
        if channels_last:
            n, c, h, w = shape
            shape = (n, h, w, c)
        dtype = torch_dtype(code)
        nbytes = prod(shape) * numpy_dtype(code).itemsize
        if _STRICT or nbytes >= results.min_bytes and results.limit:
            return None
        # not dense: torch.empty_like lays its result out contiguously
        templates.append((torch.zeros((), dtype=dtype).expand(shape), channels_last))
    return templates


def _out_strides(spec):
    if len(spec) == 2:
        return contiguous_strides(spec[0])
    n, c, h, w = spec[0]
    return (h * w * c, 1, w * c, c) if c else contiguous_strides(spec[0])


def empty_result(inputs, shape, code):
    """A result the one-call layer answers itself (an empty one), in the inputs' kind."""
    return _allocate(tuple(shape), code, result_kind(inputs))[0]


class _NoTensor:
    """Stands for torch.Tensor while torch is not imported: nothing is an instance of it."""


_TORCH_TENSOR = None
_torch_empty_like = None


def _torch_tensor_class():
    """torch.Tensor once torch is imported (remembered), _NoTensor until then."""
    global _TORCH_TENSOR, _torch_empty_like
    torch = sys.modules.get("torch")
    if torch is None:
        return _NoTensor
    _torch_empty_like = torch.empty_like
    _TORCH_TENSOR = torch.Tensor
    return _TORCH_TENSOR


# ---- C objects for one call ----------------------------------------------------------------------
def _create_tensor(shape, strides, offset, code, extent, address):
    ndim = len(shape)
    dims = ffi.new("int64_t[]", list(shape) or [0])
    steps = ffi.new("int64_t[]", list(strides) or [0])
    storage = ffi.new("int64_t[]", [extent])
    if not isinstance(address, ffi.CData):
        address = ffi.cast("void *", address)
    return _created(lib.aclCreateTensor(dims, ndim, code, steps, offset, lib.ACL_FORMAT_ND, storage,
                                         1, address), "aclCreateTensor")


# aclIntArray & co come from the handle classes (their values are copied at creation, so they
# are closed right after phase 1); numbers pass as they are.
_ARRAY_CLASSES = {"aclIntArray": IntArray, "aclFloatArray": FloatArray, "aclBoolArray": BoolArray}


def _create_attr(kind, value):
    """(C argument, handle to close after phase 1 or None) for a non-tensor phase-1 argument."""
    if value is None:
        return ffi.NULL, None
    array_class = _ARRAY_CLASSES.get(kind)
    if array_class is not None:
        array = array_class(value)
        return array.ptr, array
    if kind in ("_Bool", "bool"):
        return bool(value), None
    if kind in ("double", "float"):
        return float(value), None
    return int(value), None


class _Executor:
    """A repeatable executor and the descriptors its addresses are rebound through."""

    __slots__ = ("pointer", "inputs", "outputs", "workspace_size", "phase2", "name", "bound",
                 "templates")

    def __init__(self, pointer, inputs, outputs, workspace_size, info):
        self.pointer = pointer
        self.inputs = inputs          # [aclTensor * or None], phase-1 order
        self.outputs = outputs
        self.bound = None             # [the addresses the descriptors point at], inputs first
        self.templates = None         # [(torch template, channels-last?)] for small torch results
        self.workspace_size = workspace_size
        self.phase2 = info.phase2
        self.name = info.name

    def __del__(self):
        # a thread's cache dies with the thread: its executors and descriptors go back too
        try:
            self.destroy()
        except Exception:   # interpreter shutdown: the library may already be gone
            pass

    def destroy(self):
        if self.pointer is not None:
            lib.aclDestroyAclOpExecutor(self.pointer)
            self.pointer = None
        for tensor in self.inputs + self.outputs:
            if tensor is not None:
                lib.aclDestroyTensor(tensor)
        self.inputs = self.outputs = []


class _ThreadState(threading.local):
    def __init__(self):
        self.executors = OrderedDict()   # signature -> _Executor
        self.workspace = None            # a DeviceBuffer reused by every call of the thread
        self.lanes = {}                  # eager torch call signature -> its runner (_lane.py)
        self.numpy_lanes = {}            # numpy call signature -> its runner (_numpy_lane.py)
        self.numpy_lane_hits = 0         # calls that took a numpy lane (tests tell paths by it)
        self.launched = None             # [(executor, inputs, made, outputs, kind)] of the
                                         # cached launches of one call a lane's first watches


_local = _ThreadState()


def _state():
    return _local


def _workspace(size):
    """A device address with at least ``size`` bytes, reused across the thread's calls."""
    if size == 0:
        return ffi.NULL
    state = _local
    if state.workspace is None or state.workspace.nbytes < size:
        from ._runtime import DeviceBuffer
        if state.workspace is not None:
            state.workspace.close()
        state.workspace = DeviceBuffer(size)
    return state.workspace.ptr


def _phase1(info, operands, attrs, out_specs, out_addresses, repeatable):
    """Creates the descriptors, runs phase 1; returns an _Executor (tensors owned by it)."""
    inputs, outputs, close_after = [], [], []
    args = []
    executor = None
    try:
        for role, kind, item in info.arguments(len(operands), operands, zip(out_specs, out_addresses), attrs):
            if role == "attr":
                value, handle = _create_attr(kind, item)
                if handle is not None:
                    close_after.append(handle)
                args.append(value)
            elif role == "in":
                tensor = ffi.NULL if item is None else _create_tensor(
                    item.shape, item.strides, item.offset, item.dtype, item.extent, item.address)
                inputs.append(None if item is None else tensor)
                args.append(tensor)
            else:
                spec, address = item
                shape = spec[0]
                tensor = _create_tensor(shape, _out_strides(spec), 0, spec[1], prod(shape), address)
                outputs.append(tensor)
                args.append(tensor)
        size = ffi.new("uint64_t *")
        out = ffi.new("aclOpExecutor **")
        _errors.check_aclnn(info.phase1(*args, size, out), info.name + PHASE1_SUFFIX)
        executor = _Executor(out[0], inputs, outputs, int(size[0]), info)
        if repeatable:
            _errors.check_aclnn(lib.aclSetAclOpExecutorRepeatable(executor.pointer),
                                "aclSetAclOpExecutorRepeatable")
        return executor
    except BaseException:
        if executor is not None:
            executor.destroy()
        else:
            for tensor in inputs + outputs:
                if tensor is not None and tensor != ffi.NULL:
                    lib.aclDestroyTensor(tensor)
        raise
    finally:
        for handle in close_after:
            handle.close()


def _run(executor, consumed):
    """Phase 2 on the default stream and the wait; a normal executor is consumed by it."""
    size = executor.workspace_size
    status = executor.phase2(_workspace(size) if size else NULL, size, executor.pointer, NULL)
    if consumed:
        executor.pointer = None       # the library frees a normal executor in phase 2
    if status:
        _errors.check_aclnn(status, executor.name)
    code = synchronize(NULL)
    if code:
        _errors.check_acl(code, "aclrtSynchronizeStream")


def _rebind(executor, pointers, out_pointers):
    """Points the cached executor at this call's memory, skipping the descriptors already bound
    to it (a weight passed on every call, a result block the allocator hands out again).  An
    address is an int or a cffi pointer.

    An executor launches with the current addresses of the tensors it was planned with (as
    CANN's opbase does), so setting each descriptor's address (aclSetRawTensorAddr) is the whole
    rebinding; aclSetInput/OutputTensorAddr would do the same and also look the executor up."""
    bound = executor.bound
    for index, tensor in enumerate(executor.inputs):
        pointer = pointers[index]
        if pointer is not None and pointer != bound[index]:
            _set_address(tensor, pointer)
            bound[index] = pointer if type(pointer) is int else None
    first = len(executor.inputs)
    for index, tensor in enumerate(executor.outputs):
        pointer = out_pointers[index]
        if pointer != bound[first + index]:
            _set_address(tensor, pointer)
            bound[first + index] = pointer if type(pointer) is int else None


# aclSetRawTensorAddr through a pointer that takes the address as an integer: an int address
# (a torch tensor's data_ptr()) then needs no ffi.cast, a third of the call's cost.  The two
# types are passed alike by the C calling conventions of the platforms pyaclnn runs on.
_set_raw_address_int = ffi.cast("aclnnStatus (*)(aclTensor *, uintptr_t)", lib.aclSetRawTensorAddr)


def _set_address(tensor, pointer):
    """aclSetRawTensorAddr(tensor, pointer) for an int or a cffi pointer; raises on failure."""
    if type(pointer) is int:
        status = _set_raw_address_int(tensor, pointer)
    else:
        status = lib.aclSetRawTensorAddr(tensor, pointer)
    if status:
        _errors.check_aclnn(status, "aclSetRawTensorAddr")


def _bound_addresses(pointers, out_pointers):
    """What a new executor is bound to, as ints; None where the call gave a cffi object (kept
    as a number only, so that a cached executor holds no reference to the caller's array; the
    next call rebinds that one)."""
    return [p if type(p) is int else None for p in list(pointers) + list(out_pointers)]


def _general_description(inputs):
    """(key parts, data pointers, operands) for inputs the quick description does not cover."""
    operands = [None if x is None else operand(x) for x in inputs]
    parts = [None if item is None else item.signature for item in operands]
    pointers = [None if item is None else item.address for item in operands]
    return parts, pointers, operands


def launch(op, inputs, attrs, outputs):
    """Runs ``aclnn<op>`` and returns its results (a list, in the inputs' kind).

    inputs:  the input tensors in phase-1 order (arrays, torch tensors, DLPack objects, None);
    attrs:   the non-tensor phase-1 arguments in order, hashable (tuples for aclIntArray);
    outputs: ``((shape tuple, aclDataType[, CHANNELS_LAST]), ...)`` for the output tensors in
             phase-1 order.
    """
    ensure_init()
    if not _HOST_IS_DEVICE or _STRICT:
        kind = result_kind(inputs)
        if not _HOST_IS_DEVICE:
            return _launch_with_copies(_op_info(op), inputs, attrs, outputs, kind)
        operands = [None if x is None else operand(x) for x in inputs]
        return _launch_strict(_op_info(op), operands, attrs, outputs, kind)

    # The executor cache's key: everything phase 1 looks at, but no address.  Contiguous,
    # non-empty numpy arrays and CPU tensors (nearly every call) are described in a few steps.
    # The product (SoC) selection counts too: an executor keeps the product it was planned on.
    key = [op, _core.soc_epoch, _thread_soc.name]
    pointers = []
    kind = NUMPY
    operands = None
    for x in inputs:
        if type(x) is np.ndarray:
            if x.flags.c_contiguous and x.size:
                key.append((x.shape, x.dtype))
                pointers.append(from_buffer(x))
                continue
        elif x is not None and isinstance(x, _TORCH_TENSOR or _torch_tensor_class()):
            kind = TORCH
            if x.is_cpu and x.is_contiguous() and x.numel() and not (x.is_conj() or x.is_neg()):
                key.append((x.shape, x.dtype))
                pointers.append(x.data_ptr())     # an int: rebound only when it moved
                continue
        kind = result_kind(inputs)
        parts, pointers, operands = _general_description(inputs)
        key = [op, _core.soc_epoch, _thread_soc.name] + parts
        break
    key.append(tuple(attrs))
    key.append(tuple(outputs))
    key = tuple(key)
    cache = _local.executors
    executor = cache.get(key)
    if executor is not None:
        # A cached signature is never an empty call (those are not cached): rebind and run.
        cache.move_to_end(key)
        made = _run_cached(executor, pointers, outputs, kind)
        _note_launch(executor, inputs, made, outputs, kind)
        return made

    made = [_make(spec, kind) for spec in outputs]
    out_pointers = [pointer for _, pointer in made]
    empty = any(0 in spec[0] for spec in outputs) or (
        operands is not None and any(item is not None and item.extent == 0 for item in operands))
    operands = operands or [None if x is None else operand(x) for x in inputs]
    if empty:
        # an operator may register fewer operands for an empty call: no repeatable executor
        executor = _phase1(_op_info(op), operands, attrs, outputs, out_pointers, repeatable=False)
        try:
            _run(executor, consumed=True)
        finally:
            executor.destroy()
        return [result for result, _ in made]

    executor = _phase1(_op_info(op), operands, attrs, outputs, out_pointers, repeatable=True)
    executor.bound = _bound_addresses(pointers if len(pointers) == len(inputs) else
                                      [None] * len(inputs), out_pointers)
    if kind == TORCH:
        executor.templates = _templates(outputs)
    cache[key] = executor
    if len(cache) > CACHE_ENTRIES:
        cache.popitem(last=False)[1].destroy()
    _run(executor, consumed=False)
    made = [result for result, _ in made]
    _note_launch(executor, inputs, made, outputs, kind)
    return made


def launches_of(call, args, kwargs):
    """``(call(*args, **kwargs), launches)``: the cached launches the call made, each
    ``(executor, inputs, made, outputs, kind)`` - what a lane (pyaclnn._lane, _numpy_lane) is
    opened from.  ``launches`` is empty for a call nested in one being watched."""
    state = _local
    if state.launched is not None:          # a nested call: the outer one is watching
        return call(*args, **kwargs), []
    state.launched = launched = []
    try:
        return call(*args, **kwargs), launched
    finally:
        state.launched = None


def with_keywords(args, kwargs):
    """The positional arguments, then each keyword's name and value (a lane's signature)."""
    values = list(args)
    for item in kwargs.items():
        values += item
    return values


def _note_launch(executor, inputs, made, outputs, kind):
    """Tells a watching lane (pyaclnn._lane) which cached executor a call launched and with
    what."""
    if _local.launched is not None:
        _local.launched.append((executor, inputs, made, outputs, kind))


def _run_cached(executor, pointers, outputs, kind):
    """Results of a cached executor's call: fresh results, rebound addresses, phase 2, wait."""
    templates = executor.templates
    if templates is not None:
        made, out_pointers = [], []
        for template, channels_last in templates:
            tensor = _torch_empty_like(template)
            out_pointers.append(tensor.data_ptr())
            made.append(tensor.permute(0, 3, 1, 2) if channels_last else tensor)
    else:
        pairs = [_make(spec, kind) for spec in outputs]
        made = [result for result, _ in pairs]
        out_pointers = [pointer for _, pointer in pairs]
    _rebind(executor, pointers, out_pointers)
    _run(executor, consumed=False)
    # The inputs stay referenced by the caller until here: the call is synchronous.
    return made


def raise_launch_error(status, waited, name):
    """The error of aclnnCpuLaunchAndSynchronize (the lanes' launch): the wait's (``waited``)
    when it failed, else phase 2's (``status``)."""
    _errors.check_acl(waited, "aclrtSynchronizeStream")
    _errors.check_aclnn(status, name)


# ---- ACLNN_STRICT=1: register the caller's pages for the call ------------------------------------
_strict_lock = threading.Lock()


def _page_ranges(operands, results=()):
    """The merged page-aligned byte ranges the operands (and host results: (address, nbytes))
    touch: [(start, length)]."""
    spans = []
    ranges = [(item.address, item.nbytes_spanned) for item in operands
              if item is not None and item.extent != 0]
    for address, nbytes in ranges + [r for r in results if r[1]]:
        start = address // _PAGE * _PAGE
        end = (address + nbytes + _PAGE - 1) // _PAGE * _PAGE
        spans.append((start, end))
    spans.sort()
    merged = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(start, end - start) for start, end in merged]


def _launch_strict(info, operands, attrs, outputs, kind):
    made = [_make(spec, kind) for spec in outputs]
    out_addresses = [pointer for _, pointer in made]
    # under memcheck the results are host arrays: registered for the call like the inputs
    host_results = [(int(ffi.cast("uintptr_t", pointer)), _nbytes(result))
                    for result, pointer in made] if _MEMCHECK else []
    registered = []
    device = ffi.new("void **")
    # One call at a time registers: two threads' arrays may share a page.
    with _strict_lock:
        try:
            for start, length in _page_ranges(operands, host_results):
                _errors.check_acl(lib.aclrtHostRegister(ffi.cast("void *", start), length,
                                                        lib.ACL_HOST_REGISTER_MAPPED, device),
                                  "aclrtHostRegister")
                registered.append(start)
            executor = _phase1(info, operands, attrs, outputs, out_addresses, repeatable=False)
            try:
                _run(executor, consumed=True)
            finally:
                executor.destroy()
        finally:
            for start in registered:
                lib.aclrtHostUnregister(ffi.cast("void *", start))
    return [result for result, _ in made]


def _nbytes(result):
    """The bytes of a numpy array or torch tensor result."""
    if isinstance(result, np.ndarray):
        return result.nbytes
    return result.numel() * result.element_size()


# ---- real CANN: device memory is elsewhere -------------------------------------------------------
def _launch_with_copies(info, inputs, attrs, outputs, kind):
    """Copies every input to a device buffer and every result back (aclrtMemcpy)."""
    from ._meta import Tensor
    from ._ops import run_op
    from ._interop import to_numpy, from_numpy
    tensors = []
    try:
        for x in inputs:
            tensors.append(None if x is None else Tensor.from_numpy(to_numpy(x)))
        out_tensors = [Tensor.empty(spec[0], spec[1]) for spec in outputs]
        tensors.extend(out_tensors)
        args = [value for _, _, value in info.arguments(len(inputs), tensors[:len(inputs)], out_tensors, attrs)]
        run_op(info.name, *args)
        results = [from_numpy(t.numpy(), kind) for t in out_tensors]
        return [_channels_last(r) if len(spec) == 3 and kind == TORCH else r
                for r, spec in zip(results, outputs)]
    finally:
        for tensor in tensors:
            if tensor is not None:
                tensor.close()


def _channels_last(tensor):
    import torch
    return tensor.contiguous(memory_format=torch.channels_last)


_HOST_IS_DEVICE = drives_libaclnn()
_thread_soc = _core.thread_soc
# The library reads ACLNN_STRICT once per process with these spellings (runtime/init.c).
_STRICT = _HOST_IS_DEVICE and os.environ.get("ACLNN_STRICT", "").lower() in ("1", "true", "yes", "on")
# ACLNN_CHECK's memcheck (bit 1): aclrtMalloc memory is not host-accessible, strict mode applies.
_MEMCHECK = _HOST_IS_DEVICE and bool(lib.aclnnCpuCheckTools() & 1)
_STRICT = _STRICT or _MEMCHECK
