"""The launch trace names the kernel path each operator ran (kernel=... on the INFO line of every
launch, docs/architecture.md "Errors and logging"), and ACLNN_NO_SIMD=1 makes every operator whose
kernels live in libaclnn/src/kernels/<family>/ run - and name - a portable path: the CPU table
decides every vector path, none is left to the loader."""
import re

from tiers import Run, run_script

SCRIPT = r"""
import numpy as np
import pyaclnn.functional as F

rng = np.random.default_rng(7)
x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
cols = F.im2col(x, 3, padding=1, stride=2)
F.im2col_backward(cols, (8, 8), 3, padding=1, stride=2)
F.prelu(x, np.array([0.25, 0.5, 0.75], np.float32))
F.prelu(x.astype(np.float16), np.array([0.25], np.float16))
F.prelu_backward(x, x, np.array([0.25, 0.5, 0.75], np.float32))
u = rng.standard_normal((2, 3, 40)).astype(np.float32)
F.upsample_nearest_exact1d(u, 80)
F.upsample_nearest_exact1d(u, 57)
F.upsample_nearest_exact1d_backward(rng.standard_normal((2, 3, 80)).astype(np.float32), 80, (2, 3, 40))
F.upsample_nearest_exact1d_backward(rng.standard_normal((2, 3, 57)).astype(np.float32), 57, (2, 3, 40))
F.upsample_nearest_exact1d_backward(rng.standard_normal((2, 3, 40)).astype(np.float16), 40, (2, 3, 40))
F.replication_pad2d_backward(rng.standard_normal((2, 3, 10, 11)).astype(np.float32), x, [1, 2, 1, 1])
F.replication_pad2d(x, [1, 2, 1, 1])
out, mask = F.max_pool2d_with_mask(x, 3, 2, 1)
F.max_pool2d_with_mask_backward(out, x, mask, 3, 2, 1)
"""

# every operator whose kernels are in kernels/<family>/ (all but MaxPool2dWithMask's forward)
OPERATORS = {"aclnnIm2col", "aclnnIm2colBackward", "aclnnPrelu", "aclnnPreluBackward",
             "aclnnUpsampleNearestExact1d", "aclnnUpsampleNearestExact1dBackward",
             "aclnnReplicationPad2d", "aclnnReplicationPad2dBackward",
             "aclnnMaxPool2dWithMaskBackward"}

TRACE = (("ASCEND_GLOBAL_LOG_LEVEL", "1"), ("ASCEND_SLOG_PRINT_TO_STDOUT", "1"))


def traced_paths(tier):
    out = run_script(SCRIPT, Run(tier, threads=2, extra=TRACE))
    paths = {}
    for line in out.splitlines():
        m = re.search(r"\[(aclnn\w+)\] exec .* kernel=(\S+)", line)
        if m:
            paths.setdefault(m.group(1), []).append(m.group(2))
    return paths


def test_no_simd_names_a_portable_path_for_every_operator():
    paths = traced_paths("portable")
    assert OPERATORS <= set(paths), sorted(OPERATORS - set(paths))
    for op in OPERATORS:
        for path in paths[op]:
            assert "portable" in path, (op, path)


def test_every_tier_names_a_path_for_every_launch():
    for tier in ("best", "avx2"):
        paths = traced_paths(tier)
        assert OPERATORS <= set(paths), (tier, sorted(OPERATORS - set(paths)))
