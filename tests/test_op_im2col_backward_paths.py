"""aclnnIm2colBackward: the work-sharing path (planes claimed in chunks from a shared counter),
on every kernel tier (AVX-512, AVX2, portable).

With many image planes and 2 or 3 threads every thread claims several chunks, in an order that
depends on scheduling; the result must still equal PyTorch's col2im bit for bit (fp32) and the
fp32-sum-rounded-once NumPy reference (fp16/bf16), whatever the thread count.  Each thread count
runs in its own process because the pool size is fixed when the library starts.
"""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent

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


def windows(size, k, d, p, s):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def numpy_col2im(cols, H, W, k, d, p, s):
    """fp32 sum in (ki, kj) order starting from +0.0, one kernel offset at a time."""
    n, rows, _ = cols.shape
    c = rows // (k * k)
    OH, OW = windows(H, k, d, p, s), windows(W, k, d, p, s)
    src = cols.astype(np.float32).reshape(n, c, k, k, OH, OW)
    out = np.zeros((n, c, H, W), np.float32)
    for ki in range(k):
        ih = np.arange(OH) * s - p + ki * d
        oh_ok = (ih >= 0) & (ih < H)
        for kj in range(k):
            iw = np.arange(OW) * s - p + kj * d
            ow_ok = (iw >= 0) & (iw < W)
            contrib = src[:, :, ki, kj][:, :, oh_ok][:, :, :, ow_ok]
            out[:, :, ih[oh_ok][:, None], iw[ow_ok][None, :]] += contrib
    return out


def run_ours(tmp_path, cols, H, W, k, d, p, s, threads, extra_env):
    src, dst = tmp_path / f"cols{threads}.npy", tmp_path / f"out{threads}.npy"
    np.save(src, cols.view(np.uint16) if cols.dtype == ml_dtypes.bfloat16 else cols)
    env = dict(os.environ, ACLNN_NUM_THREADS=str(threads), **extra_env)
    res = subprocess.run([sys.executable, "-c", SCRIPT, str(src), str(dst), str(H), str(W),
                          str(k), str(d), str(p), str(s)],
                         env=env, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    return np.load(dst)


@pytest.mark.parametrize("case", CASES, ids=lambda c: "N{}C{}_{}x{}_k{}d{}p{}s{}".format(*c))
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_many_planes_any_thread_count(tmp_path, case, dtype):
    N, C, H, W, k, d, p, s = case
    L = windows(H, k, d, p, s) * windows(W, k, d, p, s)
    rng = np.random.default_rng(hash(case) % 1000)
    cols = rng.standard_normal((N, C * k * k, L)).astype(np.float32).astype(DTYPES[dtype])
    want = numpy_col2im(cols, H, W, k, d, p, s)
    if dtype == "fp32":
        torch_out = torch.ops.aten.col2im(torch.from_numpy(cols), [H, W], [k, k], [d, d],
                                          [p, p], [s, s]).numpy()
        assert np.array_equal(want.view(np.uint32), torch_out.view(np.uint32))
        want_bits = want.view(np.uint32)
    elif dtype == "fp16":
        want_bits = want.astype(np.float16).view(np.uint16)
    else:
        want_bits = want.astype(ml_dtypes.bfloat16).view(np.uint16)
    # 1-3 threads on the CPU's best kernels, then the AVX2 tier (what an AVX-512 CPU runs with
    # ACLNN_NO_AVX512=1) and the portable loops
    configs = [(1, {}), (2, {}), (3, {}), (2, {"ACLNN_NO_AVX512": "1"}), (1, {"ACLNN_NO_SIMD": "1"}),
               (2, {"ACLNN_STEER_WORKERS": "0"})]  # the pool's workers left where the OS puts them
    for threads, extra_env in configs:
        got = run_ours(tmp_path, cols, H, W, k, d, p, s, threads, extra_env)
        got_bits = got.view(np.uint32) if dtype == "fp32" else got.view(np.uint16)
        assert got_bits.shape == want_bits.shape
        assert np.array_equal(got_bits, want_bits), f"{threads} threads {extra_env}"
