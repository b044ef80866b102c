"""Helpers for tests: exact and tolerant comparisons, strided layouts, the recent error message.

Tolerances used by :func:`assert_close` (``|actual - expected| <= atol + rtol * |expected|``,
element-wise, NaN equal to NaN; the same defaults as ``torch.testing.assert_close``):

==============  =========  ========
dtype           rtol       atol
==============  =========  ========
float16         1e-3       1e-5
bfloat16        1.6e-2     1e-5
float32         1.3e-6     1e-5
float64         1e-7       1e-7
complex64       1.3e-6     1e-5
complex128      1e-7       1e-7
integers, bool  exact      exact
==============  =========  ========

fp16/bf16 results of libaclnn are computed in fp32 and rounded once, so they are normally within
one unit in the last place of the correctly rounded value - well inside these bounds.  Pass
``rtol``/``atol`` to tighten or loosen a specific check.
"""

import numpy as np

from ._core import recent_error_message
from ._dtypes import numpy_dtype
from ._meta import contiguous_strides, storage_extent

TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}


def tolerance(dtype):
    """(rtol, atol) for a dtype (anything pyaclnn.acl_dtype accepts); (0, 0) for exact types."""
    return TOLERANCES.get(numpy_dtype(dtype).name, (0.0, 0.0))


def _describe_mismatch(actual, expected, bad, extra=""):
    idx = np.argwhere(bad)
    first = tuple(int(i) for i in idx[0]) if idx.size else ()
    shown = ", ".join("%s: %r vs %r" % (tuple(int(i) for i in j), actual[tuple(j)].item(),
                                        expected[tuple(j)].item()) for j in idx[:5])
    return ("%d of %d elements differ%s; first at %s. (actual vs expected) %s"
            % (int(bad.sum()), bad.size, extra, first, shown))


def assert_bitwise_equal(actual, expected):
    """Same shape, same dtype, same bytes (NaN payloads and signed zeros included)."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    if actual.shape != expected.shape:
        raise AssertionError("shape %s != expected %s" % (actual.shape, expected.shape))
    if actual.dtype != expected.dtype:
        raise AssertionError("dtype %s != expected %s" % (actual.dtype, expected.dtype))
    if actual.size == 0:
        return
    width = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}.get(actual.dtype.itemsize)
    if width is None:  # complex128 and friends: compare as bytes per element
        a = np.ascontiguousarray(actual).view(np.uint8).reshape(actual.shape + (-1,))
        e = np.ascontiguousarray(expected).view(np.uint8).reshape(expected.shape + (-1,))
        bad = (a != e).any(axis=-1)
    else:
        bad = np.ascontiguousarray(actual).view(width) != np.ascontiguousarray(expected).view(width)
    if bad.any():
        raise AssertionError("not bitwise equal: " + _describe_mismatch(actual, expected, bad))


def assert_close(actual, expected, dtype=None, rtol=None, atol=None, equal_nan=True):
    """Element-wise closeness with the dtype's tolerance from the table above.

    ``dtype`` defaults to ``actual``'s dtype.  Integer and bool types must match exactly.  Infinities
    must match exactly; NaN matches NaN unless ``equal_nan=False``.
    """
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    if actual.shape != expected.shape:
        raise AssertionError("shape %s != expected %s" % (actual.shape, expected.shape))
    default_rtol, default_atol = tolerance(actual.dtype if dtype is None else dtype)
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    if actual.size == 0:
        return
    kind = np.complex128 if "c" in (actual.dtype.kind, expected.dtype.kind) else np.float64
    a = actual.astype(kind)
    e = expected.astype(kind)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a - e)
        ok = (diff <= atol + rtol * np.abs(e)) & np.isfinite(a) & np.isfinite(e)
        same_inf_or_exact = a == e
        both_nan = np.isnan(a) & np.isnan(e) if equal_nan else np.zeros(a.shape, bool)
    bad = ~(ok | same_inf_or_exact | both_nan)
    if bad.any():
        finite = np.isfinite(diff) & bad
        worst = float(diff[finite].max()) if finite.any() else float("nan")
        raise AssertionError("not close (rtol=%g, atol=%g): %s" % (
            rtol, atol, _describe_mismatch(actual, expected, bad, ", max abs diff %g" % worst)))


class Layout(tuple):
    """(strides, offset, storage_numel), plus ``.name`` for test ids."""

    def __new__(cls, name, strides, offset, storage_numel):
        self = super().__new__(cls, (tuple(strides), int(offset), int(storage_numel)))
        self.name = name
        return self

    strides = property(lambda self: self[0])
    offset = property(lambda self: self[1])
    storage_numel = property(lambda self: self[2])

    def __repr__(self):
        return "Layout(%s: strides=%s, offset=%d, storage_numel=%d)" % (self.name, *self)


def _layout(name, shape, strides, offset, tail=0):
    return Layout(name, strides, offset, storage_extent(shape, strides, offset) + tail)


def _permuted_strides(shape, order):
    """Strides of a view of ``shape`` whose storage is laid out in dimension order ``order``."""
    physical = [shape[d] for d in order]
    physical_strides = contiguous_strides(physical)
    strides = [0] * len(shape)
    for position, d in enumerate(order):
        strides[d] = physical_strides[position]
    return tuple(strides)


def layouts(shape):
    """Yield a few (strides, offset, storage_numel) layouts that hold a view of ``shape``.

    contiguous; contiguous at an offset with spare tail; last two dims transposed in storage;
    stepped (every other element of the last dim); padded rows (row pitch = last dim + 3, offset
    1); channels-last (dim 1 stored last, rank >= 3).  Use with ``Tensor.strided``::

        for strides, offset, storage_numel in pyaclnn.testing.layouts(x.shape):
            t = pyaclnn.Tensor.strided(x, strides, offset, storage_numel)
    """
    shape = tuple(int(d) for d in shape)
    n = len(shape)
    contiguous = contiguous_strides(shape)
    yield _layout("contiguous", shape, contiguous, 0)
    yield _layout("offset", shape, contiguous, 3, tail=2)
    if any(d == 0 for d in shape) or n == 0:
        return
    if n >= 2:
        order = list(range(n - 2)) + [n - 1, n - 2]
        yield _layout("transposed", shape, _permuted_strides(shape, order), 0)
    stepped = contiguous_strides(shape[:-1] + (2 * shape[-1],))[:-1] + (2,)
    yield _layout("stepped", shape, stepped, 0)
    if n >= 2:
        padded = contiguous_strides(shape[:-1] + (shape[-1] + 3,))
        yield _layout("padded", shape, padded, 1)
    if n >= 3:
        order = [0] + list(range(2, n)) + [1]
        yield _layout("channels_last", shape, _permuted_strides(shape, order), 0)


def last_error():
    """The text aclGetRecentErrMsg returns now (it clears it), or None."""
    return recent_error_message()


def random_array(shape, dtype, rng=None, low=-4.0, high=4.0):
    """Random values for tests: uniform floats, integers in [low, high), random bools."""
    rng = np.random.default_rng(0) if rng is None else rng
    np_dtype = numpy_dtype(dtype)
    if np_dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if np_dtype.kind in "iu":
        lo = 0 if np_dtype.kind == "u" else int(low)
        return rng.integers(lo, max(int(high), lo + 1), size=shape).astype(np_dtype)
    if np_dtype.kind == "c":
        return (rng.uniform(low, high, size=shape) + 1j * rng.uniform(low, high, size=shape)).astype(np_dtype)
    return rng.uniform(low, high, size=shape).astype(np_dtype)
