"""Two-phase operator calls under their CANN names, the Executor handle and ``run_op``.

For every ``aclnnXxxGetWorkspaceSize`` the headers declare, pyaclnn exposes::

    workspace_size, executor = pyaclnn.aclnnXxxGetWorkspaceSize(*inputs_and_outputs)
    pyaclnn.aclnnXxx(workspace, workspace_size, executor, stream=None)

Phase-1 arguments are converted by the C parameter type:

=====================  ====================================================================
C parameter            accepted Python values
=====================  ====================================================================
``aclTensor *``        :class:`Tensor`, None (NULL)
``aclIntArray *``      :class:`IntArray`, a list/tuple of ints (a temporary IntArray), None
``aclFloatArray *``    :class:`FloatArray`, a list/tuple of floats, None
``aclBoolArray *``     :class:`BoolArray`, a list/tuple of bools, None
``aclScalar *``        :class:`Scalar`, a Python number (FLOAT/INT64/BOOL scalar), None
``aclTensorList *``    :class:`TensorList`, a list of Tensors, None
``double``/``bool``    Python float / bool (numpy scalars too)
any pointer            a raw cffi pointer, passed through unchanged
=====================  ====================================================================

The trailing ``uint64_t *workspaceSize, aclOpExecutor **executor`` are not passed; they are
returned.  A non-zero status raises an :class:`AclnnError` subclass with the recent error message.
"""

import re

from . import _errors
from ._core import ffi, lib, CDEF, FUNCTIONS, function
from ._handle import Handle
from ._meta import Tensor, IntArray, FloatArray, BoolArray, Scalar, TensorList, ScalarList
from ._runtime import DeviceBuffer, address_of, stream_ptr, keep_until_synchronized, synchronize

PHASE1_SUFFIX = "GetWorkspaceSize"


class Executor(Handle):
    """The ``aclOpExecutor`` phase 1 returned.

    A normal executor is consumed by phase 2 (the library frees it; close() then does nothing).
    After :meth:`set_repeatable` it survives phase 2, can be run again, its tensors' addresses can
    be rebound, and close() destroys it (``aclDestroyAclOpExecutor``).  An executor that is never
    run is destroyed by close() too.  It keeps the arguments of phase 1 alive.
    """

    def __init__(self, ptr, op, keep=()):
        self._own(ptr, lib.aclDestroyAclOpExecutor)
        self._keep.extend(keep)
        self.op = op
        self.repeatable = False
        self.runs = 0

    def set_repeatable(self):
        """aclSetAclOpExecutorRepeatable: keep the executor across phase-2 calls."""
        _call("aclSetAclOpExecutorRepeatable", self.ptr)
        self.repeatable = True
        return self

    def _set_addr(self, func, index, tensor, addr):
        target = tensor.buffer if addr is None else addr
        _call(func, self.ptr, int(index), tensor.ptr, address_of(target))
        if addr is not None:
            tensor.buffer = addr
            tensor._keep.append(addr)
        self._keep.append(target)

    def set_input_addr(self, index, tensor, addr=None):
        """aclSetInputTensorAddr: set ``tensor``'s address to ``addr`` (default: tensor.buffer).

        As in CANN, the executor launches with the current addresses of the tensors it was
        planned with, so this rebinds ``tensor`` wherever it sits; ``index`` is not used.
        """
        self._set_addr("aclSetInputTensorAddr", index, tensor, addr)

    def set_output_addr(self, index, tensor, addr=None):
        """aclSetOutputTensorAddr: the same for an output (``index`` not used)."""
        self._set_addr("aclSetOutputTensorAddr", index, tensor, addr)

    def set_tensor_addr(self, index, tensor, addr=None):
        """aclSetTensorAddr: the same for any of the executor's tensors (``index`` not used)."""
        self._set_addr("aclSetTensorAddr", index, tensor, addr)

    def _set_dynamic(self, func, ir_index, relative_index, tensor_list, addr):
        _call(func, self.ptr, int(ir_index), int(relative_index), tensor_list.ptr, address_of(addr))
        self._keep.append(addr)

    def set_dynamic_input_addr(self, ir_index, relative_index, tensor_list, addr):
        """aclSetDynamicInputTensorAddr for element ``relative_index`` of a tensor-list input."""
        self._set_dynamic("aclSetDynamicInputTensorAddr", ir_index, relative_index, tensor_list, addr)

    def set_dynamic_output_addr(self, ir_index, relative_index, tensor_list, addr):
        """aclSetDynamicOutputTensorAddr for element ``relative_index`` of a tensor-list output."""
        self._set_dynamic("aclSetDynamicOutputTensorAddr", ir_index, relative_index, tensor_list, addr)

    def _consumed(self):
        """Phase 2 freed a non-repeatable executor: forget it, keep its arguments in flight."""
        keep = list(self._keep)
        self._forget()
        return keep

    def __repr__(self):
        state = "closed" if self.closed else ("repeatable" if self.repeatable else "ready")
        return "<Executor %s %s>" % (self.op, state)


def _call(func, *args):
    _errors.check_aclnn(function(func)(*args), func)


# ---- prototypes, for argument names in messages and docstrings --------------------------------
_PROTOTYPES = {}


def _prototype(name):
    if not _PROTOTYPES:
        for m in re.finditer(r"([A-Za-z_][\w \*]*?)\b(\w+)\s*\(([^()]*)\)\s*;", CDEF):
            _PROTOTYPES[m.group(2)] = (m.group(1).strip(), m.group(3).strip())
    return _PROTOTYPES.get(name)


def _param_names(name, count):
    proto = _prototype(name)
    names = []
    if proto:
        for param in proto[1].split(","):
            m = re.search(r"(\w+)\s*(\[\s*\])?$", param.strip())
            names.append(m.group(1) if m else "?")
    if len(names) != count:
        names = ["arg%d" % i for i in range(count)]
    return names


# ---- argument conversion ----------------------------------------------------------------------
def _is_sequence(value):
    return isinstance(value, (list, tuple)) or (hasattr(value, "__len__") and hasattr(value, "dtype")
                                                and getattr(value, "ndim", 0) == 1)


def _convert(value, ctype, func, pname, owned, keep):
    """A C argument for ``value``; temporaries go to ``owned``, wrapped objects to ``keep``."""
    if isinstance(value, ffi.CData):
        return value
    kind = ctype.kind
    if kind == "pointer":
        if value is None:
            return ffi.NULL
        item = ctype.item.cname.replace("struct ", "").replace("const ", "").strip()
        wrappers = {"aclTensor": (Tensor, None), "aclIntArray": (IntArray, IntArray),
                    "aclFloatArray": (FloatArray, FloatArray), "aclBoolArray": (BoolArray, BoolArray),
                    "aclScalar": (Scalar, Scalar), "aclTensorList": (TensorList, TensorList),
                    "aclScalarList": (ScalarList, ScalarList)}
        if item in wrappers:
            cls, maker = wrappers[item]
            if isinstance(value, cls):
                keep.append(value)
                return value.ptr
            accepts_plain = (item == "aclScalar" and isinstance(value, (int, float, bool, complex))) \
                or (item != "aclScalar" and _is_sequence(value))
            if maker is not None and accepts_plain:
                temp = maker(value)
                owned.append(temp)
                return temp.ptr
            raise TypeError("%s: argument '%s' must be a %s%s or None, got %s"
                            % (func, pname, cls.__name__,
                               "" if maker is None else " (or a plain value)", type(value).__name__))
        if item == "char" and isinstance(value, (str, bytes)):
            data = ffi.new("char[]", value.encode() if isinstance(value, str) else value)
            keep.append(data)
            return data
        if item == "void":
            if isinstance(value, DeviceBuffer):
                keep.append(value)
            return address_of(value)
        raise TypeError("%s: argument '%s' (%s) cannot be built from %s"
                        % (func, pname, ctype.cname, type(value).__name__))
    if hasattr(value, "item") and not isinstance(value, (int, float, bool)):
        value = value.item()
    if ctype.cname == "_Bool" or ctype.cname == "bool":
        return bool(value)
    return value


# ---- wrappers ---------------------------------------------------------------------------------
_wrappers = {}


def _phase1_wrapper(name):
    op = name[:-len(PHASE1_SUFFIX)]

    def phase1(*args):
        fn = function(name)
        params = ffi.typeof(fn).args
        user_params = params[:-2]
        names = _param_names(name, len(params))
        if len(args) != len(user_params):
            raise TypeError("%s takes %d arguments (%s), got %d"
                            % (name, len(user_params), ", ".join(names[:-2]), len(args)))
        owned, keep = [], []
        try:
            c_args = [_convert(value, ctype, name, pname, owned, keep)
                      for value, ctype, pname in zip(args, user_params, names)]
            workspace_size = ffi.new("uint64_t *")
            executor = ffi.new("aclOpExecutor **")
            status = fn(*c_args, workspace_size, executor)
            _errors.check_aclnn(status, name)
        except BaseException:
            for temp in owned:
                temp.close()
            raise
        if executor[0] == ffi.NULL:
            for temp in owned:
                temp.close()
            raise _errors.InnerError(lib.ACLNN_ERR_INNER_NULLPTR, None,
                                     "phase 1 succeeded but returned a NULL executor", name)
        return int(workspace_size[0]), Executor(executor[0], op, keep + owned)

    phase1.__name__ = phase1.__qualname__ = name
    phase1.__doc__ = _doc(name, "Phase 1: validate and plan; returns (workspace_size, Executor).")
    return phase1


def _phase2_wrapper(name):
    def phase2(workspace, workspace_size, executor, stream=None):
        fn = function(name)
        ex_ptr = executor.ptr if isinstance(executor, Executor) else \
            (ffi.NULL if executor is None else executor)
        status = fn(address_of(workspace), int(workspace_size), ex_ptr, stream_ptr(stream))
        in_flight = [workspace]
        if isinstance(executor, Executor):
            executor.runs += 1
            if executor.repeatable:
                in_flight.append(executor)
            else:
                in_flight.extend(executor._consumed())
        keep_until_synchronized(stream, *in_flight)
        _errors.check_aclnn(status, name)

    phase2.__name__ = phase2.__qualname__ = name
    phase2.__doc__ = _doc(name, "Phase 2: launch on ``stream`` (None = default); asynchronous - "
                                "synchronize before reading outputs.")
    return phase2


def _doc(name, summary):
    proto = _prototype(name)
    text = summary
    if proto:
        text += "\n\nC prototype::\n\n    %s %s(%s);\n" % (proto[0], name, proto[1])
    return text


def two_phase_names():
    """Names of every phase-1 and phase-2 function the headers declare."""
    names = []
    declared = set(FUNCTIONS)
    for f in FUNCTIONS:
        if f.startswith("aclnn") and f.endswith(PHASE1_SUFFIX) and len(f) > len(PHASE1_SUFFIX) + 5:
            names.append(f)
            if f[:-len(PHASE1_SUFFIX)] in declared:
                names.append(f[:-len(PHASE1_SUFFIX)])
    return names


_TWO_PHASE = None


def get_wrapper(name):
    """The Python wrapper for a phase-1 or phase-2 function (None if ``name`` is neither)."""
    global _TWO_PHASE
    if _TWO_PHASE is None:
        _TWO_PHASE = set(two_phase_names())
    if name not in _TWO_PHASE:
        return None
    if name not in _wrappers:
        maker = _phase1_wrapper if name.endswith(PHASE1_SUFFIX) else _phase2_wrapper
        _wrappers[name] = maker(name)
    return _wrappers[name]


def run_op(name, *args, stream=None):
    """Phase 1 with ``args``, a workspace if needed, phase 2, synchronize, clean up.

    ``name`` is the operator with or without the ``aclnn`` prefix: ``run_op("Prelu", x, w, out)``.
    Outputs are the Tensors you passed; read them with ``.numpy()``.
    """
    op = name if name.startswith("aclnn") else "aclnn" + name
    phase1 = get_wrapper(op + PHASE1_SUFFIX)
    phase2 = get_wrapper(op)
    if phase1 is None or phase2 is None:
        raise AttributeError("run_op: %s%s / %s are not declared in the headers"
                             % (op, PHASE1_SUFFIX, op))
    workspace_size, executor = phase1(*args)
    workspace = None
    try:
        if workspace_size > 0:
            workspace = DeviceBuffer(workspace_size)
        phase2(workspace, workspace_size, executor, stream)
        synchronize(stream)
    finally:
        executor.close()
        if workspace is not None:
            workspace.close()
