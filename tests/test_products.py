"""The emulated product (SoC): choosing it (ACLNN_SOC_VERSION, pyaclnn.set_soc_version) and the
per-product rules of the twelve operators (docs/compatibility.md, "Products").  The expected
lists below are typed from the study of CANN's op_api per SoC, independently of the library's
table (libaclnn/src/ops/products.c)."""
import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import pyaclnn

INVALID = 161002
SOCS = ["Ascend910", "Ascend910B", "Ascend910_93", "Ascend950", "Ascend310P"]
F32, F16, BF16, U8 = np.float32, np.float16, ml_dtypes.bfloat16, np.uint8


class Keep(list):
    def t(self, shape, dtype):
        x = pyaclnn.Tensor.empty(shape, dtype)
        self.append(x)
        return x

    def a(self, values):
        x = pyaclnn.IntArray(values)
        self.append(x)
        return x

    def close(self):
        for x in self:
            x.close()


def phase1(name, build):
    """Runs aclnn<name>GetWorkspaceSize on the arguments build(keep) gives; None on success,
    else the AclnnError."""
    keep = Keep()
    try:
        ws, ex = getattr(pyaclnn, "aclnn%sGetWorkspaceSize" % name)(*build(keep))
        ex.close()
        return None
    except pyaclnn.AclnnError as err:
        return err
    finally:
        keep.close()


def call(op, dt):
    """Phase 1 of `op` with its main tensors in dtype dt (valid shapes and attributes)."""
    if op == "ReplicationPad2d":
        return phase1(op, lambda k: (k.t((1, 2, 3, 3), dt), k.a([1, 1, 1, 1]), k.t((1, 2, 5, 5), dt)))
    if op == "ReplicationPad2dBackward":
        return phase1(op, lambda k: (k.t((1, 2, 5, 5), dt), k.t((1, 2, 3, 3), dt), k.a([1, 1, 1, 1]),
                                     k.t((1, 2, 3, 3), dt)))
    if op == "UpsampleNearestExact1d":
        return phase1(op, lambda k: (k.t((1, 2, 4), dt), k.a([8]), 0.0, k.t((1, 2, 8), dt)))
    if op == "UpsampleNearestExact1dBackward":
        return phase1(op, lambda k: (k.t((1, 2, 8), dt), k.a([8]), k.a([1, 2, 4]), 0.0, k.t((1, 2, 4), dt)))
    if op == "Im2col":
        return phase1(op, lambda k: (k.t((1, 2, 4, 4), dt), k.a([2, 2]), k.a([1, 1]), k.a([0, 0]), k.a([1, 1]),
                                     k.t((1, 8, 9), dt)))
    if op == "Im2colBackward":
        return phase1(op, lambda k: (k.t((1, 8, 9), dt), k.a([4, 4]), k.a([2, 2]), k.a([1, 1]), k.a([0, 0]),
                                     k.a([1, 1]), k.t((1, 2, 4, 4), dt)))
    if op == "Prelu":
        return phase1(op, lambda k: (k.t((2, 3), dt), k.t((1,), dt), k.t((2, 3), dt)))
    if op == "PreluBackward":
        return phase1(op, lambda k: (k.t((2, 3), dt), k.t((2, 3), dt), k.t((1,), dt), k.t((2, 3), dt),
                                     k.t((1,), dt)))
    pool = lambda k: (k.a([2, 2]), k.a([2, 2]), k.a([0, 0]), k.a([1, 1]), False)  # noqa: E731
    if op == "MaxPool2dWithMask":
        return phase1(op, lambda k: (k.t((1, 2, 4, 4), dt),) + pool(k) + (k.t((1, 2, 2, 2), dt),
                                                                        k.t((1, 2, 4, 64), np.int8)))
    if op == "MaxPool2dWithIndices":
        return phase1(op, lambda k: (k.t((1, 2, 4, 4), dt),) + pool(k) + (k.t((1, 2, 2, 2), dt),
                                                                        k.t((1, 2, 2, 2), np.int32)))
    if op == "MaxPool2dWithMaskBackward":
        return phase1(op, lambda k: (k.t((1, 2, 2, 2), dt), k.t((1, 2, 4, 4), dt), k.t((1, 2, 4, 64), np.int8))
                      + pool(k) + (k.t((1, 2, 4, 4), dt),))
    if op == "MaxPool2dWithIndicesBackward":
        return phase1(op, lambda k: (k.t((1, 2, 2, 2), dt), k.t((1, 2, 4, 4), dt), k.t((1, 2, 2, 2), np.int32))
                      + pool(k) + (k.t((1, 2, 4, 4), dt),))
    raise AssertionError(op)


PAD_A2 = [np.float32, np.int32, np.int64, np.float16, np.int16, np.float64, np.int8, np.uint8, np.complex64,
          np.complex128, BF16]
PAD_950_EXTRA = [np.uint64, np.uint32, np.uint16, np.bool_, ml_dtypes.float8_e5m2, ml_dtypes.float8_e4m3fn]
I2C_950 = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, BF16, np.float16,
           np.float32, np.float64, np.bool_, np.complex64]
FLOATS = [F32, F16, BF16]
NOT = "not implemented"

# op -> {soc: accepted dtypes}; every other dtype of PROBE is rejected with 161002.
EXPECTED = {
    "ReplicationPad2d": {s: PAD_A2 + (PAD_950_EXTRA if s == "Ascend950" else []) for s in SOCS},
    "ReplicationPad2dBackward": {s: [F32, F16, BF16, np.float64, np.complex64, np.complex128] for s in SOCS},
    "UpsampleNearestExact1d": {s: FLOATS if s == "Ascend950" else FLOATS + [U8] for s in SOCS},
    "UpsampleNearestExact1dBackward": {s: FLOATS for s in SOCS},
    "MaxPool2dWithMask": {"Ascend310P": [F32], "Ascend910": [F16, F32], "Ascend910B": FLOATS,
                          "Ascend910_93": FLOATS, "Ascend950": []},
    "MaxPool2dWithMaskBackward": {"Ascend310P": [], "Ascend910": [F16, F32], "Ascend910B": FLOATS,
                                  "Ascend910_93": FLOATS, "Ascend950": []},
    "MaxPool2dWithIndices": {"Ascend310P": [], "Ascend910": [], "Ascend910B": FLOATS, "Ascend910_93": FLOATS,
                             "Ascend950": FLOATS},
    "MaxPool2dWithIndicesBackward": {"Ascend310P": [], "Ascend910": [], "Ascend910B": [F32],
                                     "Ascend910_93": [F32], "Ascend950": FLOATS},
    "Im2col": {s: I2C_950 if s == "Ascend950" else FLOATS for s in SOCS},
    "Im2colBackward": {s: [F32, F16] if s in ("Ascend910", "Ascend310P") else FLOATS for s in SOCS},
    "Prelu": {s: [F32, F16] if s in ("Ascend910", "Ascend310P") else FLOATS for s in SOCS},
    "PreluBackward": {s: [F32, F16] if s in ("Ascend910", "Ascend310P") else FLOATS for s in SOCS},
}
PROBE = [F32, F16, BF16, np.float64, np.int8, np.uint8, np.int32, np.int64, np.uint16, np.bool_, np.complex64]
# op, soc -> a word the rejection message must hold, when CANN words it specially
MESSAGES = {("MaxPool2dWithIndices", "Ascend910"): "support for Ascend910 is not implemented",
            ("MaxPool2dWithIndices", "Ascend310P"): "support for Ascend310P is not implemented",
            ("MaxPool2dWithMask", "Ascend950"): "please use aclnnMaxPool2dWithIndices",
            ("MaxPool2dWithMaskBackward", "Ascend950"): "Please use aclnnMaxPool2dWithIndicesBackward",
            ("MaxPool2dWithIndicesBackward", "Ascend910"): "support list []",
            ("MaxPool2dWithIndicesBackward", "Ascend310P"): "support list []",
            ("MaxPool2dWithMaskBackward", "Ascend310P"): "support list []"}


@pytest.mark.parametrize("name", SOCS)
@pytest.mark.parametrize("op", sorted(EXPECTED))
def test_dtype_rows(soc, op, name):
    soc(name)
    accepted = EXPECTED[op][name]
    for dt in sorted(set(PROBE) | set(accepted), key=lambda d: np.dtype(d).name):
        err = call(op, dt)
        if any(np.dtype(dt) == np.dtype(a) for a in accepted):
            assert err is None, (op, name, np.dtype(dt).name, err and err.message)
        else:
            assert err is not None and err.code == INVALID, (op, name, np.dtype(dt).name)
            if (op, name) in MESSAGES:
                assert MESSAGES[(op, name)] in err.message, err.message


def test_names(soc):
    assert pyaclnn.soc_name() == "Ascend910B3"
    soc("Ascend310P3")
    assert pyaclnn.soc_name() == "Ascend310P3"
    soc("Ascend950")
    assert pyaclnn.soc_name() == "Ascend950PR_9599"
    with pytest.raises(pyaclnn.AclnnError) as err:
        soc("Ascend999")
    assert err.value.code == INVALID and "Ascend999" in err.value.message
    assert pyaclnn.soc_name() == "Ascend950PR_9599"


def _child(env_value, code):
    env = dict(os.environ, ACLNN_SOC_VERSION=env_value)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


def test_environment_selects_the_product():
    r = _child("Ascend910B2", "import pyaclnn; print(pyaclnn.soc_name())")
    assert r.stdout.strip() == "Ascend910B2", r.stderr
    code = ("import numpy as np, pyaclnn\n"
            "from tests.test_products import call\n"
            "err = call('Prelu', pyaclnn.numpy_dtype('bfloat16'))\n"
            "print(err.code if err else 0)\n")
    r = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, ACLNN_SOC_VERSION="Ascend310P"),
                       capture_output=True, text=True, timeout=120, cwd=os.path.dirname(os.path.dirname(__file__)))
    assert r.stdout.strip() == str(INVALID), r.stderr


def test_unknown_environment_is_an_error():
    code = ("import pyaclnn\n"
            "ffi, lib = pyaclnn.ffi, pyaclnn.lib\n"
            "print(pyaclnn.soc_name())\n"
            "print(lib.aclInit(ffi.NULL), 'ACLNN_SOC_VERSION' in (pyaclnn.recent_error_message() or ''))\n"
            "ws, ex = ffi.new('uint64_t *'), ffi.new('aclOpExecutor **')\n"
            "print(lib.aclnnPreluGetWorkspaceSize(ffi.NULL, ffi.NULL, ffi.NULL, ws, ex),\n"
            "      'Ascend911' in (pyaclnn.recent_error_message() or ''))\n")
    r = _child("Ascend911", code)
    assert r.stdout.split("\n")[:3] == ["None", "100000 True", "%d True" % INVALID], (r.stdout, r.stderr)


def test_upsample_950_reciprocal_in_float(soc):
    """Ascend950 inverts the float scale in float: index = floor((d + 0.5) * (1.0f / float(scales)))."""
    L, Lout, scales = 51, 54, 1.07   # one of the cases where the two reciprocals pick another index
    x = np.arange(L, dtype=np.float32).reshape(1, 1, L)
    results = {}
    for name, scale in (("Ascend910B", np.float32(1.0 / scales)),
                        ("Ascend950", np.float32(1.0) / np.float32(scales))):
        soc(name)
        idx = np.minimum(np.floor(((np.arange(Lout) + 0.5) * np.float64(scale)).astype(np.float32)), L - 1)
        out = pyaclnn.Tensor.empty((1, 1, Lout), np.float32)
        keep = Keep()
        try:
            src = pyaclnn.Tensor.from_numpy(x)
            keep.append(src)
            pyaclnn.run_op("UpsampleNearestExact1d", src, keep.a([Lout]), scales, out)
            np.testing.assert_array_equal(out.numpy().reshape(-1), idx.astype(np.float32))
            results[name] = out.numpy().reshape(-1)
        finally:
            out.close()
            keep.close()
    assert (results["Ascend910B"] != results["Ascend950"]).any()


@pytest.mark.parametrize("dt", [np.int8, np.uint16, np.int64, np.complex64, np.bool_, np.float64])
def test_im2col_950_any_element_size(soc, dt):
    """Ascend950's Im2col gathers every dtype of its list exactly (zero in the padding)."""
    soc("Ascend950")
    rng = np.random.default_rng(1)
    x = rng.integers(0, 100, size=(2, 3, 5, 6)).astype(dt)
    k, d, p, s = (2, 3), (1, 2), (1, 0), (2, 1)
    oh = (5 + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (6 + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    want = np.zeros((2, 3 * k[0] * k[1], oh * ow), dt)
    for c in range(3):
        for ki in range(k[0]):
            for kj in range(k[1]):
                for i in range(oh):
                    for j in range(ow):
                        h, w = i * s[0] - p[0] + ki * d[0], j * s[1] - p[1] + kj * d[1]
                        if 0 <= h < 5 and 0 <= w < 6:
                            want[:, (c * k[0] + ki) * k[1] + kj, i * ow + j] = x[:, c, h, w]
    keep = Keep()
    try:
        src = pyaclnn.Tensor.from_numpy(x)
        keep.append(src)
        out = keep.t(want.shape, dt)
        pyaclnn.run_op("Im2col", src, keep.a(list(k)), keep.a(list(d)), keep.a(list(p)), keep.a(list(s)), out)
        got = out.numpy()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    finally:
        keep.close()


def test_cached_executor_follows_the_product(soc):
    """pyaclnn caches executors by call signature; a new product must not reuse one planned on
    another (Ascend910 pools FLOAT as FLOAT16: 2049 -> 2048)."""
    from pyaclnn.functional import max_pool2d_with_mask
    x = np.full((1, 1, 2, 2), 2049.0, np.float32)
    for name, want in (("Ascend910B", 2049.0), ("Ascend910", 2048.0), ("Ascend910B", 2049.0)):
        soc(name)
        out, _ = max_pool2d_with_mask(x, 2)
        assert out.reshape(-1)[0] == want, name


# op -> {soc: accepted index dtypes} for the WithIndices pair (self FLOAT, valid shapes); the other
# probed dtypes are rejected with 161002 and a list in CANN's order.
INDEX_EXPECTED = {
    "MaxPool2dWithIndices": ({s: [np.int64, np.int32] for s in ("Ascend910B", "Ascend910_93", "Ascend950")},
                             "[INT64, INT32]"),
    "MaxPool2dWithIndicesBackward": ({"Ascend910B": [np.int32, np.int8], "Ascend910_93": [np.int32, np.int8],
                                      "Ascend950": [np.int32, np.int64]}, None),
}
INDEX_LISTS = {"Ascend910B": "[INT32, INT8]", "Ascend910_93": "[INT32, INT8]", "Ascend950": "[INT32, INT64]"}


@pytest.mark.parametrize("name", ["Ascend910B", "Ascend910_93", "Ascend950"])
@pytest.mark.parametrize("op", sorted(INDEX_EXPECTED))
def test_index_dtype_rows(soc, op, name):
    soc(name)
    accepted, listed = INDEX_EXPECTED[op]
    pool = lambda k: (k.a([2, 2]), k.a([2, 2]), k.a([0, 0]), k.a([1, 1]), False)  # noqa: E731
    for it in (np.int8, np.uint8, np.int16, np.int32, np.int64, np.float32):
        if op == "MaxPool2dWithIndices":
            err = phase1(op, lambda k: (k.t((1, 2, 4, 4), F32),) + pool(k) + (k.t((1, 2, 2, 2), F32),
                                                                            k.t((1, 2, 2, 2), it)))
        else:
            err = phase1(op, lambda k: (k.t((1, 2, 2, 2), F32), k.t((1, 2, 4, 4), F32), k.t((1, 2, 2, 2), it))
                         + pool(k) + (k.t((1, 2, 4, 4), F32),))
        if it in accepted[name]:
            assert err is None, (op, name, np.dtype(it).name, err and err.message)
        else:
            assert err is not None and err.code == INVALID, (op, name, np.dtype(it).name)
            assert (listed or INDEX_LISTS[name]) in err.message, err.message
