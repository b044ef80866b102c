"""Every per-product row of ReplicationPad2d[Backward], UpsampleNearestExact1d[Backward],
Im2col[Backward] and Prelu[Backward] (docs/compatibility.md, "Products"), run on each of the five
products: every dtype a row accepts computes the right numbers, every other dtype gets CANN's
161002 and message "Tensor <name> not implemented for <DTYPE>, should be in dtype support list
[...]" with that product's list.  The lists below are typed from CANN's op_api sources (in their
order), independently of libaclnn/src/ops/products.c.

References: the gathers (pad, upsample, im2col forwards) move whole elements, so they are checked
byte for byte for every dtype through the source index of each output, which PyTorch computes by
running the same operator on an arange; the others against PyTorch in float64 (complex: the same
index map, NumPy's add.at).
"""
import ml_dtypes
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import pyaclnn
from pyaclnn import ffi, lib

SOCS = ["Ascend910B", "Ascend910_93", "Ascend950", "Ascend910", "Ascend310P"]
OLD = ("Ascend910", "Ascend310P")
INVALID, INNER_NULLPTR = 161002, 561103

# CANN's name -> (aclDataType, numpy storage dtype, numpy value dtype or None for "bytes only")
DTYPES = {
    "FLOAT": (0, np.float32, np.float32), "FLOAT16": (1, np.float16, np.float16),
    "INT8": (2, np.int8, np.int8), "INT32": (3, np.int32, np.int32), "UINT8": (4, np.uint8, np.uint8),
    "INT16": (6, np.int16, np.int16), "UINT16": (7, np.uint16, np.uint16),
    "UINT32": (8, np.uint32, np.uint32), "INT64": (9, np.int64, np.int64),
    "UINT64": (10, np.uint64, np.uint64), "DOUBLE": (11, np.float64, np.float64),
    "BOOL": (12, np.bool_, np.bool_), "COMPLEX64": (16, np.complex64, np.complex64),
    "COMPLEX128": (17, np.complex128, np.complex128), "BFLOAT16": (27, ml_dtypes.bfloat16, ml_dtypes.bfloat16),
    "COMPLEX32": (33, np.uint32, None), "HIFLOAT8": (34, np.uint8, None),
    "FLOAT8_E5M2": (35, ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2),
    "FLOAT8_E4M3FN": (36, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fn),
    "FLOAT8_E8M0": (37, np.uint8, None),
}
FLOATS = ["FLOAT", "FLOAT16", "BFLOAT16"]
PAD_A2 = ["FLOAT", "INT32", "INT64", "FLOAT16", "INT16", "DOUBLE", "INT8", "UINT8", "COMPLEX64", "COMPLEX128",
          "BFLOAT16"]
PAD_950 = PAD_A2 + ["UINT64", "UINT32", "UINT16", "BOOL", "HIFLOAT8", "FLOAT8_E5M2", "FLOAT8_E4M3FN",
                    "FLOAT8_E8M0"]
PAD_BW = ["FLOAT", "FLOAT16", "BFLOAT16", "DOUBLE", "COMPLEX64", "COMPLEX128"]
I2C_950 = ["INT8", "UINT8", "INT16", "UINT16", "INT32", "UINT32", "INT64", "UINT64", "BFLOAT16", "FLOAT16",
           "FLOAT", "DOUBLE", "BOOL", "COMPLEX32", "COMPLEX64"]


def per_soc(a2, on_950=None, old=None):
    """{soc: list}: Ascend910_93 always as Ascend910B; 950 and 910/310P as given, else as A2."""
    return {s: (on_950 if s == "Ascend950" and on_950 is not None else
                old if s in OLD and old is not None else a2) for s in SOCS}


# op -> (the tensor CANN's dtype check names, {soc: support list})
ROWS = {
    "ReplicationPad2d": ("self", per_soc(PAD_A2, on_950=PAD_950)),
    "ReplicationPad2dBackward": ("gradOutput", per_soc(PAD_BW)),
    "UpsampleNearestExact1d": ("self", per_soc(FLOATS + ["UINT8"], on_950=FLOATS)),
    "UpsampleNearestExact1dBackward": ("gradOutput", per_soc(FLOATS)),
    "Im2col": ("self", per_soc(FLOATS, on_950=I2C_950)),
    "Im2colBackward": ("gradOutput", per_soc(FLOATS, old=["FLOAT", "FLOAT16"])),
    "Prelu": ("self", per_soc(FLOATS, old=["FLOAT", "FLOAT16"])),
    "PreluBackward": ("self", per_soc(FLOATS, old=["FLOAT", "FLOAT16"])),
}
CASES = [(op, soc, name) for op in ROWS for soc in SOCS for name in ROWS[op][1][soc]]
REJECTED = [(op, soc, name) for op in ROWS for soc in SOCS for name in DTYPES
            if name not in ROWS[op][1][soc]]


class Args:
    """Device tensors of one call, by CANN dtype name; dtypes numpy has no type for get a second
    descriptor of that aclDataType over the same storage."""

    def __init__(self):
        self.handles, self.raw = [], []

    def tensor(self, array, name):
        t = pyaclnn.Tensor.from_numpy(np.ascontiguousarray(array, dtype=DTYPES[name][1]))
        self.handles.append(t)
        if DTYPES[name][2] is not None:
            return t, t
        dims = ffi.new("int64_t[]", list(t.shape))
        strides = ffi.new("int64_t[]", list(t.strides))
        ptr = lib.aclCreateTensor(dims, len(t.shape), DTYPES[name][0], strides, 0, lib.ACL_FORMAT_ND, dims,
                                  len(t.shape), ffi.cast("void *", t.address))
        assert ptr != ffi.NULL, pyaclnn.recent_error_message()
        self.raw.append(ptr)
        return ptr, t

    def array(self, values):
        a = pyaclnn.IntArray(values)
        self.handles.append(a)
        return a

    def close(self):
        for ptr in self.raw:
            lib.aclDestroyTensor(ptr)
        for h in self.handles:
            h.close()


def values(rng, shape, name):
    """Random inputs in the storage dtype (any bit pattern for the byte-only dtypes)."""
    storage, kind = DTYPES[name][1], DTYPES[name][2]
    if kind is None:
        return rng.integers(0, np.iinfo(storage).max, size=shape, dtype=storage, endpoint=True)
    if kind == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(kind, np.integer):
        info = np.iinfo(kind)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), size=shape).astype(kind)
    if np.issubdtype(kind, np.complexfloating):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(kind)
    return rng.standard_normal(shape).astype(kind)


def f64(a):
    """Values as float64 or complex128 (the rounded inputs, exactly)."""
    a = np.asarray(a)
    return a.astype(np.complex128) if np.iscomplexobj(a) else a.astype(np.float64)


def assert_close(got, want, name):
    rtol, atol = {"FLOAT16": (2e-3, 2e-3), "BFLOAT16": (1.6e-2, 1.6e-2), "DOUBLE": (1e-12, 1e-12),
                  "COMPLEX128": (1e-12, 1e-12)}.get(name, (1e-5, 1e-5))
    np.testing.assert_allclose(f64(got), f64(want), rtol=rtol, atol=atol)


def gather(x, index):
    """out[i] = x.flat[index[i]] (0 where index is -1), byte for byte whatever the dtype."""
    flat = np.ascontiguousarray(x).reshape(-1)
    out = np.zeros(index.shape, dtype=flat.dtype)
    ok = index >= 0
    out[ok] = flat[index[ok]]
    return out


def index_map(fn, shape):
    """The source index of each output of a gather fn (a PyTorch op), from an arange (+1, so that
    a zero from padding reads as -1)."""
    arange = torch.arange(1, int(np.prod(shape)) + 1, dtype=torch.float64).reshape(shape)
    return fn(arange).numpy().astype(np.int64) - 1


# ---- the eight operators: (args for phase 1, checker of the results) -------------------------

PADS = [1, 2, 2, 1]  # left, right, top, bottom
PAD_IN, PAD_OUT = (2, 3, 4, 5), (2, 3, 7, 8)


def pad_map(x):
    return F.pad(x, PADS, mode="replicate")


def run_pad(a, rng, name):
    x = values(rng, PAD_IN, name)
    (xs, _), (out, out_t) = a.tensor(x, name), a.tensor(np.zeros(PAD_OUT, DTYPES[name][1]), name)
    pyaclnn.run_op("ReplicationPad2d", xs, a.array(PADS), out)
    want = gather(x, index_map(pad_map, PAD_IN))
    np.testing.assert_array_equal(out_t.numpy().view(np.uint8), want.view(np.uint8))


def run_pad_backward(a, rng, name):
    g, x = values(rng, PAD_OUT, name), values(rng, PAD_IN, name)
    (gs, _), (xs, _) = a.tensor(g, name), a.tensor(x, name)
    gi, gi_t = a.tensor(np.zeros(PAD_IN, DTYPES[name][1]), name)
    pyaclnn.run_op("ReplicationPad2dBackward", gs, xs, a.array(PADS), gi)
    want = np.zeros(int(np.prod(PAD_IN)), dtype=f64(g).dtype)
    np.add.at(want, index_map(pad_map, PAD_IN).reshape(-1), f64(g).reshape(-1))
    assert_close(gi_t.numpy(), want.reshape(PAD_IN).astype(DTYPES[name][1]), name)


UP_IN, UP_L = (2, 3, 5), 8


def run_upsample(a, rng, name):
    x = values(rng, UP_IN, name)
    (xs, _), (out, out_t) = a.tensor(x, name), a.tensor(np.zeros(UP_IN[:2] + (UP_L,), DTYPES[name][1]), name)
    pyaclnn.run_op("UpsampleNearestExact1d", xs, a.array([UP_L]), 0.0, out)
    want = gather(x, index_map(lambda t: F.interpolate(t, size=UP_L, mode="nearest-exact"), UP_IN))
    np.testing.assert_array_equal(out_t.numpy().view(np.uint8), want.view(np.uint8))


def run_upsample_backward(a, rng, name):
    g = values(rng, UP_IN[:2] + (UP_L,), name)
    (gs, _), (out, out_t) = a.tensor(g, name), a.tensor(np.zeros(UP_IN, DTYPES[name][1]), name)
    pyaclnn.run_op("UpsampleNearestExact1dBackward", gs, a.array([UP_L]), a.array(list(UP_IN)), 0.0, out)
    want = torch.ops.aten._upsample_nearest_exact1d_backward(torch.from_numpy(f64(g)), [UP_L], list(UP_IN), None)
    assert_close(out_t.numpy(), want.numpy().astype(DTYPES[name][1]), name)


I2C_IN, I2C_K, I2C_D, I2C_P, I2C_S = (2, 3, 5, 6), [2, 3], [1, 2], [1, 0], [2, 1]


def i2c_map(x):
    return F.unfold(x, I2C_K, I2C_D, I2C_P, I2C_S)


def run_im2col(a, rng, name):
    x = values(rng, I2C_IN, name)
    index = index_map(i2c_map, I2C_IN)
    (xs, _), (out, out_t) = a.tensor(x, name), a.tensor(np.zeros(index.shape, DTYPES[name][1]), name)
    pyaclnn.run_op("Im2col", xs, a.array(I2C_K), a.array(I2C_D), a.array(I2C_P), a.array(I2C_S), out)
    np.testing.assert_array_equal(out_t.numpy().view(np.uint8), gather(x, index).view(np.uint8))


def run_im2col_backward(a, rng, name):
    cols = tuple(i2c_map(torch.zeros(I2C_IN, dtype=torch.float64)).shape)
    g = values(rng, cols, name)
    (gs, _), (out, out_t) = a.tensor(g, name), a.tensor(np.zeros(I2C_IN, DTYPES[name][1]), name)
    pyaclnn.run_op("Im2colBackward", gs, a.array(list(I2C_IN[2:])), a.array(I2C_K), a.array(I2C_D),
                   a.array(I2C_P), a.array(I2C_S), out)
    want = F.fold(torch.from_numpy(f64(g)), I2C_IN[2:], I2C_K, I2C_D, I2C_P, I2C_S)
    assert_close(out_t.numpy(), want.numpy().astype(DTYPES[name][1]), name)


PRELU_IN = (2, 3, 4)


def run_prelu(a, rng, name):
    x, w = values(rng, PRELU_IN, name), values(rng, (3,), name)
    (xs, _), (ws, _) = a.tensor(x, name), a.tensor(w, name)
    out, out_t = a.tensor(np.zeros(PRELU_IN, DTYPES[name][1]), name)
    pyaclnn.run_op("Prelu", xs, ws, out)
    want = F.prelu(torch.from_numpy(f64(x)), torch.from_numpy(f64(w)))
    # one product rounded once: exact in every dtype
    np.testing.assert_array_equal(f64(out_t.numpy()), f64(want.numpy().astype(DTYPES[name][1])))


def run_prelu_backward(a, rng, name):
    g, x, w = values(rng, PRELU_IN, name), values(rng, PRELU_IN, name), values(rng, (3,), name)
    (gs, _), (xs, _), (ws, _) = a.tensor(g, name), a.tensor(x, name), a.tensor(w, name)
    gi, gi_t = a.tensor(np.zeros(PRELU_IN, DTYPES[name][1]), name)
    gw, gw_t = a.tensor(np.zeros((3,), DTYPES[name][1]), name)
    pyaclnn.run_op("PreluBackward", gs, xs, ws, gi, gw)
    tx, tw = torch.from_numpy(f64(x)).requires_grad_(), torch.from_numpy(f64(w)).requires_grad_()
    F.prelu(tx, tw).backward(torch.from_numpy(f64(g)))
    assert_close(gi_t.numpy(), tx.grad.numpy().astype(DTYPES[name][1]), name)
    assert_close(gw_t.numpy(), tw.grad.numpy().astype(DTYPES[name][1]), name)


RUNS = {"ReplicationPad2d": run_pad, "ReplicationPad2dBackward": run_pad_backward,
        "UpsampleNearestExact1d": run_upsample, "UpsampleNearestExact1dBackward": run_upsample_backward,
        "Im2col": run_im2col, "Im2colBackward": run_im2col_backward,
        "Prelu": run_prelu, "PreluBackward": run_prelu_backward}


@pytest.mark.parametrize("op,product,name", CASES, ids=["-".join(c) for c in CASES])
def test_accepted_dtype_computes(soc, rng, op, product, name):
    soc(product)
    a = Args()
    try:
        RUNS[op](a, rng, name)
    finally:
        a.close()


def phase1_error(op, build):
    a = Args()
    try:
        ws, ex = getattr(pyaclnn, f"aclnn{op}GetWorkspaceSize")(*build(a))
        ex.close()
        return None
    except pyaclnn.AclnnError as err:
        return err
    finally:
        a.close()


def phase1_args(op, a, name):
    """Valid shapes and attributes, every tensor in dtype `name`."""
    z = lambda shape: a.tensor(np.zeros(shape, DTYPES[name][1]), name)[0]  # noqa: E731
    cols = tuple(i2c_map(torch.zeros(I2C_IN, dtype=torch.float64)).shape)
    return {
        "ReplicationPad2d": lambda: (z(PAD_IN), a.array(PADS), z(PAD_OUT)),
        "ReplicationPad2dBackward": lambda: (z(PAD_OUT), z(PAD_IN), a.array(PADS), z(PAD_IN)),
        "UpsampleNearestExact1d": lambda: (z(UP_IN), a.array([UP_L]), 0.0, z(UP_IN[:2] + (UP_L,))),
        "UpsampleNearestExact1dBackward": lambda: (z(UP_IN[:2] + (UP_L,)), a.array([UP_L]), a.array(list(UP_IN)),
                                                   0.0, z(UP_IN)),
        "Im2col": lambda: (z(I2C_IN), a.array(I2C_K), a.array(I2C_D), a.array(I2C_P), a.array(I2C_S), z(cols)),
        "Im2colBackward": lambda: (z(cols), a.array(list(I2C_IN[2:])), a.array(I2C_K), a.array(I2C_D),
                                   a.array(I2C_P), a.array(I2C_S), z(I2C_IN)),
        "Prelu": lambda: (z(PRELU_IN), z((3,)), z(PRELU_IN)),
        "PreluBackward": lambda: (z(PRELU_IN), z(PRELU_IN), z((3,)), z(PRELU_IN), z((3,))),
    }[op]()


@pytest.mark.parametrize("op,product,name", REJECTED, ids=["-".join(c) for c in REJECTED])
def test_rejected_dtype_status_and_message(soc, op, product, name):
    soc(product)
    err = phase1_error(op, lambda a: phase1_args(op, a, name))
    tensor, lists = ROWS[op]
    assert err is not None and err.code == INVALID, (op, product, name)
    expected = (f"aclnn{op}: Tensor {tensor} not implemented for {name}, should be in dtype support list "
                f"[{', '.join(lists[product])}].")
    assert expected in err.message, err.message


# ---- UpsampleNearestExact1d with an NLC self -----------------------------------------------

@pytest.mark.parametrize("product", SOCS)
@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
def test_upsample_nlc_runs_except_on_950(soc, rng, product, fmt):
    """CANN hands a self of any format but ND/NCL to the kernel as NLC ([N, L, C], dim 1 resized);
    Ascend950 handles only ND/NCL and its l0 returns nullptr: ACLNN_ERR_INNER_NULLPTR."""
    soc(product)
    x = rng.standard_normal((2, 5, 3)).astype(np.float32)  # N, L, C
    src = pyaclnn.Tensor.from_numpy(x, format=fmt)
    out = pyaclnn.Tensor.empty((2, 8, 3), np.float32, format=fmt, fill=np.nan)
    size = pyaclnn.IntArray([8])
    try:
        if product == "Ascend950":
            with pytest.raises(pyaclnn.AclnnError) as err:
                pyaclnn.run_op("UpsampleNearestExact1d", src, size, 0.0, out)
            assert err.value.code == INNER_NULLPTR
            assert "NLC" in err.value.message and "Ascend950" in err.value.message
            return
        pyaclnn.run_op("UpsampleNearestExact1d", src, size, 0.0, out)
        want = F.interpolate(torch.from_numpy(x).permute(0, 2, 1), size=8, mode="nearest-exact").permute(0, 2, 1)
        np.testing.assert_array_equal(out.numpy(), want.numpy())
    finally:
        for h in (src, out, size):
            h.close()


@pytest.mark.parametrize("product", SOCS)
def test_upsample_nlc_out_shape_is_n_lout_c(soc, product):
    """The NLC out is [N, outputSize[0], C]; an [N, C, outputSize[0]] out is a shape error (161002)
    except on Ascend950, where the NLC self already fails (561103)."""
    soc(product)
    src = pyaclnn.Tensor.empty((2, 5, 3), np.float32, format="NHWC")
    out = pyaclnn.Tensor.empty((2, 3, 8), np.float32, format="NHWC")
    size = pyaclnn.IntArray([8])
    try:
        with pytest.raises(pyaclnn.AclnnError) as err:
            pyaclnn.aclnnUpsampleNearestExact1dGetWorkspaceSize(src, size, 0.0, out)
        if product == "Ascend950":
            assert err.value.code == INNER_NULLPTR
        else:
            assert err.value.code == INVALID and "[2, 8, 3]" in err.value.message, err.value.message
            # the message says why it wants [N, Lout, C]: a format other than ND/NCL is read as NLC
            assert ("self's format NHWC is neither ND nor NCL, so self [2, 5, 3] is read as NLC [N, L, C]"
                    in err.value.message), err.value.message
    finally:
        for h in (src, out, size):
            h.close()


@pytest.mark.parametrize("product", [p for p in SOCS if p != "Ascend950"])
def test_upsample_nchw_labelled_3d_self_message_names_the_nlc_reading(soc, product):
    """The case users hit: a 3-D [N, C, L] tensor labelled NCHW with an [N, C, Lout] out."""
    soc(product)
    src = pyaclnn.Tensor.empty((2, 3, 8), np.float32, format="NCHW")
    out = pyaclnn.Tensor.empty((2, 3, 16), np.float32, format="NCHW")
    size = pyaclnn.IntArray([16])
    try:
        with pytest.raises(pyaclnn.AclnnError) as err:
            pyaclnn.aclnnUpsampleNearestExact1dGetWorkspaceSize(src, size, 0.0, out)
        message = err.value.message
        assert err.value.code == INVALID
        assert "out shape should be [2, 16, 8], got [2, 3, 16]" in message, message
        assert "NCHW is neither ND nor NCL" in message and "read as NLC" in message, message
    finally:
        for h in (src, out, size):
            h.close()
