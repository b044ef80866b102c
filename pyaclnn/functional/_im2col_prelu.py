"""Im2col (unfold), its backward (col2im / fold), PReLU and its backward, numpy in/out.

    cols = im2col(x, kernel_size=3, dilation=1, padding=1, stride=1)      # [N,]C*9, L
    img = im2col_backward(cols, (H, W), 3, 1, 1, 1)                      # [N,]C, H, W
    y = prelu(x, weight)
    grad_x, grad_w = prelu_backward(grad_y, x, weight)

Attributes are an int (used for both axes) or a pair, in CANN's order kernel_size, dilation,
padding, stride.  Inputs may be float32, float16 or ml_dtypes.bfloat16.  ``out_dtype`` selects
the output dtype where CANN casts the result (im2col, im2col_backward, prelu); by default it is
the input's (prelu: the promoted dtype of x and weight).
"""

import numpy as np

__all__ = ["im2col", "im2col_backward", "prelu", "prelu_backward"]


def _pair(value):
    """An attribute as the aclIntArray values the caller meant: int -> [v, v]."""
    if isinstance(value, (int, np.integer)):
        return [int(value), int(value)]
    return [int(v) for v in value]


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


def _promote(a, b):
    a, b = np.dtype(a), np.dtype(b)
    return a if a == b else np.dtype(np.float32)


def im2col(x, kernel_size, dilation=1, padding=0, stride=1, out_dtype=None):
    """aclnnIm2col: [N,]C,H,W -> [N,]C*kH*kW, L (zeros where a window reaches into the padding)."""
    import pyaclnn
    x = np.asarray(x)
    k, d, p, s = _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    out_shape = _im2col_out_shape(x.shape, k, d, p, s)
    dtype = x.dtype if out_dtype is None else out_dtype
    with pyaclnn.Tensor.from_numpy(x) as xt, \
            pyaclnn.Tensor.empty(out_shape, dtype, fill=np.nan) as out:
        pyaclnn.run_op("Im2col", xt, k, d, p, s, out)
        return out.numpy()


def im2col_backward(grad_output, input_size, kernel_size, dilation=1, padding=0, stride=1,
                    out_dtype=None):
    """aclnnIm2colBackward: [N,]C*kH*kW, L -> [N,]C, H, W with (H, W) = input_size."""
    import pyaclnn
    g = np.asarray(grad_output)
    size, k = _pair(input_size), _pair(kernel_size)
    d, p, s = _pair(dilation), _pair(padding), _pair(stride)
    out_shape = _col2im_out_shape(g.shape, size, k)
    dtype = g.dtype if out_dtype is None else out_dtype
    with pyaclnn.Tensor.from_numpy(g) as gt, \
            pyaclnn.Tensor.empty(out_shape, dtype, fill=np.nan) as out:
        pyaclnn.run_op("Im2colBackward", gt, size, k, d, p, s, out)
        return out.numpy()


def prelu(x, weight, out_dtype=None):
    """aclnnPrelu: x > 0 ? x : weight[c] * x, channel c = axis 1 (weight of 1 or C elements)."""
    import pyaclnn
    x, weight = np.asarray(x), np.asarray(weight)
    dtype = _promote(x.dtype, weight.dtype) if out_dtype is None else out_dtype
    with pyaclnn.Tensor.from_numpy(x) as xt, pyaclnn.Tensor.from_numpy(weight) as wt, \
            pyaclnn.Tensor.empty(x.shape, dtype, fill=np.nan) as out:
        pyaclnn.run_op("Prelu", xt, wt, out)
        return out.numpy()


def prelu_backward(grad_output, x, weight):
    """aclnnPreluBackward -> (grad_input, grad_weight).  grad_output broadcasts to x; grad_weight
    is [C] when weight has C != 1 elements, else weight's shape."""
    import pyaclnn
    g, x, weight = np.asarray(grad_output), np.asarray(x), np.asarray(weight)
    gw_shape = weight.shape if weight.size == 1 else (weight.size,)
    with pyaclnn.Tensor.from_numpy(g) as gt, pyaclnn.Tensor.from_numpy(x) as xt, \
            pyaclnn.Tensor.from_numpy(weight) as wt, \
            pyaclnn.Tensor.empty(x.shape, x.dtype, fill=np.nan) as gi, \
            pyaclnn.Tensor.empty(gw_shape, x.dtype, fill=np.nan) as gw:
        pyaclnn.run_op("PreluBackward", gt, xt, wt, gi, gw)
        return gi.numpy(), gw.numpy()
