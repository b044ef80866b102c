"""Max pooling with CANN's INT8 mask: aclnnMaxPool2dWithMask and its backward, numpy in/out.

    out, mask = max_pool2d_with_mask(x, kernel_size=3, stride=2, padding=1)
    grad_x = max_pool2d_with_mask_backward(grad_out, x, mask, 3, 2, 1)

``x`` is [N, C, H, W] or [C, H, W] (float32, float16 or bfloat16).  ``mask`` is the INT8
container described in :mod:`pyaclnn.mask` (use ``pyaclnn.indices_from_mask`` to get PyTorch's
int64 indices).  Attributes follow CANN: ``kernel_size`` int or (kH, kW); ``stride`` None/() =
kernel_size, int or pair; ``padding`` int or pair (0 <= p <= k/2); ``dilation`` must be 1.
"""

import numpy as np

from .. import mask as _mask

__all__ = ["max_pool2d_with_mask", "max_pool2d_with_mask_backward"]


def _as_list(value):
    """An attribute as the aclIntArray values the caller meant (None -> empty)."""
    if value is None:
        return []
    if isinstance(value, (int, np.integer)):
        return [int(value)]
    return [int(v) for v in value]


def _two(values, default):
    if len(values) == 0:
        return default
    if len(values) == 1:
        return values[0], values[0]
    return values[0], values[1]


def _pooled(size, k, s, p, ceil_mode):
    num = size + 2 * p - k + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _shapes(x_shape, kernel, stride, padding, ceil_mode):
    """(out_shape, mask_shape) for a valid call; placeholders when the attributes are invalid,
    so that the library itself reports what is wrong."""
    try:
        kh, kw = _two(kernel, None)
        sh, sw = _two(stride, (kh, kw))
        ph, pw = _two(padding, None)
        if len(x_shape) not in (3, 4) or min(kh, kw, sh, sw) <= 0:
            raise ValueError
        ho = _pooled(x_shape[-2], kh, sh, ph, ceil_mode)
        wo = _pooled(x_shape[-1], kw, sw, pw, ceil_mode)
        if ho <= 0 or wo <= 0:
            raise ValueError
        out_shape = tuple(x_shape[:-2]) + (ho, wo)
        return out_shape, _mask.mask_shape(out_shape, (kh, kw))
    except (TypeError, ValueError, IndexError):
        return (1,), (1,)


def _run(name, *args):
    # Imported lazily: pyaclnn/__init__ imports this module while it is being built.
    import pyaclnn
    pyaclnn.run_op(name, *args)


def max_pool2d_with_mask(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """aclnnMaxPool2dWithMask.  Returns ``(out, mask)``: out has x's dtype, mask is int8."""
    import pyaclnn
    x = np.asarray(x)
    kernel, strides, pads, dils = (_as_list(kernel_size), _as_list(stride), _as_list(padding),
                                   _as_list(dilation))
    out_shape, mask_shape = _shapes(x.shape, kernel, strides, pads, bool(ceil_mode))
    with pyaclnn.Tensor.from_numpy(x) as xt, \
            pyaclnn.Tensor.empty(out_shape, x.dtype, fill=np.nan) as out, \
            pyaclnn.Tensor.empty(mask_shape, np.int8, fill=np.int8(0x5A)) as mask:
        _run("MaxPool2dWithMask", xt, kernel, strides, pads, dils, bool(ceil_mode), out, mask)
        return out.numpy(), mask.numpy()


def max_pool2d_with_mask_backward(grad_output, x, mask, kernel_size, stride=None, padding=0, dilation=1,
                                  ceil_mode=False):
    """aclnnMaxPool2dWithMaskBackward.  Returns grad_input (x's shape and dtype)."""
    import pyaclnn
    grad_output, x, mask = np.asarray(grad_output), np.asarray(x), np.asarray(mask)
    kernel, strides, pads, dils = (_as_list(kernel_size), _as_list(stride), _as_list(padding),
                                   _as_list(dilation))
    with pyaclnn.Tensor.from_numpy(grad_output) as go, pyaclnn.Tensor.from_numpy(x) as xt, \
            pyaclnn.Tensor.from_numpy(mask) as mt, \
            pyaclnn.Tensor.empty(x.shape, x.dtype, fill=np.nan) as gi:
        _run("MaxPool2dWithMaskBackward", go, xt, mt, kernel, strides, pads, dils, bool(ceil_mode), gi)
        return gi.numpy()
