"""aclnnIm2colBackward: the kernel 3 / stride 2 / padding 1 row kernels for small images.

On AVX-512 CPUs, bf16 and fp32 col2im with kernel 3x3, stride 2, padding 1, dilation 1, an even
image twice the window grid (H = 2*OH, W = 2*OW) and OW <= 16 go through dedicated kernels (bf16:
two output rows per 32-word load, rounded with AVX512-BF16 when the CPU has it and with the
integer rounding for pairs holding a subnormal sum).  Their results must equal PyTorch (fp32) and
the fp32 sum in (ki, kj) order from +0.0, rounded once (bf16), bit for bit - including -0.0
inputs, subnormals, infinities and NaNs - at 1, 2 and 3 threads and with ACLNN_NO_SIMD=1 (the
portable path).  Each configuration runs in its own process (the pool size and the SIMD switch are
read when the library starts).
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

# (N, C, H, W): OH even and odd, OW even and odd, OW = 16 (the widest) and OW = 1; the last two
# fall outside the geometry (W = 34 -> OW = 17; odd H) and take the generic kernels.
CASES = [
    (2, 17, 28, 28),
    (1, 9, 14, 10),
    (1, 4, 2, 32),
    (3, 5, 30, 2),
    (1, 3, 6, 34),
    (1, 3, 27, 28),
]
VALUE_SETS = ["normal", "special", "negzero", "subnormal"]
# (threads, ACLNN_NO_SIMD); "avx2": ACLNN_NO_AVX512=1 instead (the AVX2 tier on any CPU)
CONFIGS = [("1", "0"), ("2", "0"), ("3", "0"), ("1", "1"), ("2", "avx2")]

SCRIPT = textwrap.dedent("""
    import sys, numpy as np, ml_dtypes
    from pyaclnn.functional import im2col_backward
    src, dst = sys.argv[1:]
    data = np.load(src, allow_pickle=False)
    outs = {}
    for name in data.files:
        cols = data[name]
        H, W = (int(v) for v in name.split("_")[1:3])
        if name.startswith("bf16"):
            cols = cols.view(ml_dtypes.bfloat16)
        out = im2col_backward(cols, (H, W), 3, 1, 1, 2)
        outs[name] = out.view(np.uint16) if out.dtype == ml_dtypes.bfloat16 else out
    np.savez(dst, **outs)
""")


def windows(size):
    return (size + 2 - 3) // 2 + 1


def numpy_col2im(cols, H, W):
    """fp32 sum in (ki, kj) order starting from +0.0, one kernel offset at a time."""
    n, rows, _ = cols.shape
    c = rows // 9
    OH, OW = windows(H), windows(W)
    src = cols.astype(np.float32).reshape(n, c, 3, 3, OH, OW)
    out = np.zeros((n, c, H, W), np.float32)
    for ki in range(3):
        ih = np.arange(OH) * 2 - 1 + ki
        oh_ok = (ih >= 0) & (ih < H)
        for kj in range(3):
            iw = np.arange(OW) * 2 - 1 + kj
            ow_ok = (iw >= 0) & (iw < W)
            contrib = src[:, :, ki, kj][:, :, oh_ok][:, :, :, ow_ok]
            with np.errstate(over="ignore", invalid="ignore"):
                out[:, :, ih[oh_ok][:, None], iw[ow_ok][None, :]] += contrib
    return out


def make_values(kind, shape, rng, dtype):
    if kind == "normal":
        data = rng.standard_normal(shape).astype(np.float32)
    elif kind == "special":
        data = rng.standard_normal(shape).astype(np.float32)
        pick = rng.random(shape)
        data[pick < 0.02] = np.nan
        data[(pick >= 0.02) & (pick < 0.04)] = np.inf
        data[(pick >= 0.04) & (pick < 0.06)] = -np.inf
        data[(pick >= 0.06) & (pick < 0.15)] = -0.0
        data[(pick >= 0.15) & (pick < 0.20)] = 3e38            # sums overflow to inf
        tiny = np.float32(1e-39) * rng.standard_normal(shape).astype(np.float32)
        data[(pick >= 0.20) & (pick < 0.30)] = tiny[(pick >= 0.20) & (pick < 0.30)]
    elif kind == "negzero":
        data = np.full(shape, -0.0, np.float32)
        data[rng.random(shape) < 0.01] = 1.0
    else:   # subnormal sums (a few normal values mixed in)
        data = np.float32(1e-39) * rng.standard_normal(shape).astype(np.float32)
        data[rng.random(shape) < 0.05] = 0.5
    return data.astype(dtype)


def bits(a):
    return a.view(np.uint32) if a.dtype == np.float32 else a.view(np.uint16)


def test_k3s2_kernels_match_reference(tmp_path):
    rng = np.random.default_rng(11)
    inputs, wants = {}, {}
    for idx, (N, C, H, W) in enumerate(CASES):
        L = windows(H) * windows(W)
        for kind in VALUE_SETS:
            for dname, dtype in (("fp32", np.float32), ("bf16", ml_dtypes.bfloat16)):
                name = f"{dname}_{H}_{W}_{kind}_{idx}"
                cols = make_values(kind, (N, C * 9, L), rng, dtype)
                want = numpy_col2im(cols, H, W)
                if dname == "fp32":
                    ref = torch.ops.aten.col2im(torch.from_numpy(cols), [H, W], [3, 3], [1, 1],
                                                [1, 1], [2, 2]).numpy()
                    same = np.isnan(want) & np.isnan(ref) | (bits(want) == bits(ref))
                    assert same.all(), f"NumPy reference disagrees with torch on {name}"
                else:
                    want = want.astype(ml_dtypes.bfloat16)
                inputs[name] = cols.view(np.uint16) if dname == "bf16" else cols
                wants[name] = want
    src = tmp_path / "cols.npz"
    np.savez(src, **inputs)
    for threads, no_simd in CONFIGS:
        dst = tmp_path / f"out_{threads}_{no_simd}.npz"
        env = dict(os.environ, ACLNN_NUM_THREADS=threads)
        env.update({"ACLNN_NO_AVX512": "1"} if no_simd == "avx2" else {"ACLNN_NO_SIMD": no_simd})
        res = subprocess.run([sys.executable, "-c", SCRIPT, str(src), str(dst)], env=env,
                             capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert res.returncode == 0, res.stderr
        got_all = np.load(dst)
        for name, want in wants.items():
            got = got_all[name]
            if name.startswith("bf16"):
                got = got.view(ml_dtypes.bfloat16)
            assert got.shape == want.shape, name
            nan_want = np.isnan(want.astype(np.float32))
            nan_got = np.isnan(got.astype(np.float32))
            assert np.array_equal(nan_want, nan_got), f"{name}: NaN positions, config {threads}/{no_simd}"
            ok = bits(got)[~nan_want] == bits(want)[~nan_want]
            assert ok.all(), (f"{name}: {np.count_nonzero(~ok)} values differ, threads {threads}, "
                              f"ACLNN_NO_SIMD={no_simd}")
            if no_simd == "0" and threads == "1":
                continue
            # the NaN bits too must not depend on the thread count or the path
            first = np.load(tmp_path / "out_1_0.npz")[name]
            assert np.array_equal(bits(first), bits(got_all[name])), name


# ---- no read past the tensor's end --------------------------------------------------------------
# The bf16 kernel reads two window rows as dwords; with an odd number of windows per row the last
# window of the tensor ends inside a dword.  gradOutput is placed so that it ends exactly at a
# page followed by an inaccessible one (and gradInput likewise): a read or write past either end
# crashes the program.
GUARD_PROGRAM = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "acl/acl.h"
#include "aclnnop/aclnn_im2col_backward.h"

/* `bytes` bytes ending right before an inaccessible page */
static char *guarded(size_t bytes)
{
    const size_t page = 4096, span = (bytes + page - 1) / page * page;
    char *m = mmap(NULL, span + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED || mprotect(m + span, page, PROT_NONE) != 0) return NULL;
    return m + span - bytes;
}

int main(int argc, char **argv)
{
    if (argc != 7) return 2;
    const int64_t H = atoll(argv[3]), W = atoll(argv[4]), planes = atoll(argv[5]);
    const int bf16 = atoi(argv[6]);
    const aclDataType dt = bf16 ? ACL_BF16 : ACL_FLOAT;
    const size_t es = bf16 ? 2 : 4;
    const int64_t OH = (H - 1) / 2 + 1, OW = (W - 1) / 2 + 1, L = OH * OW;
    const size_t in_bytes = (size_t)(planes * 9 * L) * es, out_bytes = (size_t)(planes * H * W) * es;
    char *cols = guarded(in_bytes), *out = guarded(out_bytes);
    FILE *f = fopen(argv[1], "rb");
    if (cols == NULL || out == NULL || f == NULL || fread(cols, 1, in_bytes, f) != in_bytes) return 3;
    fclose(f);
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) return 4;
    aclrtStream stream = NULL;
    if (aclrtCreateStream(&stream) != ACL_SUCCESS) return 4;
    int64_t ish[3] = {1, planes * 9, L}, osh[4] = {1, planes, H, W};
    int64_t isz[2] = {H, W}, k[2] = {3, 3}, d[2] = {1, 1}, p[2] = {1, 1}, s[2] = {2, 2};
    aclTensor *ti = aclCreateTensor(ish, 3, dt, NULL, 0, ACL_FORMAT_ND, ish, 3, cols);
    aclTensor *to = aclCreateTensor(osh, 4, dt, NULL, 0, ACL_FORMAT_ND, osh, 4, out);
    aclIntArray *ai = aclCreateIntArray(isz, 2), *ak = aclCreateIntArray(k, 2);
    aclIntArray *ad = aclCreateIntArray(d, 2), *ap = aclCreateIntArray(p, 2);
    aclIntArray *as = aclCreateIntArray(s, 2);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    if (aclnnIm2colBackwardGetWorkspaceSize(ti, ai, ak, ad, ap, as, to, &ws, &ex) != ACLNN_SUCCESS ||
        ws != 0 || aclnnIm2colBackward(NULL, 0, ex, stream) != ACLNN_SUCCESS ||
        aclrtSynchronizeStream(stream) != ACL_SUCCESS) {
        return 5;
    }
    f = fopen(argv[2], "wb");
    if (f == NULL || fwrite(out, 1, out_bytes, f) != out_bytes) return 6;
    fclose(f);
    aclDestroyTensor(ti);
    aclDestroyTensor(to);
    aclDestroyIntArray(ai);
    aclDestroyIntArray(ak);
    aclDestroyIntArray(ad);
    aclDestroyIntArray(ap);
    aclDestroyIntArray(as);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
"""


@pytest.mark.parametrize("dtype", ["bf16", "fp32"])
def test_k3s2_reads_and_writes_stay_inside_the_tensors(tmp_path, dtype):
    sys.path.insert(0, str(ROOT / "tests"))
    import support
    source = tmp_path / "im2col_backward_guard.c"
    source.write_text(GUARD_PROGRAM)
    exe = support.compile_program(source, out_dir=tmp_path)
    np_dtype = ml_dtypes.bfloat16 if dtype == "bf16" else np.float32
    rng = np.random.default_rng(5)
    for H, W in [(14, 10), (28, 28), (2, 32), (30, 2), (6, 6), (4, 18)]:
        for planes in (1, 3):
            cols = rng.standard_normal((1, planes * 9, windows(H) * windows(W)))
            cols = cols.astype(np.float32).astype(np_dtype)
            src, dst = tmp_path / "cols.bin", tmp_path / "out.bin"
            src.write_bytes(cols.tobytes())
            for threads in ("1", "2"):
                res = support.run_program(exe, env={"ACLNN_NUM_THREADS": threads},
                                          args=(str(src), str(dst), str(H), str(W), str(planes),
                                                "1" if dtype == "bf16" else "0"))
                assert res.returncode == 0, f"{H}x{W} {planes} planes: exit {res.returncode}"
                got = np.frombuffer(dst.read_bytes(), dtype=np_dtype).reshape(1, planes, H, W)
                want = numpy_col2im(cols, H, W).astype(np_dtype)
                assert np.array_equal(bits(got), bits(want)), f"{H}x{W} {planes} planes"
