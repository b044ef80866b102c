"""Max pooling with PyTorch-style indices (aclnnMaxPool2dWithIndices) and its backward.

    out, indices = max_pool2d_with_indices(x, 3, stride=2, padding=1)
    grad_x = max_pool2d_with_indices_backward(grad_out, x, indices, 3, 2, 1)

The indices are those of ``torch.nn.functional.max_pool2d(..., return_indices=True)``: the flat
``h*W + w`` of each output's maximum in its (n, c) plane, with the output's shape.  What the
emulated product accepts (``pyaclnn.set_soc_version``, docs/compatibility.md "Products"): on
A2/A3 (the default) dilation must be 1 and the backward takes FLOAT with INT32 indices; Ascend950
takes any dilation > 0, FLOAT16/BFLOAT16 gradients and INT64 indices in the backward too.
"""

from typing import Optional, Tuple

from ._common import (ArrayLike, IntOrPair, as_array, as_arrays, dtype_code, launch, like, out_code,
                      pool_attrs)

__all__ = ["max_pool2d_with_indices", "max_pool2d_with_indices_backward"]

_INT32 = 3  # ACL_INT32


def _two(values, default):
    if len(values) == 0:
        return default
    if len(values) == 1:
        return values[0], values[0]
    return values[0], values[1]


def _pooled(size, k, s, p, d, ceil_mode):
    """PyTorch's pooled size with dilation d (effective kernel d*(k-1)+1)."""
    num = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _out_shape(x_shape, kernel, stride, padding, dilation, ceil_mode):
    """The pooled shape of a valid call; a placeholder when the attributes are invalid, so that
    the library itself reports what is wrong."""
    try:
        kh, kw = _two(kernel, None)
        sh, sw = _two(stride, (kh, kw))
        ph, pw = _two(padding, None)
        dh, dw = _two(dilation, None)
        if len(x_shape) not in (3, 4) or min(kh, kw, sh, sw, dh, dw) <= 0:
            raise ValueError
        ho = _pooled(x_shape[-2], kh, sh, ph, dh, ceil_mode)
        wo = _pooled(x_shape[-1], kw, sw, pw, dw, ceil_mode)
        if ho <= 0 or wo <= 0:
            raise ValueError
        return tuple(x_shape[:-2]) + (ho, wo)
    except (TypeError, ValueError, IndexError):
        return (1,)


def max_pool2d_with_indices(x: ArrayLike, kernel_size: IntOrPair, stride: Optional[IntOrPair] = None,
                            padding: IntOrPair = 0, dilation: IntOrPair = 1, ceil_mode: bool = False,
                            indices_dtype=None) -> Tuple[ArrayLike, ArrayLike]:
    """aclnnMaxPool2dWithIndices: max pooling that also returns PyTorch's indices.

    x:             [N, C, H, W] or [C, H, W]; float32, float16 or bfloat16.
    kernel_size:   int or (kH, kW).
    stride:        None or () for kernel_size (PyTorch's default), an int, or (sH, sW).
    padding:       int or (pH, pW), implicit -inf padding; 0 <= p <= k / 2.
    dilation:      int or (dH, dW): 1 on A2/A3, any value > 0 on Ascend950.
    ceil_mode:     round the output size up, as PyTorch's ``ceil_mode``.
    indices_dtype: int32 (the default: what every product's backward takes) or int64.
    Returns ``(out, indices)``.  Ties go to the first maximum in window order; a NaN wins (the
    last NaN of a window), as in PyTorch.  A torch ``x`` that requires grad gives an ``out``
    whose backward runs :func:`max_pool2d_with_indices_backward` (the indices are not
    differentiable).
    """
    x = as_array(x, "x")
    kernel, strides, pads, dils = pool_attrs(kernel_size, stride, padding, dilation)
    indices_code = out_code(indices_dtype, _INT32)
    shape = _out_shape(tuple(x.shape), kernel, strides, pads, dils, bool(ceil_mode))
    out, indices = launch("MaxPool2dWithIndices", [x], [kernel, strides, pads, dils, bool(ceil_mode)],
                          [like(x, shape, dtype_code(x)), like(x, shape, indices_code)])
    return out, indices


def max_pool2d_with_indices_backward(grad_output: ArrayLike, x: ArrayLike, indices: ArrayLike,
                                     kernel_size: IntOrPair, stride: Optional[IntOrPair] = None,
                                     padding: IntOrPair = 0, dilation: IntOrPair = 1,
                                     ceil_mode: bool = False) -> ArrayLike:
    """aclnnMaxPool2dWithIndicesBackward: routes each output gradient to its input element.

    grad_output: the gradient of ``out`` (its shape and x's dtype); x: the forward's input;
    indices: the forward's indices; the attributes as in the forward.  Gradients that meet in
    one input element are summed in fp32 in increasing output position and rounded once.  An
    index outside the plane raises an error at the call's end instead of writing outside the
    result.  Returns grad_input, x's shape and dtype.
    """
    grad_output, x, indices = as_arrays((grad_output, "grad_output"), (x, "x"),
                                        (indices, "indices"))
    kernel, strides, pads, dils = pool_attrs(kernel_size, stride, padding, dilation)
    return launch("MaxPool2dWithIndicesBackward", [grad_output, x, indices],
                  [kernel, strides, pads, dils, bool(ceil_mode)],
                  [like(x, tuple(x.shape), dtype_code(x))])[0]
