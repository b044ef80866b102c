"""aclnnIm2colBackward: the work-sharing path (planes claimed in chunks from a shared counter),
on every kernel tier (AVX-512, AVX2, portable).

With many image planes and 2 or 3 threads every thread claims several chunks, in an order that
depends on scheduling; the result must still equal PyTorch's col2im bit for bit (fp32) and the
fp32-sum-rounded-once NumPy reference (reference.col2im; fp16/bf16), whatever the thread count.
Each configuration runs in its own process because the pool size is fixed when the library
starts.
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

SCRIPT = textwrap.dedent("""
    import sys, numpy as np, ml_dtypes
    from pyaclnn.functional import im2col_backward
    src, dst, H, W, k, d, p, s = sys.argv[1:]
    cols = np.load(src, allow_pickle=False)
    if cols.dtype == np.uint16:
        cols = cols.view(ml_dtypes.bfloat16)
    out = im2col_backward(cols, (int(H), int(W)), int(k), int(d), int(p), int(s))
    if out.dtype == ml_dtypes.bfloat16:
        out = out.view(np.uint16)
    np.save(dst, out)
""")


# 1-3 threads on the CPU's best kernels, then the AVX2 tier and the portable loops, and the pool's
# workers left where the OS puts them
RUNS = [tiers.Run(threads=1), tiers.Run(threads=2), tiers.Run(threads=3), tiers.Run("avx2", threads=2),
        tiers.Run("portable", threads=1), tiers.Run(threads=2, extra=(("ACLNN_STEER_WORKERS", "0"),))]


def run_ours(tmp_path, cols, H, W, k, d, p, s, run):
    src, dst = tmp_path / "cols.npy", tmp_path / "out.npy"
    np.save(src, cols.view(np.uint16) if cols.dtype == ml_dtypes.bfloat16 else cols)
    tiers.run_script(SCRIPT, run, args=(src, dst, H, W, k, d, p, s), timeout=120)
    return np.load(dst).view(cols.dtype)


@pytest.mark.parametrize("case", CASES, ids=lambda c: "N{}C{}_{}x{}_k{}d{}p{}s{}".format(*c))
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_many_planes_any_thread_count(tmp_path, case, dtype):
    N, C, H, W, k, d, p, s = case
    L = windows(H, k, d, p, s) * windows(W, k, d, p, s)
    rng = np.random.default_rng(hash(case) % 1000)
    cols = rng.standard_normal((N, C * k * k, L)).astype(np.float32).astype(DTYPES[dtype])
    want = ref.col2im(cols, (H, W), k, d, p, s)
    if dtype == "fp32":
        assert_bits(want, torch.ops.aten.col2im(torch.from_numpy(cols), [H, W], [k, k], [d, d],
                                                [p, p], [s, s]).numpy(), "the reference vs torch")
    for run in tiers.every_tier(RUNS):
        assert_bits(run_ours(tmp_path, cols, H, W, k, d, p, s, run), want, str(run))
