"""Replication padding and nearest-exact 1-D upsampling, with their backwards.

    y = replication_pad2d(x, (left, right, top, bottom))
    gx = replication_pad2d_backward(grad_y, x, (left, right, top, bottom))
    y = upsample_nearest_exact1d(x, output_size=L_out)
    gx = upsample_nearest_exact1d_backward(grad_y, output_size=L_out, input_size=(N, C, L))

Arrays are numpy arrays, torch CPU tensors or DLPack objects, read where they lie; results come
back as torch tensors for torch inputs, numpy arrays otherwise.  A torch input that requires
grad gives a result whose backward runs the backward operator.  Bad arguments raise the
library's own errors (``pyaclnn.ParamInvalidError`` and friends, with CANN's message).
"""

from typing import Optional, Sequence, Union

import numpy as np

from ._common import ArrayLike, as_array, as_arrays, dtype_code, empty_result, ints, launch, like

__all__ = [
    "replication_pad2d",
    "replication_pad2d_backward",
    "upsample_nearest_exact1d",
    "upsample_nearest_exact1d_backward",
]


def _padded_shape(shape, padding):
    """The output shape of a valid call; the input shape otherwise, so that the library itself
    reports what is wrong with the arguments."""
    if len(shape) >= 2 and len(padding) == 4:
        height = shape[-2] + padding[2] + padding[3]
        width = shape[-1] + padding[0] + padding[1]
        if height >= 0 and width >= 0:
            return tuple(shape[:-2]) + (height, width)
    return tuple(shape)


def _scales(scales):
    return 0.0 if scales is None else float(scales)


def replication_pad2d(x: ArrayLike, padding: Sequence[int]) -> ArrayLike:
    """aclnnReplicationPad2d: pads the last two dims of ``x`` by repeating its edge values.

    x:       [C, H, W] or [N, C, H, W]; float32, float16, bfloat16, float64, complex64,
             complex128, int8, uint8, int16, int32 or int64 (a pure copy: exact for every dtype).
    padding: four ints in PyTorch's order ``(left, right, top, bottom)``: the W dim first, then
             H (``torch.nn.functional.pad(x, padding, mode="replicate")``).  Each must be
             non-negative and smaller than the dim it pads (CANN's rule).
    Returns [..., H + top + bottom, W + left + right], x's dtype.
    """
    x = as_array(x, "x")
    padding = ints(padding, "padding")
    out_shape = _padded_shape(tuple(x.shape), padding)
    return launch("ReplicationPad2d", [x], [padding], [like(x, out_shape, dtype_code(x))])[0]


def replication_pad2d_backward(grad_output: ArrayLike, x: ArrayLike,
                               padding: Sequence[int]) -> ArrayLike:
    """aclnnReplicationPad2dBackward: the gradient of :func:`replication_pad2d` with respect to x.

    grad_output: the gradient of the padded result (its shape); x: the forward's input (only
    its shape and dtype are used); padding: as in the forward, ``(left, right, top, bottom)``.
    dtypes: float32, float16, bfloat16, float64, complex64, complex128, the same for both.
    Each input element receives the sum of the gradients of every output it was copied to,
    summed in fp32 for fp16/bf16.  Returns x's shape and dtype.
    """
    grad_output, x = as_arrays((grad_output, "grad_output"), (x, "x"))
    padding = ints(padding, "padding")
    return launch("ReplicationPad2dBackward", [grad_output, x], [padding],
                  [like(x, tuple(x.shape), dtype_code(x))])[0]


def _output_size(output_size, length, scales):
    """L_out: ``output_size``, or from ``scales`` alone as torch's ``scale_factor`` gives it
    (``int(L * scale_factor)``, aten's compute_output_size), the scale then used as given."""
    if output_size is None and scales is not None:
        if isinstance(scales, bool) or not isinstance(scales, (int, float, np.floating, np.integer)):
            raise TypeError("scales must be a float, got %s (%r)" % (type(scales).__name__, scales))
        return (int(length * float(scales)),)
    return ints(output_size, "output_size")


def _empty_batch(shape, length_out):
    """Whether torch answers this call with an empty result although N = 0: a [0, C, L] input
    with C, L and L_out > 0 (CANN's op_api rejects any empty tensor)."""
    return len(shape) == 3 and shape[0] == 0 and shape[1] > 0 and shape[2] > 0 and length_out > 0


def upsample_nearest_exact1d(x: ArrayLike, output_size: Optional[Union[int, Sequence[int]]],
                             scales: Optional[float] = None) -> ArrayLike:
    """aclnnUpsampleNearestExact1d: resizes the last dim of [N, C, L] ``x`` to ``output_size``.

    Output element i reads input ``min(floor((i + 0.5) * scale), L - 1)`` with
    ``scale = 1 / scales`` when ``scales`` > 0 is given (PyTorch's ``scale_factor``) and
    ``L / output_size`` otherwise - PyTorch's ``mode="nearest-exact"``.
    output_size: an int or a 1-element sequence (L_out); None with ``scales`` gives
    ``int(L * scales)``, as ``F.interpolate(x, scale_factor=scales, mode="nearest-exact")``
    (its ``recompute_scale_factor=True`` is ``upsample_nearest_exact1d(x, int(L * s))``).
    An empty batch (N = 0) gives an empty [0, C, L_out] result, as torch does.
    dtypes: float32, float16, bfloat16, uint8.  Returns [N, C, L_out], x's dtype.
    """
    x = as_array(x, "x")
    shape = tuple(x.shape)
    output_size = _output_size(output_size, shape[-1] if shape else 0, scales)
    if len(shape) == 3 and len(output_size) == 1 and output_size[0] >= 0:
        out_shape = shape[:2] + (output_size[0],)
        if _empty_batch(shape, output_size[0]):
            return empty_result([x], out_shape, dtype_code(x))
    else:
        out_shape = shape   # let the library say what is wrong
    return launch("UpsampleNearestExact1d", [x], [output_size, _scales(scales)],
                  [(out_shape, dtype_code(x))])[0]


def upsample_nearest_exact1d_backward(grad_output: ArrayLike,
                                      output_size: Optional[Union[int, Sequence[int]]],
                                      input_size: Sequence[int],
                                      scales: Optional[float] = None) -> ArrayLike:
    """aclnnUpsampleNearestExact1dBackward: the gradient of :func:`upsample_nearest_exact1d`.

    grad_output: [N, C, L_out]; output_size: the forward's L_out (int or 1-element sequence, or
    None with ``scales`` as in the forward); input_size: the forward input's shape (N, C, L);
    scales: the forward's ``scales``.  Each input element receives the sum of the gradients of
    the outputs that read it (fp32 sums for fp16/bf16).  dtypes: float32, float16, bfloat16.
    Returns an array of shape ``input_size``, grad_output's dtype (empty for an empty batch).
    """
    grad_output = as_array(grad_output, "grad_output")
    input_size = ints(input_size, "input_size")
    output_size = _output_size(output_size, input_size[-1] if input_size else 0, scales)
    if len(input_size) == 3 and min(input_size) >= 0:
        out_shape = input_size
        if (len(output_size) == 1 and _empty_batch(input_size, output_size[0])
                and tuple(grad_output.shape) == (0, input_size[1], output_size[0])):
            return empty_result([grad_output], out_shape, dtype_code(grad_output))
    else:
        out_shape = tuple(grad_output.shape)
    return launch("UpsampleNearestExact1dBackward", [grad_output],
                  [output_size, input_size, _scales(scales)],
                  [(out_shape, dtype_code(grad_output))])[0]
