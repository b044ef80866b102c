"""The short-row paths of ReplicationPad2d, its backward and the UpsampleNearestExact1d forward: on
AVX-512, a padded row of at most 64 bytes is one lane permutation of its source row
(kernels/pad/pad_fw_short_avx512.c), an fp32 gradInput row whose gradOutput rows have at most 16
columns is one permutation of their sum (kernels/pad/pad_bw_avx512.c), an upsampled row kept in
cache is one permutation per vector of outputs over a window of inputs
(kernels/upsample/upsample_fwd_window_avx512.c), and the fp32 upsample backward of short runs
sums up to 16 inputs a vector from a window of 32 gradients
(kernels/upsample/upsample_bw_window_avx512.c).

Widths around the vector's lanes (8, 16, 32 for 8-, 4-, 2-byte elements), every dtype, windows
that fit and that do not, at 1 and 2 threads (ranges that start mid-plane) and on every tier:
each result must be bit for bit the NumPy gathers and the A2 backward of tests/reference.py
(and, for the float dtypes and the Ascend950 backward, PyTorch), and every run must print the
same digest.  The launch trace shows the paths
are the ones meant.
"""
import re
import textwrap

import tiers

SCRIPT = textwrap.dedent("""
    import hashlib, sys, numpy as np, ml_dtypes, torch
    sys.path.insert(0, "tests")
    import pyaclnn
    import reference as ref
    from pyaclnn.functional import (replication_pad2d, replication_pad2d_backward, upsample_nearest_exact1d,
                                    upsample_nearest_exact1d_backward)
    rng = np.random.default_rng(5)
    digest = hashlib.sha256()

    def values(shape, name):
        x = rng.standard_normal(shape) * 40
        if name == "bfloat16":
            return x.astype(ml_dtypes.bfloat16)
        if name.startswith("complex"):
            return (x + 1j * x[..., ::-1]).astype(name)
        return x.astype(name)

    def check(ours, want, what):
        assert ours.dtype == want.dtype and ours.shape == want.shape, what
        assert ours.tobytes() == want.tobytes(), what
        digest.update(ours.tobytes())

    def torch_of(x):
        if x.dtype == ml_dtypes.bfloat16:
            return torch.from_numpy(x.astype(np.float32)).bfloat16()
        return torch.from_numpy(x)

    def numpy_of(t, dtype):
        return t.float().numpy().astype(dtype) if dtype == ml_dtypes.bfloat16 else t.numpy()

    # rows of lanes - 1, lanes, lanes + 1 elements (lanes = 64 bytes / element size), split as
    # both pads, all left, all right, and a source row of one or two elements
    LANES = {"int8": 64, "uint8": 64, "float16": 32, "bfloat16": 32, "int16": 32, "float32": 16,
             "int32": 16, "float64": 8, "int64": 8, "complex64": 8}
    for name, lanes in LANES.items():
        for Wo in (lanes - 1, lanes, lanes + 1):
            for shape, pad in (((2, 3, 5, Wo - 2), [1, 1, 2, 1]), ((1, 4, 4, Wo - 3), [3, 0, 0, 3]),
                               ((3, 1, 3, Wo - 2), [0, 2, 1, 1]), ((2, 2, 3, 2), [1, 1, 2, 2]),
                               ((2, 2, 2, 3), [2, 2, 1, 0])):
                x = values(shape, name)
                ours = replication_pad2d(x, pad)
                check(ours, ref.replication_pad2d(x, pad), ("pad", name, shape, pad))
                if name in ("float32", "float16", "bfloat16"):
                    want = torch.ops.aten.replication_pad2d(torch_of(x), pad)
                    check(ours, numpy_of(want, x.dtype), ("pad vs torch", name, shape, pad))

    # the fp32 backward's short planes (gradOutput rows of at most 16 columns): rows of 15, 16,
    # 17 columns, both pads, one side, H only (the A2 kernel "_h"), one row, two columns; on the
    # default product (the A2 kernels' orders) and on Ascend950 (ATen's row-major order)
    for Wo in (15, 16, 17):
        for shape, pad in (((2, 3, 6, Wo - 2), [1, 1, 2, 1]), ((2, 2, 5, Wo - 4), [3, 1, 0, 2]),
                           ((1, 3, 4, Wo - 3), [0, 3, 3, 0]), ((2, 2, 5, Wo), [0, 0, 2, 3]),
                           ((3, 1, 1, Wo - 2), [1, 1, 0, 0]), ((2, 2, 3, 2), [1, 1, 1, 2])):
            Ho, Wout = shape[2] + pad[2] + pad[3], shape[3] + pad[0] + pad[1]
            g = values(shape[:2] + (Ho, Wout), "float32")
            x = np.zeros(shape, np.float32)
            check(replication_pad2d_backward(g, x, pad), ref.replication_pad2d_backward_a2(g, shape, pad),
                  ("backward on A2", shape, pad))
            with pyaclnn.soc("Ascend950"):
                ours = replication_pad2d_backward(g, x, pad)
            want = torch.ops.aten.replication_pad2d_backward(torch.from_numpy(g), torch.from_numpy(x), pad)
            check(ours, want.numpy(), ("backward on 950", shape, pad))

    # outputs around 8, 16, 32, 64 per row; upsampling (every window fits), downsampling (the
    # window fits 2-byte lanes only, or none), equal lengths, one input
    CASES = [(25, 37, 1.5), (25, 37, None), (1, 17, None), (40, 40, None), (20, 16, None), (40, 32, None),
             (7, 9, None), (11, 15, None), (12, 16, None), (13, 17, None), (20, 31, None), (21, 32, None),
             (22, 33, None), (40, 63, None), (32, 64, 2.0), (44, 65, None), (100, 150, 1.5), (3, 8, 2.5)]
    for name in ("float32", "float16", "bfloat16", "uint8"):
        for L, Lout, scales in CASES:
            x = values((2, 5, L), name)
            ours = upsample_nearest_exact1d(x, [Lout], scales)
            check(ours, ref.upsample_nearest_exact1d(x, Lout, scales or 0.0), ("upsample", name, L, Lout, scales))
            if name != "uint8":
                want = torch.ops.aten._upsample_nearest_exact1d(torch_of(x), [Lout], scales)
                check(ours, numpy_of(want, x.dtype), ("upsample vs torch", name, L, Lout, scales))

    # the fp32 upsample backward's windows (maps of short runs kept in cache): counts 0-1
    # (downsampling), 1-2, 2-3, 4-5 (past the window's four terms: the per-input loops), rows of
    # inputs around 16 and 32, on each product's map (the A2 Cube's with its NaN spread from an
    # inf, Ascend950's gather, Ascend910's scatter)
    BW_CASES = [(25, 37, 1.5), (25, 37, None), (16, 24, None), (32, 48, None), (33, 50, None), (40, 100, None),
                (13, 61, None), (37, 25, None), (20, 30, None), (5, 9, None), (64, 95, None), (31, 47, 1.5)]
    for soc in ("Ascend910B", "Ascend950", "Ascend910"):
        for L, Lout, scales in BW_CASES:
            g = values((2, 3, Lout), "float32")
            g[0, 1, Lout // 2] = np.inf
            g[1, 0, 1] = -0.0
            with pyaclnn.soc(soc):
                ours = upsample_nearest_exact1d_backward(g, [Lout], [2, 3, L], scales)
            want = ref.upsample_nearest_exact1d_backward(g, L, scales or 0.0, soc=soc).reshape(2, 3, L)
            want = want.astype(np.float32)
            nan = np.isnan(want)  # the NaN's bits are not the reference's: where it is, only NaN
            assert np.array_equal(np.isnan(ours), nan), ("upsample backward NaN", soc, L, Lout, scales)
            ours_bits, want_bits = ours.copy(), want.copy()
            ours_bits[nan], want_bits[nan] = 0, 0
            check(ours_bits, want_bits, ("upsample backward", soc, L, Lout, scales))
            digest.update(ours.tobytes())
    print(digest.hexdigest())
""")


def test_short_rows_match_the_references_on_every_tier_and_thread_count():
    tiers.assert_same_output(SCRIPT, tiers.sweep(threads=(1, 2)))


TRACE_SCRIPT = textwrap.dedent("""
    import numpy as np
    from pyaclnn.functional import (replication_pad2d, replication_pad2d_backward, upsample_nearest_exact1d,
                                    upsample_nearest_exact1d_backward)
    x = np.ones((4, 8, 14, 14), np.float32)
    replication_pad2d(x, [1, 1, 1, 1])                        # 16 fp32: one vector a row
    replication_pad2d(x.astype(np.float16), [9, 9, 0, 0])     # 32 fp16
    replication_pad2d(x.astype(np.int64), [1, 1, 0, 0])       # 16 int64: two vectors
    replication_pad2d(x, [2, 1, 0, 0])                        # 17 fp32
    replication_pad2d(x.astype(np.int8), [1, 1, 0, 0])        # 1-byte elements
    g = np.ones((4, 8, 16, 16), np.float32)
    replication_pad2d_backward(g, x, [1, 1, 1, 1])            # 16 fp32 gradOutput columns
    replication_pad2d_backward(g[..., :15], x[..., :13], [1, 1, 1, 1])
    replication_pad2d_backward(np.ones((4, 8, 16, 17), np.float32), x, [2, 1, 1, 1])
    replication_pad2d_backward(g.astype(np.float16), x.astype(np.float16), [1, 1, 1, 1])
    u = np.ones((64, 16, 25), np.float32)
    upsample_nearest_exact1d(u, [37], 1.5)                    # counts 1, 2: windows of 11
    upsample_nearest_exact1d(u.astype(np.float16), [37], 1.5)
    upsample_nearest_exact1d(u, [50])                         # fp32 long run of count 2
    upsample_nearest_exact1d(u.astype(np.float16), [50])      # fp16 long run: the AVX2 loops
    upsample_nearest_exact1d(np.ones((4, 8, 40), np.float32), [32])  # windows of 40 > 16 lanes
    upsample_nearest_exact1d(u.astype(np.uint8), [37])        # 1-byte elements
    gu = np.ones((64, 16, 37), np.float32)
    upsample_nearest_exact1d_backward(gu, [37], [64, 16, 25], 1.5)    # counts 1, 2
    upsample_nearest_exact1d_backward(gu[..., :25], [25], [64, 16, 37])  # counts 0, 1
    upsample_nearest_exact1d_backward(gu[..., :30], [30], [64, 16, 6])   # count 5: past four terms
    upsample_nearest_exact1d_backward(gu.astype(np.float16), [37], [64, 16, 25], 1.5)
""")
WANT = {"aclnnReplicationPad2d": ["pad_short_rows_avx512"] * 2 + ["pad_rows_avx2"] * 3,
        "aclnnReplicationPad2dBackward": ["pad_bw_short_avx512"] * 2 + ["pad_bw_avx512"] * 2,
        "aclnnUpsampleNearestExact1dBackward": ["upsample_bw_window_avx512"] * 2 + ["upsample_bw_per_input_avx2"] * 2,
        "aclnnUpsampleNearestExact1d": ["upsample_window_avx512"] * 3 + ["upsample_runs_avx2"] +
                                       ["upsample_per_output_avx2"] * 2}


def test_the_trace_names_the_short_paths_where_they_apply():
    trace = (("ASCEND_GLOBAL_LOG_LEVEL", "1"), ("ASCEND_SLOG_PRINT_TO_STDOUT", "1"))
    for run in tiers.every_tier([tiers.Run(threads=1, extra=trace), tiers.Run("avx2", threads=1, extra=trace),
                                 tiers.Run("portable", threads=1, extra=trace)]):
        out = tiers.run_script(TRACE_SCRIPT, run)
        for op, want in WANT.items():
            paths = re.findall(r"\[%s\] exec .* kernel=(\S+)" % op, out)
            if run.tier == "best" and tiers.has_avx512():
                assert paths == want, (run, op, paths)
            else:
                assert not any("avx512" in path for path in paths), (run, op, paths)
                assert len(paths) == len(want), (run, op, paths)
