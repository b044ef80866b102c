"""aclnnIm2colBackward computes the card's arithmetic on every product, on every kernel tier and
thread count, bit for bit against reference.col2im (written from CANN's kernels):

  - the order of additions: window order (oh, then ow, ascending) on A2/A3 when padding is
    (0, 0) (the TBE Col2im's atomic-add path) and on Ascend950 (its SIMT Col2im); kernel order
    ((ki, kj) ascending) on A2/A3 with padding (the TBE per-kernel-position path) and on
    Ascend910/310P (open: no kernel source, the library keeps kernel order);
  - the intermediate dtype: the card's Col2im writes gradOutput's dtype and l0 Cast converts to
    out's, so a fp16/bf16 gradOutput with another out dtype is rounded twice.

The columns are built so that these choices show: values spread over 2^-12 .. 2^12 make fp32 sums
of >= 3 overlapping contributions depend on their order, and each test also checks that the
other order (or a single rounding) would have given different bits somewhere.  PyTorch (kernel
order, fp32) stays a tolerance check.
"""
import ml_dtypes
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import reference as ref
import tiers
from op_helpers import assert_bits, windows

SOCS = ["Ascend910B", "Ascend910_93", "Ascend950", "Ascend910", "Ascend310P"]
OLD = ("Ascend910", "Ascend310P")        # no BF16 (op_api's list)
DTYPES = {"fp32": np.float32, "fp16": np.float16, "bf16": ml_dtypes.bfloat16}

# (N, C, H, W, k, d, p, s): the bench geometries k3s2p1 and k3s1p1 (padding: kernel order on
# A2/A3, window order on 950) and their unpadded forms (window order on A2/A3 too), dilation,
# a stride over 2 (the phase-plane loops) and a wide image (past the AVX2 row kernel's scratch)
CASES = [
    (2, 3, 28, 28, 3, 1, 1, 2),
    (1, 4, 14, 14, 3, 1, 1, 1),
    (2, 3, 15, 13, 3, 1, 0, 2),
    (1, 3, 12, 12, 3, 1, 0, 1),
    (1, 2, 11, 17, 3, 2, 0, 1),
    (1, 3, 13, 20, 4, 1, 0, 3),
    (1, 2, 9, 200, 3, 1, 0, 1),
    (1, 2, 10, 9, 3, 1, (0, 1), 1),
]
# (gradOutput dtype, out dtype): double rounding where gradOutput is narrow
MIXED = [("fp16", "fp32"), ("bf16", "fp32"), ("fp16", "bf16"), ("bf16", "fp16"), ("fp32", "fp16"),
         ("fp32", "bf16")]

# meta: H, W, k, d, pH, pW, s; the name's third part: out's dtype
SCRIPT = tiers.product_script("F.im2col_backward(x, (int(meta[0]), int(meta[1])), int(meta[2]), int(meta[3]), "
                              "(int(meta[4]), int(meta[5])), int(meta[6]), out_dtype=DT[name.split('/')[2]])")


RUNS = [tiers.Run(tier, threads=t) for tier in tiers.TIERS for t in (1, 2)]


def padding(case):
    p = case[6]
    return p if isinstance(p, tuple) else (p, p)


def spread_cols(case, dtype, seed):
    """Columns whose sums are order-sensitive in fp32: normal values scaled by 2^-12 .. 2^12."""
    N, C, H, W, k, d, _, s = case
    p = padding(case)
    L = windows(H, k, d, p[0], s) * windows(W, k, d, p[1], s)
    rng = np.random.default_rng(seed)
    values = rng.standard_normal((N, C * k * k, L)) * np.exp2(rng.integers(-12, 13, (N, C * k * k, L)))
    return values.astype(np.float32).astype(DTYPES[dtype])


def combos():
    """(soc, gradOutput dtype, out dtype, case index) for every accepted dtype pair."""
    pairs = [(dt, dt) for dt in DTYPES] + MIXED
    for soc in SOCS:
        for in_dt, out_dt in pairs:
            if soc in OLD and "bf16" in (in_dt, out_dt):
                continue
            for index in range(len(CASES)):
                yield soc, in_dt, out_dt, index


def inputs_of(soc, in_dt, out_dt, index):
    return spread_cols(CASES[index], in_dt, seed=7 * index + len(in_dt + out_dt))


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """{run: {name: result}} for every run and combination."""
    folder = tmp_path_factory.mktemp("im2col_backward_card")
    data = {}
    for combo in combos():
        name = "%s/%s/%s/%d" % combo
        cols = inputs_of(*combo)
        data[name] = cols.view(np.uint16) if cols.dtype.itemsize == 2 else cols
        N, C, H, W, k, d, _, s = CASES[combo[3]]
        data["meta_" + name] = np.array([H, W, k, d, *padding(CASES[combo[3]]), s], np.float64)
    return tiers.npz_results(SCRIPT, RUNS, data, folder)


def geometry(index):
    N, C, H, W, k, d, _, s = CASES[index]
    return (H, W), k, d, padding(CASES[index]), s


@pytest.mark.parametrize("soc,in_dt,out_dt,index", list(combos()))
def test_card_arithmetic_every_tier_and_thread_count(results, soc, in_dt, out_dt, index):
    cols = inputs_of(soc, in_dt, out_dt, index)
    size, k, d, p, s = geometry(index)
    want = ref.col2im(cols, size, k, d, p, s, out_dtype=DTYPES[out_dt], soc=soc)
    name = "%s/%s/%s/%d" % (soc, in_dt, out_dt, index)
    for run, outs in results.items():
        assert_bits(outs[name].view(want.dtype), want, "%s %s" % (run, name))
    # PyTorch (kernel order, fp32 accumulation) as a sanity check within tolerance
    t = F.fold(torch.from_numpy(cols.astype(np.float32)), size, k, d, p, s).numpy()
    scale = np.abs(cols.astype(np.float32)).max()
    np.testing.assert_allclose(want.astype(np.float32), t, rtol=1e-2, atol=scale * 1e-2)


@pytest.mark.parametrize("index", range(len(CASES)))
def test_inputs_tell_the_orders_apart(index):
    """On the products that add in window order, the fp32 columns give different bits in kernel
    order: the comparison above would see an order mistake."""
    size, k, d, p, s = geometry(index)
    cols = spread_cols(CASES[index], "fp32", seed=7 * index + len("fp32fp32"))
    window = ref.col2im(cols, size, k, d, p, s, soc="Ascend950")
    kernel = ref.col2im(cols, size, k, d, p, s, soc="Ascend910")
    assert (window.view(np.uint32) != kernel.view(np.uint32)).any()


@pytest.mark.parametrize("in_dt,out_dt", [m for m in MIXED if m[0] != "fp32"])
def test_inputs_tell_double_rounding_apart(in_dt, out_dt):
    """The narrow gradOutputs' sums, rounded once to out's dtype, differ from the card's two
    roundings somewhere: the comparison above would see a single rounding."""
    index = 1
    size, k, d, p, s = geometry(index)
    cols = spread_cols(CASES[index], in_dt, seed=7 * index + len(in_dt + out_dt))
    card = ref.col2im(cols, size, k, d, p, s, out_dtype=DTYPES[out_dt])
    once = ref.col2im(cols.astype(np.float32), size, k, d, p, s, out_dtype=DTYPES[out_dt])
    assert (card.astype(np.float32) != once.astype(np.float32)).any()
