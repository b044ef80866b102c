"""The vector (AVX-512) and streaming paths of ReplicationPad2d[Backward] and
UpsampleNearestExact1d[Backward] against PyTorch, under every combination that picks a different
code path: 1, 2 or 3 threads (ranges that split an output line between threads), streaming
stores forced on or off (ACLNN_STREAMING_STORES), and the other SIMD tiers (AVX2, portable
loops; tests/tiers.py).

Shapes are chosen to reach the paths: rows of a multiple of 16 floats (whole aligned vectors,
streamed straight from registers) and odd widths whose rows and thread ranges start mid-line.
Every run must be bit-identical to torch (copies of every width, and the fp32 backward on
Ascend950, whose order is ATen's), to the Atlas A2 kernels' arithmetic (the backward in every
dtype on the default product, reference.replication_pad2d_backward_a2) and print the same digest
of all results (fp16/bf16 sums, which round once unlike torch, included).
"""
import textwrap

import tiers

SCRIPT = textwrap.dedent("""
    import hashlib, sys, numpy as np, ml_dtypes, torch
    sys.path.insert(0, "tests")
    import pyaclnn
    import reference as ref
    from pyaclnn.functional import (replication_pad2d, replication_pad2d_backward,
                                    upsample_nearest_exact1d, upsample_nearest_exact1d_backward)
    torch.set_num_threads(1)
    rng = np.random.default_rng(11)
    digest = hashlib.sha256()

    def check(ours, want, what):
        assert ours.dtype == want.dtype and ours.shape == want.shape, what
        assert ours.tobytes() == want.tobytes(), what

    PAD_CASES = [((3, 7, 150, 197), [2, 3, 5, 4]), ((2, 16, 64, 128), [1, 1, 1, 1]),
                 ((2, 16, 64, 126), [1, 1, 1, 1]), ((4, 9, 40, 7), [6, 0, 3, 2])]
    for shape, pad in PAD_CASES:
        for name in ("float32", "float16", "bfloat16"):
            dtype = ml_dtypes.bfloat16 if name == "bfloat16" else np.dtype(name)
            x = rng.standard_normal(shape).astype(np.float32)
            x_t = torch.from_numpy(x).to(getattr(torch, name))
            ours = replication_pad2d(x.astype(dtype), pad)
            want = torch.ops.aten.replication_pad2d(x_t, pad).float().numpy().astype(dtype)
            check(ours, want, ("forward", shape, pad, name))
            digest.update(ours.tobytes())
            g = rng.standard_normal(ours.shape).astype(np.float32)
            grad = replication_pad2d_backward(g.astype(dtype), np.zeros(shape, dtype), pad)
            check(grad, ref.replication_pad2d_backward_a2(g.astype(dtype), shape, pad),
                  ("backward on A2", shape, pad, name))
            digest.update(grad.tobytes())
            with pyaclnn.soc("Ascend950"):
                grad = replication_pad2d_backward(g.astype(dtype), np.zeros(shape, dtype), pad)
            if name == "float32":
                want = torch.ops.aten.replication_pad2d_backward(
                    torch.from_numpy(g), torch.from_numpy(x), pad).numpy()
                check(grad, want, ("backward on 950", shape, pad, name))
            digest.update(grad.tobytes())

    # the forward alone: wide pads (edges over several 64-byte lines, and more than the line
    # kernel's table holds), and the other element sizes (1, 2, 8, 16 bytes) over more than one
    # thread range
    for shape, pad, name in (((2, 5, 30, 70), [20, 17, 2, 1], "float32"),
                             ((2, 5, 30, 70), [20, 17, 2, 1], "float16"),
                             ((2, 3, 20, 100), [90, 85, 1, 2], "float32"),
                             ((4, 8, 130, 257), [3, 2, 1, 4], "int8"),
                             ((4, 8, 130, 257), [3, 2, 1, 4], "int16"),
                             ((4, 8, 130, 257), [3, 2, 1, 4], "int64"),
                             ((4, 8, 130, 257), [3, 2, 1, 4], "complex64"),
                             ((4, 8, 130, 257), [3, 2, 1, 4], "complex128")):
        x = (rng.standard_normal(shape) * 50).astype(name)
        if name.startswith("complex"):
            x = x + 1j * x[..., ::-1]
        ours = replication_pad2d(x, pad)
        want = torch.ops.aten.replication_pad2d(torch.from_numpy(x), pad).numpy()
        check(ours, want, ("forward", shape, pad, name))
        digest.update(ours.tobytes())

    for rows, L, Lout in (((4, 33), 4096, 8192), ((4, 33), 1000, 2999), ((3, 5), 300, 899),
                          ((2, 9), 64, 1000), ((3, 7), 120, 480), ((2, 5), 333, 1000)):
        x = rng.standard_normal(rows + (L,)).astype(np.float32)
        ours = upsample_nearest_exact1d(x, [Lout])
        want = torch.ops.aten._upsample_nearest_exact1d(torch.from_numpy(x), [Lout], None).numpy()
        check(ours, want, ("upsample forward", L, Lout))
        digest.update(ours.tobytes())
        g = rng.standard_normal(rows + (Lout,)).astype(np.float32)
        ours = upsample_nearest_exact1d_backward(g, [Lout], list(rows) + [L])
        want = torch.ops.aten._upsample_nearest_exact1d_backward(
            torch.from_numpy(g), [Lout], list(rows) + [L], None).numpy()
        check(ours, want, ("upsample backward", L, Lout))
        digest.update(ours.tobytes())
        for dtype in (np.float16, ml_dtypes.bfloat16):
            digest.update(upsample_nearest_exact1d_backward(g.astype(dtype), [Lout],
                                                            list(rows) + [L]).tobytes())
    print(digest.hexdigest())
""")


def test_vector_and_streaming_paths_match_torch_and_each_other():
    runs = [tiers.Run(threads=t, streaming=s) for t, s in ((1, 1), (2, 0), (2, 1), (3, 0), (3, 1))]
    runs += [tiers.Run("avx2", threads=2), tiers.Run("portable", threads=2)]
    tiers.assert_same_output(SCRIPT, runs)
