"""pyaclnn's operators as PyTorch custom operators: ``torch.ops.aclnn.*``.

Importing this module (pyaclnn.functional does it on the first torch tensor it sees, and
``pyaclnn.nn`` on import) registers one ``torch.library`` operator per pyaclnn operator in the
``aclnn`` namespace::

    torch.ops.aclnn.replication_pad2d(x, [l, r, t, b])
    torch.ops.aclnn.max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 1], [1, 1], False)

Each has

* a CPU kernel: the ``pyaclnn.functional`` function itself on the tensors (so it is exactly the
  eager behaviour: dtypes, memory format, products, errors);
* a fake (meta) implementation computing the result shapes and dtypes by the C library's rules,
  without touching data - what ``torch.export``, ``torch.compile`` and FakeTensor tracing run;
* autograd and forward mode (pyaclnn._torch_autograd: every backward is the matching
  ``*_backward`` operator, itself a custom operator and differentiable, so a traced training
  graph holds it and double backward works), batching rules (pyaclnn._torch_vmap) and
  autocast rules (pyaclnn._torch_autocast);
* a functional schema: no operator mutates or aliases its inputs, each result is a new tensor.

The definitions live in pyaclnn._torch_library, which every registering module imports.

pyaclnn.functional with any torch tensor argument goes through these operators (numpy inputs
keep the direct path); a plain eager call runs the CPU kernel without the dispatcher (see
:func:`pyaclnn._torch_kernels.call`); see docs/python.md, "PyTorch custom operators".
"""

from operator import index

import numpy as np
import torch
from torch import SymInt, Tensor

from . import mask as _mask
from ._lane import make_entry
from ._dtypes import acl_dtype
from ._interop import torch_dtype
from ._torch_kernels import call
from ._torch_library import LIBRARY, NAMESPACE, OPERATORS, ops
from ._operators import _im2col_prelu, _max_pool, _max_pool_indices, _pad_upsample
from ._operators._common import ints, pair

__all__ = ["NAMESPACE", "OPERATORS", "ROUTES"]


# ---- fake implementations: shapes and dtypes by the library's rules ----------------------------
def _fake(name):
    def register(function):
        torch.library.register_fake(NAMESPACE + "::" + name, function, lib=LIBRARY)
        return function
    return register


def _invalid(op, why):
    return ValueError("aclnn.%s: %s" % (op, why))


def _result(shape, dtype, like, keep_format=False):
    """A result as the kernel makes it, on ``like``'s device (cpu, or meta): contiguous, or
    channels-last for a 4-D result of a channels-last ``like`` where the operator keeps the
    memory format as torch does (``keep_format``; pyaclnn._operators._common.like)."""
    if keep_format and len(shape) == 4 and like.dim() == 4 and not like.is_contiguous() and \
            like.is_contiguous(memory_format=torch.channels_last):
        return torch.empty(shape, dtype=dtype, device=like.device,
                           memory_format=torch.channels_last)
    return like.new_empty(shape, dtype=dtype)


@_fake("replication_pad2d")
def _replication_pad2d_fake(x, padding):
    if x.dim() not in (3, 4) or len(padding) != 4:
        raise _invalid("replication_pad2d", "x must be 3-D or 4-D and padding have 4 values")
    left, right, top, bottom = padding
    return _result(tuple(x.shape[:-2]) + (x.shape[-2] + top + bottom, x.shape[-1] + left + right),
                   x.dtype, x, True)


@_fake("replication_pad2d_backward")
def _replication_pad2d_backward_fake(grad_output, x, padding):
    return _result(x.shape, x.dtype, x, True)


def _upsample_length(x_length, output_size, scales):
    if len(output_size) == 1:
        return output_size[0]
    if not output_size and scales:
        return torch.sym_int(x_length * scales)   # torch's floor(L * scale_factor)
    raise _invalid("upsample_nearest_exact1d", "output_size must have one value")


@_fake("upsample_nearest_exact1d")
def _upsample_fake(x, output_size, scales=None):
    if x.dim() != 3:
        raise _invalid("upsample_nearest_exact1d", "x must be [N, C, L]")
    return _result((x.shape[0], x.shape[1], _upsample_length(x.shape[2], output_size, scales)),
                   x.dtype, x)


@_fake("upsample_nearest_exact1d_backward")
def _upsample_backward_fake(grad_output, output_size, input_size, scales=None):
    if len(input_size) != 3:
        raise _invalid("upsample_nearest_exact1d_backward", "input_size must be (N, C, L)")
    return _result(tuple(input_size), grad_output.dtype, grad_output)


def _pool_shape(op, x, kernel_size, stride, padding, dilation, ceil_mode):
    shape = _max_pool_indices._out_shape(tuple(x.shape), tuple(kernel_size), tuple(stride),
                                         tuple(padding), tuple(dilation), bool(ceil_mode))
    if len(shape) == 1:
        raise _invalid(op, "invalid pooling geometry for x of shape %s" % (tuple(x.shape),))
    return shape


@_fake("max_pool2d_with_mask")
def _max_pool2d_with_mask_fake(x, kernel_size, stride, padding, dilation, ceil_mode):
    out_shape = _pool_shape("max_pool2d_with_mask", x, kernel_size, stride, padding, dilation,
                            ceil_mode)
    kh, kw = _max_pool_indices._two(tuple(kernel_size), None)
    mask_shape = tuple(out_shape[:-2]) + (kh * kw, _mask._row_bytes(*out_shape[-2:]))
    return _result(out_shape, x.dtype, x, True), _result(mask_shape, torch.int8, x)


@_fake("max_pool2d_with_mask_backward")
def _max_pool2d_with_mask_backward_fake(grad_output, x, mask, kernel_size, stride, padding,
                                        dilation, ceil_mode):
    return _result(x.shape, x.dtype, x, True)


@_fake("max_pool2d_with_indices")
def _max_pool2d_with_indices_fake(x, kernel_size, stride, padding, dilation, ceil_mode,
                                  indices_dtype=None):
    out_shape = _pool_shape("max_pool2d_with_indices", x, kernel_size, stride, padding, dilation,
                            ceil_mode)
    return (_result(out_shape, x.dtype, x, True),
            _result(out_shape, torch.int32 if indices_dtype is None else indices_dtype, x, True))


@_fake("max_pool2d_with_indices_backward")
def _max_pool2d_with_indices_backward_fake(grad_output, x, indices, kernel_size, stride, padding,
                                           dilation, ceil_mode):
    return _result(x.shape, x.dtype, x, True)


@_fake("im2col")
def _im2col_fake(x, kernel_size, dilation, padding, stride, out_dtype=None):
    k, d, p, s = (tuple(v) for v in (kernel_size, dilation, padding, stride))
    shape = _im2col_prelu._im2col_out_shape(tuple(x.shape), k, d, p, s)
    if len(shape) == 1:
        raise _invalid("im2col", "invalid geometry for x of shape %s" % (tuple(x.shape),))
    return _result(shape, x.dtype if out_dtype is None else out_dtype, x)


@_fake("im2col_backward")
def _im2col_backward_fake(grad_output, input_size, kernel_size, dilation, padding, stride,
                          out_dtype=None):
    shape = _im2col_prelu._col2im_out_shape(tuple(grad_output.shape), tuple(input_size),
                                            tuple(kernel_size))
    if len(shape) == 1:
        raise _invalid("im2col_backward", "invalid geometry for grad_output of shape %s"
                       % (tuple(grad_output.shape),))
    return _result(shape, grad_output.dtype if out_dtype is None else out_dtype, grad_output)


def _prelu_dtype(x, weight):
    return x.dtype if x.dtype == weight.dtype else torch.float32


@_fake("prelu")
def _prelu_fake(x, weight, out_dtype=None):
    return _result(x.shape, _prelu_dtype(x, weight) if out_dtype is None else out_dtype, x, True)


@_fake("prelu_backward")
def _prelu_backward_fake(grad_output, x, weight):
    gw_shape = tuple(weight.shape) if weight.numel() == 1 else (weight.numel(),)
    return _result(x.shape, x.dtype, x, True), _result(gw_shape, x.dtype, x)


# ---- pyaclnn.functional's entry for torch tensors ----------------------------------------------
def _tensor(value):
    """An argument as a CPU tensor: tensors as they are, numpy arrays shared, the rest copied."""
    if isinstance(value, Tensor):
        if not value.is_cpu and value.device.type != "meta":
            raise TypeError("pyaclnn: tensors must be on the CPU (got device %s); move them with "
                            ".cpu()" % value.device)
        return value
    if type(value) is np.ndarray and value.flags.writeable and value.dtype.isnative \
            and all(s >= 0 for s in value.strides):
        return torch.from_numpy(value)
    from ._interop import as_array, from_numpy, TORCH
    value = as_array(value)
    return value if isinstance(value, Tensor) else from_numpy(np.array(value), TORCH)


def _sizes(value, name):
    """A SymInt[] argument (sizes): an int, a sequence of them, or a 0-d tensor
    (``x.shape[-1]`` under torch.jit.trace).  A symbolic size (``x.shape[-1] * 3`` under
    torch.export or torch.compile(dynamic=True)) stays symbolic: taking an int of it would fix
    the traced graph to that size."""
    if isinstance(value, Tensor):
        value = index(value)
    if isinstance(value, SymInt):
        return (value,)
    if isinstance(value, (list, tuple)) and any(isinstance(v, SymInt) for v in value):
        return tuple(v if isinstance(v, SymInt) else ints(v, name)[0] for v in value)
    return ints(value, name)


def _dtype(value):
    """A ``*_dtype`` argument as a torch dtype (numpy dtypes, names and acl codes accepted)."""
    if value is None or isinstance(value, torch.dtype):
        return value
    return torch_dtype(acl_dtype(value))


def replication_pad2d(x, padding):
    return call("replication_pad2d", (_tensor(x),), ints(padding, "padding"))


def replication_pad2d_backward(grad_output, x, padding):
    return call("replication_pad2d_backward", (_tensor(grad_output), _tensor(x)),
                 ints(padding, "padding"))


def _length(output_size, length, scales):
    """L_out as pyaclnn.functional takes it: output_size, or int(L * scales) without it (a
    symbolic L gives a symbolic L_out)."""
    if output_size is None:
        if isinstance(length, SymInt) and isinstance(scales, (int, float)):
            return (torch.sym_int(length * float(scales)),)
        return _pad_upsample._output_size(None, length, scales)
    return _sizes(output_size, "output_size")


def upsample_nearest_exact1d(x, output_size=None, scales=None):
    x = _tensor(x)
    return call("upsample_nearest_exact1d", (x,),
                 _length(output_size, x.shape[-1] if x.dim() else 0, scales),
                 None if scales is None else float(scales))


def upsample_nearest_exact1d_backward(grad_output, output_size, input_size, scales=None):
    input_size = _sizes(input_size, "input_size")
    return call("upsample_nearest_exact1d_backward", (_tensor(grad_output),),
                 _length(output_size, input_size[-1] if input_size else 0, scales), input_size,
                 None if scales is None else float(scales))


def _pool(kernel_size, stride, padding, dilation, ceil_mode):
    return (ints(kernel_size, "kernel_size"), ints(stride, "stride"), ints(padding, "padding"),
            ints(dilation, "dilation"), bool(ceil_mode))


def max_pool2d_with_mask(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    return call("max_pool2d_with_mask", (_tensor(x),),
                 *_pool(kernel_size, stride, padding, dilation, ceil_mode))


def max_pool2d_with_mask_backward(grad_output, x, mask, kernel_size, stride=None, padding=0,
                                  dilation=1, ceil_mode=False):
    return call("max_pool2d_with_mask_backward", (_tensor(grad_output), _tensor(x), _tensor(mask)),
                 *_pool(kernel_size, stride, padding, dilation, ceil_mode))


def max_pool2d_with_indices(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            indices_dtype=None):
    return call("max_pool2d_with_indices", (_tensor(x),),
                 *_pool(kernel_size, stride, padding, dilation, ceil_mode), _dtype(indices_dtype))


def max_pool2d_with_indices_backward(grad_output, x, indices, kernel_size, stride=None, padding=0,
                                     dilation=1, ceil_mode=False):
    return call("max_pool2d_with_indices_backward",
                 (_tensor(grad_output), _tensor(x), _tensor(indices)),
                 *_pool(kernel_size, stride, padding, dilation, ceil_mode))


def im2col(x, kernel_size, dilation=1, padding=0, stride=1, out_dtype=None):
    return call("im2col", (_tensor(x),), pair(kernel_size, "kernel_size"),
                 pair(dilation, "dilation"), pair(padding, "padding"), pair(stride, "stride"),
                 _dtype(out_dtype))


def im2col_backward(grad_output, input_size, kernel_size, dilation=1, padding=0, stride=1,
                    out_dtype=None):
    size = _sizes(input_size, "input_size")
    return call("im2col_backward", (_tensor(grad_output),), size * 2 if len(size) == 1 else size,
                 pair(kernel_size, "kernel_size"), pair(dilation, "dilation"),
                 pair(padding, "padding"), pair(stride, "stride"), _dtype(out_dtype))


def _weight(x, weight):
    """prelu's weight: a Python number is one shared weight of x's dtype (pyaclnn.functional)."""
    if isinstance(weight, (int, float)) and not isinstance(weight, bool):
        return _im2col_prelu._scalar_weight(x, weight)
    return _tensor(weight)


def prelu(x, weight, out_dtype=None):
    x = _tensor(x)
    return call("prelu", (x, _weight(x, weight)), _dtype(out_dtype))


def prelu_backward(grad_output, x, weight):
    x = _tensor(x)
    return call("prelu_backward", (_tensor(grad_output), x, _weight(x, weight)))


#: functional name -> the function above that takes the functional's arguments.
ROUTES = {name: globals()[name] for name in OPERATORS}
#: pyaclnn.functional's call ``name(*args, **kwargs)`` with a torch tensor among the arguments:
#: ``ROUTES[name]``, or the call's lane (pyaclnn._lane) when it is a plain eager call seen before.
functional_entry = make_entry(ROUTES)

# autograd, forward mode, batching and autocast rules register on the same operators
from . import _torch_autocast, _torch_autograd, _torch_vmap  # noqa: E402,F401
