"""aclnnUpsampleNearestExact1dBackward computes the card's arithmetic on every product, on every
kernel tier and thread count, bit for bit against reference.upsample_nearest_exact1d_backward
(written from CANN's kernels; NaNs compared by position):

  - A2/A3 and Ascend950: CANN's gather map, first(i) = min(ceil(fl(fl(i*s) - 0.5)), Lout), which
    differs from PyTorch's scatter map at float boundaries and drops the gradients past
    first(Lin) (an Lout larger than Lin*scales);
  - A2/A3: the slide matrix product, in which 0 * inf spreads an inf or NaN gradient to every
    other cell of its slide (the slide size from the tiling), and a slide that owns no gradient
    multiplies one column by zeros;
  - Ascend950: the copy when Lin == Lout;
  - Ascend910/310P: PyTorch's scatter map (open: no kernel in the sources).

The gradients hold inf, -inf and NaN in some rows, and every test checks that its inputs tell
the products apart (the spread, the map), so an arithmetic mistake would show.
"""
import ml_dtypes
import numpy as np
import pytest

import reference as ref
import tiers
from op_helpers import assert_bits

SOCS = ["Ascend910B", "Ascend910_93", "Ascend950", "Ascend910", "Ascend310P"]
DTYPES = {"fp32": np.float32, "fp16": np.float16, "bf16": ml_dtypes.bfloat16}

# (rows N, C, L, Lout, scales)
CASES = [
    (2, 3, 40, 120, 0.0),      # 3x: one run, slide 64
    (2, 2, 26, 11, 0.0),       # downsampling: the maps differ at a boundary
    (1, 3, 10, 30, 2.5),       # Lout past L*scales: the card drops the last gradients
    (2, 2, 37, 37, 0.0),       # Lin == Lout: Ascend950 copies, A2/A3 multiply by 1
    (1, 2, 200, 2, 0.0),       # slides that own no gradient (one column times zeros)
    (1, 2, 33, 400, 0.0),      # 12x: slide 32
    (4, 4, 1000, 2999, 0.0),   # 3 runs kept in the plan, AVX-512 fp32 runs
    (1, 2, 150, 3000, 0.0),    # 20x: slide 32, counts 20
]

# meta: N, C, L, Lout, scales
SCRIPT = tiers.product_script("F.upsample_nearest_exact1d_backward(x, [int(meta[3])], [int(v) for v in meta[:3]], "
                              "float(meta[4]))")


RUNS = [tiers.Run(tier, threads=t) for tier in tiers.TIERS for t in (1, 2)]


def gradients(case, dtype, seed):
    """Normal values scaled by 2^-8 .. 2^8; in row 0 one +inf, in row 1 a NaN, in the last row a
    +inf and a -inf in the same slide (when the rows exist)."""
    N, C, L, Lout, _ = case
    rng = np.random.default_rng(seed)
    g = rng.standard_normal((N * C, Lout)) * np.exp2(rng.integers(-8, 9, (N * C, Lout)))
    g[0, Lout // 3] = np.inf
    if N * C > 2:
        g[1, Lout // 2] = np.nan
        g[-1, Lout // 5] = np.inf
        g[-1, Lout // 5 + 1] = -np.inf
    return g.astype(np.float32).astype(DTYPES[dtype]).reshape(N, C, Lout)


def combos():
    for soc in SOCS:
        for dt in DTYPES:
            for index in range(len(CASES)):
                yield soc, dt, index


def inputs_of(dt, index):
    return gradients(CASES[index], dt, seed=11 * index + len(dt))


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    data = {}
    for soc, dt, index in combos():
        name = "%s/%s/%d" % (soc, dt, index)
        g = inputs_of(dt, index)
        data[name] = g.view(np.uint16) if g.dtype.itemsize == 2 else g
        data["meta_" + name] = np.array(CASES[index], np.float64)
    return tiers.npz_results(SCRIPT, RUNS, data, tmp_path_factory.mktemp("upsample_bw_card"))


def card(g, case, soc):
    N, C, L, Lout, scales = case
    out = ref.upsample_nearest_exact1d_backward(g, L, scales, soc=soc).reshape(N, C, L).astype(g.dtype)
    return ref.saturation_mode(out) if soc in ref.SATURATION_ONLY else out


@pytest.mark.parametrize("soc,dt,index", list(combos()))
def test_card_arithmetic_every_tier_and_thread_count(results, soc, dt, index):
    g = inputs_of(dt, index)
    want = card(g, CASES[index], soc)
    name = "%s/%s/%d" % (soc, dt, index)
    for run, outs in results.items():
        assert_bits(outs[name].view(want.dtype), want, "%s %s" % (run, name), nan_sign_free=True)


@pytest.mark.parametrize("index", [0, 5, 6, 7])
def test_inputs_show_the_slide_spread(index):
    """On A2/A3 an inf or NaN gradient makes NaN of its slide's other cells; Ascend950 keeps it
    in its own cell."""
    g = inputs_of("fp32", index)
    a2 = np.isnan(card(g, CASES[index], "Ascend910B")).sum()
    a5 = np.isnan(card(g, CASES[index], "Ascend950")).sum()
    assert a2 > a5 + 8, (a2, a5)


@pytest.mark.parametrize("index", [1, 2])
def test_inputs_show_the_gather_map(index):
    """CANN's gather map moves or drops gradients that PyTorch's scatter map (kept on Ascend910)
    places elsewhere."""
    g = np.nan_to_num(inputs_of("fp32", index), posinf=1.0, neginf=1.0)
    assert not np.array_equal(card(g, CASES[index], "Ascend950"), card(g, CASES[index], "Ascend910"))


def test_inputs_show_the_empty_slides():
    """L 200 -> 2: the slides [64, 128) and [192, 200) own no gradient; on A2/A3 they multiply
    gradient 1 (and gradient 0, past the row) by zeros, so an inf there makes them NaN."""
    case = CASES[4]
    g = np.ones((1, 2, 2), np.float32)
    g[0, 0, 0] = np.inf
    g[0, 1, 1] = np.nan
    out = card(g, case, "Ascend910B")
    assert np.isnan(out[0, 0, 192:]).all() and not np.isnan(out[0, 0, 64:128]).any()
    assert np.isnan(out[0, 1, 64:128]).all() and not np.isnan(out[0, 1, 192:]).any()
    assert not np.isnan(card(g, case, "Ascend950")[0, 0, 192:]).any()
