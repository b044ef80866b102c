"""aclnnIm2colBackward: the work-sharing path (planes claimed in chunks from a shared counter),
on every kernel tier (AVX-512, AVX2, portable).

With many image planes and 2 or 3 threads every thread claims several chunks, in an order that
depends on scheduling; the result must still equal PyTorch's col2im bit for bit (fp32) and the
fp32-sum-rounded-once NumPy reference (reference.col2im; fp16/bf16), whatever the thread count.
Each configuration runs in its own process, once for all the cases (the pool size and the tier
are fixed when the library starts); each case's test then checks its result under every run.
"""
import textwrap

import ml_dtypes
import numpy as np
import pytest
import torch

import reference as ref
import tiers
from op_helpers import assert_bits, windows

# (N, C, H, W, k, d, p, s): the two benchmark shapes scaled down, plus odd sizes with H != W,
# dilation and a stride larger than the kernel.
CASES = [
    (2, 64, 14, 14, 3, 1, 1, 1),
    (2, 96, 28, 28, 3, 1, 1, 2),
    (3, 70, 13, 11, 3, 2, 2, 3),
    (1, 200, 9, 7, 2, 1, 0, 4),
    # small planes for the row kernels: dilation with stride 2, rows under 8 wide, kernel 4
    (2, 40, 9, 30, 3, 2, 2, 2),
    (1, 50, 5, 5, 2, 1, 1, 1),
    (1, 30, 16, 40, 4, 1, 2, 2),
]
DTYPES = {"fp32": np.float32, "fp16": np.float16, "bf16": ml_dtypes.bfloat16}

# every case and dtype in one process per run: the inputs in one .npz ("<dtype>_<case index>",
# with its geometry under "geometry_<name>"), the results in another under the same names
SCRIPT = textwrap.dedent("""
    import sys, numpy as np, ml_dtypes
    from pyaclnn.functional import im2col_backward
    src, dst = sys.argv[1:]
    data = np.load(src, allow_pickle=False)
    outs = {}
    for name in data.files:
        if name.startswith("geometry_"):
            continue
        H, W, k, d, p, s = (int(v) for v in data["geometry_" + name])
        cols = data[name]
        if name.startswith("bf16"):
            cols = cols.view(ml_dtypes.bfloat16)
        out = im2col_backward(cols, (H, W), k, d, p, s)
        outs[name] = out.view(np.uint16) if out.dtype == ml_dtypes.bfloat16 else out
    np.savez(dst, **outs)
""")

# 1-3 threads on the CPU's best kernels, then the AVX2 tier and the portable loops, and the pool's
# workers left where the OS puts them
RUNS = [tiers.Run(threads=1), tiers.Run(threads=2), tiers.Run(threads=3), tiers.Run("avx2", threads=2),
        tiers.Run("portable", threads=1), tiers.Run(threads=2, extra=(("ACLNN_STEER_WORKERS", "0"),))]


def case_cols(case, dtype):
    N, C, H, W, k, d, p, s = case
    L = windows(H, k, d, p, s) * windows(W, k, d, p, s)
    rng = np.random.default_rng(hash(case) % 1000)
    return rng.standard_normal((N, C * k * k, L)).astype(np.float32).astype(DTYPES[dtype])


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """{run: {name: result}} for every run, case and dtype."""
    folder = tmp_path_factory.mktemp("im2col_backward_paths")
    inputs = {}
    for index, case in enumerate(CASES):
        for dtype in DTYPES:
            name = "%s_%d" % (dtype, index)
            cols = case_cols(case, dtype)
            inputs[name] = cols.view(np.uint16) if dtype == "bf16" else cols
            inputs["geometry_" + name] = np.array(case[2:], np.int64)
    return tiers.npz_results(SCRIPT, RUNS, inputs, folder)


@pytest.mark.parametrize("case", CASES, ids=lambda c: "N{}C{}_{}x{}_k{}d{}p{}s{}".format(*c))
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_many_planes_any_thread_count(results, case, dtype):
    N, C, H, W, k, d, p, s = case
    cols = case_cols(case, dtype)
    want = ref.col2im(cols, (H, W), k, d, p, s)
    if dtype == "fp32":
        assert_bits(want, torch.ops.aten.col2im(torch.from_numpy(cols), [H, W], [k, k], [d, d],
                                                [p, p], [s, s]).numpy(), "the reference vs torch")
    name = "%s_%d" % (dtype, CASES.index(case))
    for run, outs in results.items():
        assert_bits(outs[name].view(cols.dtype), want, str(run))
