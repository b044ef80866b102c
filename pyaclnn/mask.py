"""Converting between PyTorch's max-pool indices and CANN's INT8 max-pool mask (pure numpy).

``aclnnMaxPool2dWithMask`` does not return PyTorch-style int64 indices.  It writes an INT8
"mask" container of shape ``[N, C, kH*kW, 32*(ceil(Ho*Wo/16)+1)]`` (``[C, ...]`` for 3-D input)
whose bytes are, on Atlas A2/A3 and for every kernel except 1x1:

* bytes ``[0, 4*N*C*Ho*Wo)``: little-endian int32 argmax values ``ih*W + iw`` (the same numbers
  as PyTorch's ``max_pool2d_with_indices``), in N, C, Ho, Wo order - one global stream that
  ignores the container's [n, c, ...] slabs;
* every other byte: zero.

For a 1x1 kernel the device writes a legacy bit-mask instead: for every (n, c1) with
``c1 < ceil(C/16)``, a slab of ``(G+1)*32`` bytes (``G = ceil(Ho*Wo/16)``) whose first ``G*32``
bytes are 0xFF; everything else zero.  A 1x1 window has only one cell, so the indices follow
from the geometry alone (``ih = oh*sH``, ``iw = ow*sW``).

    mask = mask_from_indices(torch_indices.numpy(), kernel_size=3)
    indices = indices_from_mask(mask, out.shape)            # int64, PyTorch's layout
"""

import numpy as np

__all__ = ["mask_from_indices", "indices_from_mask", "mask_shape"]


def _pair(value, name):
    if isinstance(value, (int, np.integer)):
        return int(value), int(value)
    values = [int(v) for v in value]
    if len(values) == 1:
        return values[0], values[0]
    if len(values) != 2:
        raise ValueError("%s must be an int or a sequence of 1 or 2 ints, got %r" % (name, value))
    return values[0], values[1]


def mask_shape(output_shape, kernel_size):
    """Shape of the INT8 mask container for pooled shape [N, C, Ho, Wo] or [C, Ho, Wo]."""
    output_shape = tuple(int(d) for d in output_shape)
    if len(output_shape) not in (3, 4):
        raise ValueError("output_shape must be [N, C, Ho, Wo] or [C, Ho, Wo], got %r" % (output_shape,))
    kh, kw = _pair(kernel_size, "kernel_size")
    ho, wo = output_shape[-2:]
    width = (-(-(ho * wo) // 16) + 1) * 32
    return output_shape[:-2] + (kh * kw, width)


def _legacy_mask(output_shape, kernel_size):
    shape = mask_shape(output_shape, kernel_size)
    mask = np.zeros(shape, dtype=np.int8)
    flat = mask.reshape(-1).view(np.uint8)
    batch = output_shape[0] if len(output_shape) == 4 else 1
    channels = output_shape[-3]
    groups = -(-(output_shape[-2] * output_shape[-1]) // 16)
    slab = (groups + 1) * 32
    for s in range(batch * (-(-channels // 16))):
        flat[s * slab: s * slab + groups * 32] = 0xFF
    return mask


def mask_from_indices(indices, kernel_size, input_shape=None):
    """Builds the INT8 mask aclnnMaxPool2dWithMask writes, from PyTorch-style indices.

    indices:     integer array [N, C, Ho, Wo] or [C, Ho, Wo]; each value ``ih*W + iw`` within its
                 (n, c) plane (what ``torch.nn.functional.max_pool2d(..., return_indices=True)``
                 returns).
    kernel_size: int or (kH, kW) - it sets the container's third dimension.
    input_shape: optional shape of the pooled input ([N, C, H, W] or [C, H, W]); when given,
                 every index is checked to lie inside the H*W plane.
    Returns an int8 array of shape ``mask_shape(indices.shape, kernel_size)``.
    """
    indices = np.asarray(indices)
    if indices.ndim not in (3, 4):
        raise ValueError("indices must be [N, C, Ho, Wo] or [C, Ho, Wo], got shape %r" % (indices.shape,))
    if not np.issubdtype(indices.dtype, np.integer):
        raise TypeError("indices must hold integers, got %s" % indices.dtype)
    if input_shape is not None:
        input_shape = tuple(int(d) for d in input_shape)
        if len(input_shape) != indices.ndim or input_shape[:-2] != indices.shape[:-2]:
            raise ValueError("input_shape %r does not match indices shape %r" % (input_shape, indices.shape))
        plane = input_shape[-2] * input_shape[-1]
        if indices.size and (indices.min() < 0 or indices.max() >= plane):
            raise ValueError("indices must lie in [0, %d) for input %r" % (plane, input_shape))
    kh, kw = _pair(kernel_size, "kernel_size")
    if kh == 1 and kw == 1:
        return _legacy_mask(indices.shape, kernel_size)
    if indices.size and (indices.min() < -2**31 or indices.max() >= 2**31):
        raise ValueError("indices do not fit in int32")
    mask = np.zeros(mask_shape(indices.shape, kernel_size), dtype=np.int8)
    stream = np.ascontiguousarray(indices, dtype="<i4").reshape(-1).view(np.int8)
    mask.reshape(-1)[:stream.size] = stream
    return mask


def indices_from_mask(mask, output_shape, input_shape=None, stride=None):
    """Reads PyTorch-style int64 indices [N, C, Ho, Wo] (or [C, Ho, Wo]) back from a mask.

    mask:         the INT8 container written by aclnnMaxPool2dWithMask (any integer dtype of
                  one byte; only its bytes in row-major order matter).
    output_shape: the pooled shape.
    A mask whose window dimension (``mask.shape[-2]``) is 1 comes from a 1x1 kernel and holds no indices; then ``input_shape`` and ``stride`` (int or pair) are needed
    and the indices are computed from the geometry (``(oh*sH)*W + ow*sW``).
    """
    mask = np.asarray(mask)
    output_shape = tuple(int(d) for d in output_shape)
    if len(output_shape) not in (3, 4):
        raise ValueError("output_shape must be [N, C, Ho, Wo] or [C, Ho, Wo], got %r" % (output_shape,))
    if mask.itemsize != 1:
        raise TypeError("mask must be an int8/uint8 array, got %s" % mask.dtype)
    count = int(np.prod(output_shape, dtype=np.int64))
    if mask.ndim >= 2 and mask.shape[-2] == 1:
        if input_shape is None or stride is None:
            raise ValueError("a 1x1-kernel mask holds no indices: pass input_shape and stride")
        sh, sw = _pair(stride, "stride")
        width = int(input_shape[-1])
        ho, wo = output_shape[-2:]
        plane = (np.arange(ho, dtype=np.int64)[:, None] * sh * width
                 + np.arange(wo, dtype=np.int64)[None, :] * sw)
        return np.broadcast_to(plane, output_shape).copy()
    raw = np.ascontiguousarray(mask).reshape(-1).view(np.uint8)
    if raw.size < 4 * count:
        raise ValueError("mask holds %d bytes, fewer than the %d needed for %d int32 indices"
                         % (raw.size, 4 * count, count))
    return raw[:4 * count].view("<i4").astype(np.int64).reshape(output_shape)
