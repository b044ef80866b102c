"""Im2col (unfold) and its backward (col2im / fold); PReLU and its backward.

    cols = im2col(x, kernel_size=3, dilation=1, padding=1, stride=1)      # [N,]C*9, L
    img = im2col_backward(cols, (H, W), 3, 1, 1, 1)                      # [N,]C, H, W
    y = prelu(x, weight)
    grad_x, grad_w = prelu_backward(grad_y, x, weight)

Attributes are an int (used for both axes) or a pair, in CANN's order kernel_size, dilation,
padding, stride (the same order as ``torch.nn.functional.unfold``).  ``out_dtype`` selects the
result's dtype where CANN casts the result (im2col, im2col_backward, prelu); by default it is
the input's (prelu: the promoted dtype of x and weight).
"""

from typing import Tuple

import numpy as np

from ._common import (ArrayLike, IntOrPair, as_array, as_arrays, dtype_code, launch, like, out_code, pair)

__all__ = ["im2col", "im2col_backward", "prelu", "prelu_backward"]

_FLOAT = 0   # ACL_FLOAT


def _windows(size, k, d, p, s):
    return (size + 2 * p - (d * (k - 1) + 1)) // s + 1


def _im2col_out_shape(shape, k, d, p, s):
    """out's shape for a valid call, or a placeholder so that the library reports the error."""
    try:
        if len(shape) not in (3, 4) or min(len(k), len(d), len(p), len(s)) < 2:
            raise ValueError
        oh = _windows(shape[-2], k[0], d[0], p[0], s[0])
        ow = _windows(shape[-1], k[1], d[1], p[1], s[1])
        if min(oh, ow, k[0], k[1], s[0], s[1], d[0], d[1]) <= 0:
            raise ValueError
        return tuple(shape[:-3]) + (shape[-3] * k[0] * k[1], oh * ow)
    except (ValueError, ZeroDivisionError, IndexError):
        return (1,)


def _col2im_out_shape(shape, size, k):
    try:
        if len(shape) not in (2, 3) or len(size) < 2 or len(k) < 2 or k[0] * k[1] <= 0:
            raise ValueError
        return tuple(shape[:-2]) + (shape[-2] // (k[0] * k[1]), size[0], size[1])
    except (ValueError, IndexError):
        return (1,)


def im2col(x: ArrayLike, kernel_size: IntOrPair, dilation: IntOrPair = 1, padding: IntOrPair = 0,
           stride: IntOrPair = 1, out_dtype=None) -> ArrayLike:
    """aclnnIm2col: every kH x kW window of ``x`` as a column (``torch.nn.functional.unfold``).

    x: [N, C, H, W] or [C, H, W]; float32, float16 or bfloat16.
    Returns [N, C*kH*kW, L] (or [C*kH*kW, L]) with L = Ho*Wo windows in row-major order; row
    ``c*kH*kW + ki*kW + kj`` holds the element at window offset (ki, kj) of channel c, zero where
    the window reaches into the padding.  Exact (a gather), plus the cast to ``out_dtype``.
    """
    x = as_array(x, "x")
    k, d, p, s = (pair(kernel_size, "kernel_size"), pair(dilation, "dilation"), pair(padding, "padding"),
                  pair(stride, "stride"))
    code = out_code(out_dtype, dtype_code(x))
    out_shape = _im2col_out_shape(tuple(x.shape), k, d, p, s)
    return launch("Im2col", [x], [k, d, p, s], [(out_shape, code)])[0]


def im2col_backward(grad_output: ArrayLike, input_size: IntOrPair, kernel_size: IntOrPair,
                    dilation: IntOrPair = 1, padding: IntOrPair = 0, stride: IntOrPair = 1,
                    out_dtype=None) -> ArrayLike:
    """aclnnIm2colBackward (col2im, ``torch.nn.functional.fold``): sums columns back into an image.

    grad_output: [N, C*kH*kW, L] or [C*kH*kW, L]; input_size: the image's (H, W).
    Every image element receives the sum of the column entries that read it, in fp32 in
    (ki, kj) order, rounded once to the result dtype.
    Returns [N, C, H, W] (or [C, H, W]), grad_output's dtype unless ``out_dtype`` is given.
    """
    g = as_array(grad_output, "grad_output")
    size, k = pair(input_size, "input_size"), pair(kernel_size, "kernel_size")
    d, p, s = pair(dilation, "dilation"), pair(padding, "padding"), pair(stride, "stride")
    out_shape = _col2im_out_shape(tuple(g.shape), size, k)
    code = out_code(out_dtype, dtype_code(g))
    return launch("Im2colBackward", [g], [size, k, d, p, s], [(out_shape, code)])[0]


def _scalar_weight(x, value):
    """A Python number as prelu's one shared weight: a 1-element array of x's dtype and kind."""
    if type(x) is np.ndarray:
        return np.full((1,), value, dtype=x.dtype)
    import torch
    return torch.full((1,), value, dtype=x.dtype)


def prelu(x: ArrayLike, weight: ArrayLike, out_dtype=None) -> ArrayLike:
    """aclnnPrelu: ``x > 0 ? x : weight[c] * x`` with c the channel (dim 1; dim 0 for 1-D x).

    weight has 1 element (shared) or C elements; a Python number is one shared weight in x's
    dtype (as torch's 1-element weight tensor).  dtypes: float32, float16, bfloat16; mixed
    input dtypes compute in their promoted dtype (fp16 + bf16 -> fp32), as CANN does.
    Returns x's shape, the promoted dtype unless ``out_dtype`` is given.
    """
    if isinstance(weight, (int, float)) and not isinstance(weight, bool):
        x = as_array(x, "x")
        weight = _scalar_weight(x, weight)
    else:
        x, weight = as_arrays((x, "x"), (weight, "weight"))
    x_code, w_code = dtype_code(x), dtype_code(weight)
    code = out_code(out_dtype, x_code if x_code == w_code else _FLOAT)
    return launch("Prelu", [x, weight], [], [like(x, tuple(x.shape), code)])[0]


def prelu_backward(grad_output: ArrayLike, x: ArrayLike,
                   weight: ArrayLike) -> Tuple[ArrayLike, ArrayLike]:
    """aclnnPreluBackward -> ``(grad_input, grad_weight)``.

    grad_output broadcasts to x's shape; all three share one dtype (float32, float16, bfloat16).
    grad_input = grad_output where x > 0, else weight[c] * grad_output; grad_weight sums
    ``x * grad_output`` over the elements with x <= 0 of each channel (fp32 sums in a fixed
    order).  grad_weight is [C] when weight has C != 1 elements, else weight's shape.
    """
    if isinstance(weight, (int, float)) and not isinstance(weight, bool):
        g, x = as_arrays((grad_output, "grad_output"), (x, "x"))
        weight = _scalar_weight(x, weight)
    else:
        g, x, weight = as_arrays((grad_output, "grad_output"), (x, "x"), (weight, "weight"))
    size = 1
    for dim in weight.shape:
        size *= dim
    gw_shape = tuple(weight.shape) if size == 1 else (size,)
    code = dtype_code(x)
    grad_input, grad_weight = launch("PreluBackward", [g, x, weight], [],
                                     [like(x, tuple(x.shape), code), (gw_shape, code)])
    return grad_input, grad_weight
