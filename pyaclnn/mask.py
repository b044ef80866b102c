"""Converting between PyTorch's max-pool indices and CANN's INT8 max-pool mask (pure numpy).

``aclnnMaxPool2dWithMask`` does not return PyTorch-style int64 indices.  It writes an INT8
"mask" container of shape ``[N, C, kH*kW, 32*(ceil(Ho*Wo/16)+1)]`` (``[C, ...]`` for 3-D input)
whose bytes depend on the product (SoC) - two layouts:

``"stream"`` - Atlas A2/A3 (Ascend910B, Ascend910_93), every kernel except 1x1:

* bytes ``[0, 4*N*C*Ho*Wo)``: little-endian int32 argmax values ``ih*W + iw`` (the same numbers
  as PyTorch's ``max_pool2d_with_indices``), in N, C, Ho, Wo order - one global stream that
  ignores the container's [n, c, ...] slabs;
* every other byte: zero.

``"v1"`` - Atlas training (Ascend910) and Atlas inference (Ascend310P), every kernel except 1x1:
the bit mask of CANN's MaxPoolWithArgmaxV1 kernel.  The container is read as rows of
``(G+1)*16`` little-endian uint16 words (``G = ceil(Ho*Wo/16)``):

* row ``r = (n*C1 + c1)*kH*kW + k``, with ``C1 = ceil(C/16)`` and ``k = i*kW + j`` the window
  cell (row-major); word ``p = oh*Wo + ow``;
* bit ``c0`` of that word is set when window cell k of output p holds the maximum of channel
  ``c = 16*c1 + c0`` - the first maximum in k order only, so one bit per output and channel;
* every other bit and byte (words past Ho*Wo, channels past C, rows past N*C1*kH*kW): zero.

The window cell is relative to the window, so decoding it back into ``ih*W + iw`` needs the
kernel size, stride, padding and input width: pass ``kernel_size``, ``stride``, ``padding`` and
``input_shape``.

For a 1x1 kernel the device writes a legacy bit-mask instead, under both layouts: for every
(n, c1) with ``c1 < ceil(C/16)``, a slab of ``(G+1)*32`` bytes whose first ``G*32`` bytes are
0xFF; everything else zero.  A 1x1 window has only one cell, so the indices follow from the
geometry alone (``ih = oh*sH``, ``iw = ow*sW``).

The layout follows the product pyaclnn emulates (``pyaclnn.set_soc_version``); ``layout=``
overrides it:

    mask = mask_from_indices(torch_indices.numpy(), kernel_size=3)      # A2
    indices = indices_from_mask(mask, out.shape)                        # int64, PyTorch's layout
    mask = mask_from_indices(idx, 3, input_shape=x.shape, stride=2, padding=1, layout="v1")
    indices = indices_from_mask(mask, out.shape, x.shape, 2, kernel_size=3, padding=1,
                                layout="v1")
"""

import numpy as np

__all__ = ["mask_from_indices", "indices_from_mask", "mask_shape", "mask_bytes_read", "product_layout",
           "LAYOUTS"]

LAYOUTS = ("stream", "v1")

# Names aclrtGetSocName reports for the products whose mask is the V1 bit mask.
_V1_NAMES = ("Ascend910_CPU", "Ascend910A", "Ascend910ProA", "Ascend910PremiumA", "Ascend910ProB")


def _pair(value, name):
    if isinstance(value, (int, np.integer)):
        return int(value), int(value)
    values = [int(v) for v in value]
    if len(values) == 1:
        return values[0], values[0]
    if len(values) != 2:
        raise ValueError("%s must be an int or a sequence of 1 or 2 ints, got %r" % (name, value))
    return values[0], values[1]


def _row_bytes(ho, wo):
    """Bytes of the container's last dimension: ceil(Ho*Wo/16) blocks of 16 uint16 words, plus one
    spare block (the V1 mask's rows and the 1x1 pattern's slabs have this width)."""
    return (-(-(ho * wo) // 16) + 1) * 32


def _sizes(shape):
    """A shape's sizes as ints, symbolic sizes (torch's SymInt under torch.export and
    torch.compile(dynamic=True)) kept as they are: int() of one would fix it to the traced
    value."""
    return tuple(int(d) if isinstance(d, (int, np.integer)) else d for d in shape)


def mask_shape(output_shape, kernel_size):
    """Shape of the INT8 mask container for pooled shape [N, C, Ho, Wo] or [C, Ho, Wo]."""
    output_shape = _sizes(output_shape)
    if len(output_shape) not in (3, 4):
        raise ValueError("output_shape must be [N, C, Ho, Wo] or [C, Ho, Wo], got %r" % (output_shape,))
    kh, kw = _pair(kernel_size, "kernel_size")
    return output_shape[:-2] + (kh * kw, _row_bytes(*output_shape[-2:]))


def mask_bytes_read(output_shape, kernel_size, layout=None):
    """How many leading bytes of the mask container aclnnMaxPool2dWithMaskBackward reads (every
    later byte is zero): the int32 stream (``4*N*C*Ho*Wo``) in the "stream" layout, the
    ``N*ceil(C/16)*kH*kW`` rows of the V1 bit mask in "v1", at least one byte for a 1x1 kernel
    (the backward does not read its mask)."""
    output_shape = _sizes(output_shape)
    kh, kw = _pair(kernel_size, "kernel_size")
    if kh * kw == 1:
        return 1
    batch = output_shape[0] if len(output_shape) == 4 else 1
    channels, ho, wo = output_shape[-3:]
    if _layout(layout) == "stream":
        return 4 * batch * channels * ho * wo
    return batch * -(-channels // 16) * kh * kw * _row_bytes(ho, wo)


def _legacy_mask(output_shape, kernel_size):
    shape = mask_shape(output_shape, kernel_size)
    mask = np.zeros(shape, dtype=np.int8)
    flat = mask.reshape(-1).view(np.uint8)
    batch = output_shape[0] if len(output_shape) == 4 else 1
    channels = output_shape[-3]
    slab = _row_bytes(*output_shape[-2:])
    for s in range(batch * (-(-channels // 16))):
        flat[s * slab: s * slab + slab - 32] = 0xFF  # every block but the spare one
    return mask


def product_layout(soc=None):
    """The mask layout of a product: ``"v1"`` on Ascend910 and Ascend310P, ``"stream"`` otherwise.

    soc: a name as ``pyaclnn.soc_name()`` reports it ("Ascend910A", "Ascend310P3", ...); None
    asks the library for the product it emulates now (``"stream"`` when the library cannot be
    loaded).  Ascend950 has no mask (both mask operators are rejected); it is given "stream".
    """
    if soc is None:
        try:
            from ._core import soc_name
            soc = soc_name()
        except Exception:  # no library: the A2 default
            soc = None
    if soc is None:
        return "stream"
    soc = str(soc)
    return "v1" if soc in _V1_NAMES or soc.startswith("Ascend310P") else "stream"


def _layout(layout):
    if layout is None:
        return product_layout()
    if layout not in LAYOUTS:
        raise ValueError("layout must be one of %r or None, got %r" % (LAYOUTS, layout))
    return layout


def _check_input_shape(input_shape, indices_shape):
    input_shape = tuple(int(d) for d in input_shape)
    if len(input_shape) != len(indices_shape) or input_shape[:-2] != tuple(indices_shape[:-2]):
        raise ValueError("input_shape %r does not match indices shape %r" % (input_shape, indices_shape))
    return input_shape


class _V1Geometry:
    """What the V1 layout needs to place a window cell: pooled sizes, kernel, stride, padding,
    input width, and the container's row size in uint16 words."""

    def __init__(self, output_shape, input_shape, kernel_size, stride, padding):
        self.kh, self.kw = _pair(kernel_size, "kernel_size")
        self.sh, self.sw = _pair(self._or(stride, (self.kh, self.kw)), "stride")
        self.ph, self.pw = _pair(padding, "padding")
        self.width = int(input_shape[-1])
        self.batch = output_shape[0] if len(output_shape) == 4 else 1
        self.channels, self.ho, self.wo = output_shape[-3:]
        self.c1 = -(-self.channels // 16)
        self.positions = self.ho * self.wo
        self.row_words = _row_bytes(self.ho, self.wo) // 2

    @staticmethod
    def _or(value, default):
        return default if value is None else value

    def window_origin(self):
        """(ih0, iw0) of every output position p, each of shape [Ho*Wo]."""
        oh, ow = np.divmod(np.arange(self.positions, dtype=np.int64), self.wo)
        return oh * self.sh - self.ph, ow * self.sw - self.pw

    def words(self):
        return self.batch * self.c1 * self.kh * self.kw * self.row_words


def _v1_mask(indices, kernel_size, input_shape, stride, padding):
    geo = _V1Geometry(indices.shape, input_shape, kernel_size, stride, padding)
    flat = indices.reshape(geo.batch, geo.channels, geo.positions).astype(np.int64)
    ih0, iw0 = geo.window_origin()
    i = flat // geo.width - ih0
    j = flat % geo.width - iw0
    if flat.size and (i.min() < 0 or i.max() >= geo.kh or j.min() < 0 or j.max() >= geo.kw):
        raise ValueError("an index lies outside its own window: these indices do not come from "
                         "kernel %r, stride %r, padding %r" % ((geo.kh, geo.kw), (geo.sh, geo.sw),
                                                              (geo.ph, geo.pw)))
    words = np.zeros((geo.batch, geo.c1, geo.kh * geo.kw, geo.row_words), dtype=np.uint16)
    n, c, p = np.meshgrid(np.arange(geo.batch), np.arange(geo.channels), np.arange(geo.positions),
                          indexing="ij")
    bits = np.left_shift(1, c % 16).astype(np.uint16)
    np.bitwise_or.at(words, (n, c // 16, i * geo.kw + j, p), bits)
    mask = np.zeros(mask_shape(indices.shape, kernel_size), dtype=np.int8)
    mask.reshape(-1)[:2 * words.size] = words.astype("<u2").reshape(-1).view(np.int8)
    return mask


def mask_from_indices(indices, kernel_size, input_shape=None, *, stride=None, padding=0, layout=None):
    """Builds the INT8 mask aclnnMaxPool2dWithMask writes, from PyTorch-style indices.

    indices:     integer array [N, C, Ho, Wo] or [C, Ho, Wo]; each value ``ih*W + iw`` within its
                 (n, c) plane (what ``torch.nn.functional.max_pool2d(..., return_indices=True)``
                 returns).
    kernel_size: int or (kH, kW) - it sets the container's third dimension.
    input_shape: shape of the pooled input ([N, C, H, W] or [C, H, W]); when given, every index
                 is checked to lie inside the H*W plane.  Required by the "v1" layout.
    stride, padding: int or pair (stride defaults to kernel_size); only the "v1" layout uses
                 them, to find each index's cell in its window.
    layout:      "stream" (A2/A3) or "v1" (Ascend910/310P); None follows the emulated product
                 (``product_layout()``).  A 1x1 kernel gives the same legacy pattern under both.
    Returns an int8 array of shape ``mask_shape(indices.shape, kernel_size)``.
    """
    indices = np.asarray(indices)
    if indices.ndim not in (3, 4):
        raise ValueError("indices must be [N, C, Ho, Wo] or [C, Ho, Wo], got shape %r" % (indices.shape,))
    if not np.issubdtype(indices.dtype, np.integer):
        raise TypeError("indices must hold integers, got %s" % indices.dtype)
    layout = _layout(layout)
    if input_shape is not None:
        input_shape = _check_input_shape(input_shape, indices.shape)
        plane = input_shape[-2] * input_shape[-1]
        if indices.size and (indices.min() < 0 or indices.max() >= plane):
            raise ValueError("indices must lie in [0, %d) for input %r" % (plane, input_shape))
    kh, kw = _pair(kernel_size, "kernel_size")
    if kh == 1 and kw == 1:
        return _legacy_mask(indices.shape, kernel_size)
    if layout == "v1":
        if input_shape is None:
            raise ValueError("the v1 layout needs input_shape (and stride, padding) to place each index "
                             "in its window")
        return _v1_mask(indices, kernel_size, input_shape, stride, padding)
    if indices.size and (indices.min() < -2**31 or indices.max() >= 2**31):
        raise ValueError("indices do not fit in int32")
    mask = np.zeros(mask_shape(indices.shape, kernel_size), dtype=np.int8)
    stream = np.ascontiguousarray(indices, dtype="<i4").reshape(-1).view(np.int8)
    mask.reshape(-1)[:stream.size] = stream
    return mask


def _v1_indices(raw, output_shape, input_shape, kernel_size, stride, padding):
    geo = _V1Geometry(output_shape, input_shape, kernel_size, stride, padding)
    if raw.size < 2 * geo.words():
        raise ValueError("mask holds %d bytes, fewer than the %d of its N*ceil(C/16)*kH*kW rows"
                         % (raw.size, 2 * geo.words()))
    words = raw[:2 * geo.words()].view("<u2").reshape(geo.batch, geo.c1, geo.kh * geo.kw, geo.row_words)
    c = np.arange(geo.channels)
    # bits[n, c, k, p]: window cell k of output p is channel c's maximum
    bits = (words[:, c // 16, :, :geo.positions] >> (c % 16)[None, :, None, None].astype(np.uint16)) & 1
    found = bits.any(axis=2)
    if not found.all():
        n, ch, p = (int(v[0]) for v in np.nonzero(~found))
        raise ValueError("the mask has no bit for output (n=%d, c=%d, p=%d): it does not come from this "
                         "geometry" % (n, ch, p))
    k = bits.argmax(axis=2)                      # the first cell in k order
    ih0, iw0 = geo.window_origin()
    ih, iw = ih0 + k // geo.kw, iw0 + k % geo.kw
    return (ih * geo.width + iw).astype(np.int64).reshape(output_shape)


def indices_from_mask(mask, output_shape, input_shape=None, stride=None, *, kernel_size=None, padding=0,
                      layout=None):
    """Reads PyTorch-style int64 indices [N, C, Ho, Wo] (or [C, Ho, Wo]) back from a mask.

    mask:         the INT8 container written by aclnnMaxPool2dWithMask (any integer dtype of
                  one byte; only its bytes in row-major order matter).
    output_shape: the pooled shape.
    input_shape, stride: the pooled input's shape and the stride (int or pair).  A mask whose
                  window dimension (``mask.shape[-2]``) is 1 comes from a 1x1 kernel and holds
                  no indices: they are computed from these (``(oh*sH)*W + ow*sW``).
    kernel_size, padding: the "v1" layout stores window cells, so decoding needs the whole
                  geometry: kernel_size, stride (default kernel_size), padding and input_shape.
    layout:       "stream" (A2/A3) or "v1" (Ascend910/310P); None follows the emulated product.
                  In "v1" the first set bit in window order wins; an output and channel without
                  any bit raises ValueError.
    """
    mask = np.asarray(mask)
    output_shape = tuple(int(d) for d in output_shape)
    if len(output_shape) not in (3, 4):
        raise ValueError("output_shape must be [N, C, Ho, Wo] or [C, Ho, Wo], got %r" % (output_shape,))
    if mask.itemsize != 1:
        raise TypeError("mask must be an int8/uint8 array, got %s" % mask.dtype)
    layout = _layout(layout)
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
    if layout == "v1":
        if input_shape is None or kernel_size is None:
            raise ValueError("the v1 layout needs input_shape and kernel_size (and stride, padding) to "
                             "turn window cells into indices")
        input_shape = _check_input_shape(input_shape, output_shape)
        return _v1_indices(raw, output_shape, input_shape, kernel_size, stride, padding)
    if raw.size < 4 * count:
        raise ValueError("mask holds %d bytes, fewer than the %d needed for %d int32 indices"
                         % (raw.size, 4 * count, count))
    return raw[:4 * count].view("<i4").astype(np.int64).reshape(output_shape)
