"""The CPU kernels of ``torch.ops.aclnn.*`` and the plain eager call that skips the dispatcher.

Each operator's CPU kernel is the ``pyaclnn._operators`` function itself on the tensors (so it
is exactly the eager behaviour: dtypes, memory format, products, errors), registered here.

:func:`call` runs an operator the way the dispatcher would, minus the dispatcher, when nothing
needs to see it: a plain eager call (pyaclnn._lane.watched: no tracer, mode, profiler, functorch
transform, forward-AD level or autocast; not inside torch.compile) on CPU tensors of class
Tensor.  Without grad it is the CPU kernel; with an input requiring grad it is the operator's
autograd Function applied directly (pyaclnn._torch_autograd registers it here,
:data:`EAGER_AUTOGRAD`), the very Function the dispatcher's Autograd kernel would apply.  The
dispatcher's path costs ~10 us of boxing and Python per operator and as much again per backward
operator, more than a small call's kernel; a converted model's training step makes two dozen
such calls.  Every other call goes through the dispatcher, so tracers, modes, transforms and
autograd see the operator.

:data:`eager_ops` is ``torch.ops.aclnn`` with this shortcut: ``eager_ops.prelu(x, w, None)``.
pyaclnn.nn's modules and the autograd formulas call it.
"""

import torch
from torch import Tensor
from torch.nn import Parameter

from ._lane import make_entry, watched, _grad_enabled
from ._torch_library import LIBRARY, OVERLOADS, ops
from ._operators import _im2col_prelu, _max_pool, _max_pool_indices, _pad_upsample

__all__ = ["EAGER_AUTOGRAD", "KERNELS", "call", "eager_ops", "plain_cpu", "run_kernel"]

KERNELS = {}           # name -> its CPU kernel (the functional function)
# A repeated kernel call takes the lane to the executor its first call launched (pyaclnn._lane),
# keyed by the operator's own arguments.
_kernel_entry = make_entry(KERNELS)
_NO_KEYWORDS = {}
#: name -> the operator's autograd Function's apply, for a plain eager call needing grad; filled
#: by pyaclnn._torch_autograd (which registers the same Function as the Autograd kernel).
EAGER_AUTOGRAD = {}
# The overloads' C++ entries, what OpOverload.__call__ calls (dynamo traces the overload only).
_ENTRIES = {name: overload._op for name, overload in OVERLOADS.items()}
_is_compiling = torch.compiler.is_compiling


def _register_kernel(name, function):
    KERNELS[name] = function
    LIBRARY.impl(name, function, "CPU")


# ---- the CPU kernels: the operator functions themselves ---------------------------------------
# They run below autograd: an input that requires grad reaches them only inside the operator's
# autograd.Function's forward, where grad mode is off, so the functional function takes its
# plain path.
_register_kernel("replication_pad2d", _pad_upsample.replication_pad2d)
_register_kernel("replication_pad2d_backward", _pad_upsample.replication_pad2d_backward)
_register_kernel("upsample_nearest_exact1d", _pad_upsample.upsample_nearest_exact1d)
_register_kernel("upsample_nearest_exact1d_backward", _pad_upsample.upsample_nearest_exact1d_backward)
_register_kernel("max_pool2d_with_mask", _max_pool.max_pool2d_with_mask)
_register_kernel("max_pool2d_with_mask_backward", _max_pool.max_pool2d_with_mask_backward)
_register_kernel("max_pool2d_with_indices", _max_pool_indices.max_pool2d_with_indices)
_register_kernel("max_pool2d_with_indices_backward", _max_pool_indices.max_pool2d_with_indices_backward)
_register_kernel("im2col", _im2col_prelu.im2col)
_register_kernel("im2col_backward", _im2col_prelu.im2col_backward)
_register_kernel("prelu", _im2col_prelu.prelu)
_register_kernel("prelu_backward", _im2col_prelu.prelu_backward)


def call(name, tensors, *attrs):
    """``torch.ops.aclnn.<name>(*tensors, *attrs)``, without the dispatcher for a plain eager
    call (the module's docstring).  ``tensors`` are the operator's tensor arguments (whatever
    their type: anything but a CPU Tensor or Parameter - a Parameter is a plain tensor to
    torch's dispatch - goes through the dispatcher); ``attrs`` the rest, complete when a tensor
    may require grad (the Function's setup reads every input)."""
    return _call_or(_ENTRIES[name], name, tensors, attrs)


def _call_or(dispatched, name, tensors, attrs):
    """:func:`call`, with ``dispatched`` as the dispatcher's entry."""
    if _is_compiling():
        return OVERLOADS[name](*tensors, *attrs)
    if not watched():
        grad = _grad_enabled()
        needs_grad = False
        for t in tensors:
            kind = type(t)
            if kind is not Tensor and kind is not Parameter or not t.is_cpu:
                break
            if grad and t.requires_grad:
                needs_grad = True
        else:
            if needs_grad:
                return EAGER_AUTOGRAD[name](*tensors, *attrs)
            return _kernel_entry(name, None, tensors + attrs, _NO_KEYWORDS)
    return dispatched(*tensors, *attrs)


def plain_cpu(args):
    """Whether every tensor among ``args`` is a CPU tensor of class Tensor or Parameter (the
    tensors :func:`call` runs without the dispatcher; any other subclass - a functorch wrapper,
    a fake - goes through it)."""
    for value in args:
        if isinstance(value, Tensor) and (type(value) not in _PLAIN or not value.is_cpu):
            return False
    return True


_PLAIN = (Tensor, Parameter)     # a Parameter is a plain tensor to torch's dispatch


def run_kernel(name, args):
    """``name``'s CPU kernel on ``args`` (a plain eager call below autograd), through the
    call's lane when it has one."""
    return _kernel_entry(name, None, args, _NO_KEYWORDS)


class _EagerOps:
    """``torch.ops.aclnn`` as :func:`call` runs it: ``eager_ops.<name>(*args)`` takes the
    operator's arguments by position (its leading tensors, then the rest; missing trailing
    ones take the schema's defaults)."""

    def __init__(self):
        for name, overload in OVERLOADS.items():
            setattr(self, name, _caller(name, getattr(ops, name), overload._schema))


def _caller(name, packet, schema):
    arguments = schema.arguments
    count = sum(1 for a in arguments if isinstance(a.type, torch.TensorType))
    total = len(arguments)
    defaults = tuple(a.default_value if a.has_default_value() else None for a in arguments)

    def run(*args):
        if len(args) < total:
            args = args + defaults[len(args):]
        # the dispatcher through the packet: torch.fx records its proxies' calls by its name
        return _call_or(packet, name, args[:count], args[count:])
    run.__name__ = name
    return run


eager_ops = _EagerOps()
