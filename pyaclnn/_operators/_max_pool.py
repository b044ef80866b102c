"""Max pooling with CANN's INT8 mask (aclnnMaxPool2dWithMask) and its backward.

    out, mask = max_pool2d_with_mask(x, kernel_size=3, stride=2, padding=1)
    grad_x = max_pool2d_with_mask_backward(grad_out, x, mask, 3, 2, 1)

The mask is not PyTorch's int64 indices: it is CANN's INT8 container
``[N, C, kH*kW, 32*(ceil(Ho*Wo/16)+1)]`` whose first ``4*N*C*Ho*Wo`` bytes are the little-endian
int32 argmax ``ih*W + iw`` of every output in N, C, Ho, Wo order (the rest is zero; a 1x1 kernel
writes a different, legacy pattern) on Atlas A2/A3.  On Ascend910 and Ascend310P
(``pyaclnn.set_soc_version``) it is the V1 uint16 bit mask of window cells instead, and
Ascend910 computes float32 as float16.  ``pyaclnn.indices_from_mask(mask, out.shape)`` turns it
into the indices ``torch.nn.functional.max_pool2d(..., return_indices=True)`` returns, and
``pyaclnn.mask_from_indices`` goes the other way (see :mod:`pyaclnn.mask`).
"""

from typing import Optional, Tuple

from .. import mask as _mask
from ._common import ArrayLike, IntOrPair, as_array, as_arrays, dtype_code, launch, like, pool_attrs
from ._max_pool_indices import _out_shape, _two

__all__ = ["max_pool2d_with_mask", "max_pool2d_with_mask_backward"]

_INT8 = 2   # ACL_INT8


def _shapes(x_shape, kernel, stride, padding, ceil_mode):
    """(out_shape, mask_shape) for a valid call; placeholders when the attributes are invalid,
    so that the library itself reports what is wrong."""
    out_shape = _out_shape(x_shape, kernel, stride, padding, (1,), ceil_mode)
    if out_shape == (1,):
        return (1,), (1,)
    return out_shape, _mask.mask_shape(out_shape, _two(kernel, None))


def max_pool2d_with_mask(x: ArrayLike, kernel_size: IntOrPair, stride: Optional[IntOrPair] = None,
                         padding: IntOrPair = 0, dilation: IntOrPair = 1,
                         ceil_mode: bool = False) -> Tuple[ArrayLike, ArrayLike]:
    """aclnnMaxPool2dWithMask: max pooling that also returns CANN's argmax mask.

    x:           [N, C, H, W] or [C, H, W]; float32, float16 or bfloat16.
    kernel_size: int or (kH, kW).
    stride:      None or () for kernel_size (PyTorch's default), an int, or (sH, sW).
    padding:     int or (pH, pW), implicit -inf padding; 0 <= p <= k / 2.
    dilation:    must be 1 (CANN's rule).
    ceil_mode:   round the output size up, as PyTorch's ``ceil_mode``.
    Returns ``(out, mask)``: out has x's dtype, mask is int8 (see the module docstring).  Ties go
    to the first maximum in window order; NaN propagates as in PyTorch.
    """
    x = as_array(x, "x")
    kernel, strides, pads, dils = pool_attrs(kernel_size, stride, padding, dilation)
    out_shape, mask_shape = _shapes(tuple(x.shape), kernel, strides, pads, bool(ceil_mode))
    out, mask = launch("MaxPool2dWithMask", [x], [kernel, strides, pads, dils, bool(ceil_mode)],
                       [like(x, out_shape, dtype_code(x)), (mask_shape, _INT8)])
    return out, mask


def max_pool2d_with_mask_backward(grad_output: ArrayLike, x: ArrayLike, mask: ArrayLike,
                                  kernel_size: IntOrPair, stride: Optional[IntOrPair] = None,
                                  padding: IntOrPair = 0, dilation: IntOrPair = 1,
                                  ceil_mode: bool = False) -> ArrayLike:
    """aclnnMaxPool2dWithMaskBackward: routes each output gradient to its argmax in the mask.

    grad_output: the gradient of ``out`` (its shape and x's dtype); x: the forward's input;
    mask: the forward's int8 mask; the attributes as in the forward.  Every index is checked
    against its window: a mask that does not come from this geometry raises an error at the
    call's end instead of writing outside the result (Ascend910's V1 bit mask names window
    cells: a bit on a padding cell is dropped).  Gradients that meet in one input element
    are summed in fp32 in a fixed order (bit-reproducible whatever the thread count).
    Returns grad_input, x's shape and dtype.
    """
    grad_output, x, mask = as_arrays((grad_output, "grad_output"), (x, "x"), (mask, "mask"))
    kernel, strides, pads, dils = pool_attrs(kernel_size, stride, padding, dilation)
    return launch("MaxPool2dWithMaskBackward", [grad_output, x, mask],
                  [kernel, strides, pads, dils, bool(ceil_mode)],
                  [like(x, tuple(x.shape), dtype_code(x))])[0]
