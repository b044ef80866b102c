"""aclrtReduceAsync (docs/runtime.md, "Reduce tasks"): dst = dst op src element by element over
`count` bytes, on the stream.

The reference is NumPy's own arithmetic, written independently of the library: float16 / bfloat16
sums are the correctly rounded sums (exact in float64, then one cast), integer sums wrap at the
type's width (NumPy's fixed-width addition), MAX / MIN keep dst where src is NaN (np.where on a
comparison).  INT4 is two signed 4-bit lanes per byte, low nibble first.  Checks as CANN's:
100000 for null pointers, a reserved pointer or an unmapped type; 107000 for count 0, a kind
outside [10, 14) or host memory; 207000 for EQUAL (not public) and on Ascend910 / Ascend310P.
"""
import ml_dtypes
import numpy as np
import pytest

from pyaclnn import ffi, lib

SUM, MAX, MIN, EQUAL = 10, 11, 12, 13
INVALID_PARAM, RT_PARAM_INVALID, FEATURE_NOT_SUPPORT = 100000, 107000, 207000

TYPES = {
    "float32": (lambda: lib.ACL_FLOAT, np.float32),
    "float16": (lambda: lib.ACL_FLOAT16, np.float16),
    "bfloat16": (lambda: lib.ACL_BF16, ml_dtypes.bfloat16),
    "int8": (lambda: lib.ACL_INT8, np.int8),
    "int16": (lambda: lib.ACL_INT16, np.int16),
    "int32": (lambda: lib.ACL_INT32, np.int32),
    "uint8": (lambda: lib.ACL_UINT8, np.uint8),
    "uint16": (lambda: lib.ACL_UINT16, np.uint16),
    "uint32": (lambda: lib.ACL_UINT32, np.uint32),
}


def values(rng, dtype, n):
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=n, endpoint=True).astype(dtype)
    v = (rng.standard_normal(n) * rng.choice([1e-3, 1.0, 300.0, 3e4], size=n)).astype(np.float32)
    v[:4] = [np.nan, np.inf, -np.inf, 0.0]
    with np.errstate(over="ignore"):  # float16 turns the largest into inf: more cases
        return v.astype(dtype)


def reference(kind, d, s):
    if kind == SUM:
        if np.issubdtype(d.dtype, np.integer):
            with np.errstate(over="ignore"):
                return (d + s).astype(d.dtype)  # wraps at the type's width
        with np.errstate(over="ignore", invalid="ignore"):  # exact in float64, then one rounding
            return (d.astype(np.float64) + s.astype(np.float64)).astype(d.dtype)
    wide_d, wide_s = d.astype(np.float64), s.astype(np.float64)
    take = wide_s > wide_d if kind == MAX else wide_s < wide_d
    return np.where(take, s, d)


class Device:
    """Two device buffers and a stream, released at the end of the test."""

    def __init__(self, nbytes):
        self.ptrs = []
        for _ in range(2):
            out = ffi.new("void **")
            assert lib.aclrtMalloc(out, nbytes, lib.ACL_MEM_MALLOC_HUGE_FIRST) == 0
            self.ptrs.append(out[0])
        s = ffi.new("aclrtStream *")
        assert lib.aclrtCreateStream(s) == 0
        self.stream = s[0]

    def put(self, ptr, array):
        buf = ffi.from_buffer(np.ascontiguousarray(array))
        assert lib.aclrtMemcpy(ptr, len(buf), buf, len(buf), lib.ACL_MEMCPY_HOST_TO_DEVICE) == 0

    def get(self, ptr, like):
        out = np.empty_like(like)
        buf = ffi.from_buffer(out)
        assert lib.aclrtMemcpy(buf, len(buf), ptr, len(buf), lib.ACL_MEMCPY_DEVICE_TO_HOST) == 0
        return out

    def close(self):
        lib.aclrtDestroyStream(self.stream)
        for p in self.ptrs:
            lib.aclrtFree(p)


@pytest.fixture
def device(acl):
    made = []

    def make(nbytes):
        made.append(Device(nbytes))
        return made[-1]
    yield make
    for d in made:
        d.close()


def bits(a):
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[a.dtype.itemsize])


@pytest.mark.parametrize("kind", [SUM, MAX, MIN])
@pytest.mark.parametrize("name", list(TYPES))
def test_reduce_matches_numpy(device, rng, kind, name):
    acl_type, dtype = TYPES[name][0](), TYPES[name][1]
    n = 1000
    d, s = values(rng, dtype, n), values(rng, dtype, n)
    dev = device(d.nbytes)
    dst, src = dev.ptrs
    dev.put(dst, d)
    dev.put(src, s)
    assert lib.aclrtReduceAsync(dst, src, d.nbytes, kind, acl_type, dev.stream, ffi.NULL) == 0
    assert lib.aclrtSynchronizeStream(dev.stream) == 0
    got, want = dev.get(dst, d), reference(kind, d, s)
    nan = np.isnan(want.astype(np.float64))
    np.testing.assert_array_equal(np.isnan(got.astype(np.float64)), nan)
    np.testing.assert_array_equal(bits(got)[~nan], bits(want)[~nan])
    assert np.array_equal(dev.get(src, s).view(np.uint8), s.view(np.uint8))  # src untouched


def int4_lanes(packed):
    lanes = np.stack([packed & 0xF, packed >> 4], axis=-1).astype(np.int16)
    return np.where(lanes >= 8, lanes - 16, lanes)


@pytest.mark.parametrize("kind", [SUM, MAX, MIN])
def test_reduce_int4_lanes(device, rng, kind):
    d = rng.integers(0, 256, size=64, dtype=np.uint8)
    s = rng.integers(0, 256, size=64, dtype=np.uint8)
    dev = device(64)
    dst, src = dev.ptrs
    dev.put(dst, d)
    dev.put(src, s)
    assert lib.aclrtReduceAsync(dst, src, 64, kind, lib.ACL_INT4, dev.stream, ffi.NULL) == 0
    assert lib.aclrtSynchronizeStream(dev.stream) == 0
    a, b = int4_lanes(d), int4_lanes(s)
    want = {SUM: a + b, MAX: np.maximum(a, b), MIN: np.minimum(a, b)}[kind] & 0xF
    np.testing.assert_array_equal(int4_lanes(dev.get(dst, d)) & 0xF, want)


def test_reduce_sample_values(device):
    """CANN's 0_reduce_task sample: {1,2,3,4} summed into a copy of itself gives {2,4,6,8}."""
    x = np.float32([1, 2, 3, 4])
    dev = device(x.nbytes)
    dst, src = dev.ptrs
    dev.put(dst, x)
    dev.put(src, x)
    assert lib.aclrtReduceAsync(dst, src, x.nbytes, SUM, lib.ACL_FLOAT, dev.stream, ffi.NULL) == 0
    assert lib.aclrtSynchronizeStream(dev.stream) == 0
    np.testing.assert_array_equal(dev.get(dst, x), np.float32([2, 4, 6, 8]))


def test_reduce_checks(device, soc, acl):
    dev = device(64)
    dst, src = dev.ptrs
    host = ffi.new("char[64]")
    cases = [
        ((ffi.NULL, src, 64, SUM, lib.ACL_FLOAT, dev.stream, ffi.NULL), INVALID_PARAM, "dst"),
        ((dst, ffi.NULL, 64, SUM, lib.ACL_FLOAT, dev.stream, ffi.NULL), INVALID_PARAM, "src"),
        ((dst, src, 64, SUM, lib.ACL_FLOAT, dev.stream, host), INVALID_PARAM, "reserve"),
        ((dst, src, 64, SUM, lib.ACL_DOUBLE, dev.stream, ffi.NULL), INVALID_PARAM, "type"),
        ((dst, src, 0, SUM, lib.ACL_FLOAT, dev.stream, ffi.NULL), RT_PARAM_INVALID, "count"),
        ((dst, src, 64, 9, lib.ACL_FLOAT, dev.stream, ffi.NULL), RT_PARAM_INVALID, "kind"),
        ((dst, src, 64, EQUAL, lib.ACL_FLOAT, dev.stream, ffi.NULL), FEATURE_NOT_SUPPORT, "EQUAL"),
        ((host, src, 64, SUM, lib.ACL_FLOAT, dev.stream, ffi.NULL), RT_PARAM_INVALID, "dst"),
    ]
    for args, code, word in cases:
        assert lib.aclrtReduceAsync(*args) == code, word
        assert word in acl.recent_error_message()
    for product in ("Ascend910", "Ascend310P"):
        soc(product)
        assert lib.aclrtReduceAsync(dst, src, 64, SUM, lib.ACL_FLOAT, dev.stream, ffi.NULL) == FEATURE_NOT_SUPPORT
        assert product in acl.recent_error_message()
