"""UpsampleNearestExact1dBackward's streamed multi-run path (docs/kernels_pad_upsample.md): the
rows a thread claims are written as one flat stream of aligned 64-byte lines, chunks are claimed
in shrinking ("guided") sizes with the last unit left to the launching thread, and short run
lists are built once in phase 1 and kept in the plan.

The shapes reach: run lists kept in the plan (3 or 7 runs) and built per launch (9 runs); rows
of a multiple of 16 floats and odd lengths; chunk units smaller than 16 rows (rows over 16 KiB),
so claimed chunks start mid-line; chunks split into 1-8 stretches worked on in lockstep (fewer
for long rows, whose stages would not fit); counts 2, 3 and 4 (count 4 has no vector kernel); and a
gradInput view whose data starts 12 bytes past a 64-byte line.  Every run is compared bit for
bit with the card's arithmetic on the default product (reference.py: CANN's gather map, fp32 sums
in increasing d; these finite inputs meet no NaN spread), and all environments - 1, 2 and 3 threads,
streaming forced on and off, and the portable loops (ACLNN_NO_SIMD=1) - must print the same
digest (bf16/fp16 results included).
"""
import textwrap

import tiers

SCRIPT = textwrap.dedent("""
    import hashlib, sys, numpy as np, ml_dtypes, pyaclnn
    from pyaclnn.functional import upsample_nearest_exact1d_backward
    sys.path.insert(0, "tests")
    import reference as ref
    rng = np.random.default_rng(23)
    digest = hashlib.sha256()

    def want_of(g, Lout, size):
        # finite gradients: A2's slide products give the per-cell sums of Ascend950's kernel
        return ref.upsample_nearest_exact1d_backward(g, size[-1], 0.0, soc="Ascend950").reshape(g.shape[:-1] + (size[-1],))

    CASES = [((4, 33), 1000, 2999),   # 3 runs, in the plan; 16-row units start on a line
             ((3, 29), 997, 2990),    # odd Lin, 3 runs
             ((2, 41), 1001, 2999),   # 9 runs: map built per launch
             ((4, 17), 1501, 4500),   # 7 runs, rows of 24 KB: units of 10 rows, mid-line starts
             ((4, 17), 1300, 3899),   # 3 runs, units of 12 rows
             ((2, 21), 1001, 4003),   # counts around 4 (no vector kernel), 20 KB rows
             ((2, 5), 20000, 59999),  # 320 KB rows: units of one row, 3 staged stretches
             ((4, 16), 4096, 8192)]   # one run (streamed straight from the registers)
    for rows, L, Lout in CASES:
        size = list(rows) + [L]
        g = rng.standard_normal(rows + (Lout,)).astype(np.float32)
        g[0, 0, :7] = -0.0            # -0 sums must come out +0 (0 + -0)
        ours = upsample_nearest_exact1d_backward(g, [Lout], size)
        want = want_of(g, Lout, size)
        assert ours.dtype == want.dtype and ours.tobytes() == want.tobytes(), (rows, L, Lout)
        digest.update(ours.tobytes())
        for dtype in (np.float16, ml_dtypes.bfloat16):
            digest.update(upsample_nearest_exact1d_backward(g.astype(dtype), [Lout], size).tobytes())

    # gradInput (and gradOutput) views that start 3 elements into their storage
    rows, L, Lout = (4, 33), 1000, 2999
    g = rng.standard_normal(rows + (Lout,)).astype(np.float32)
    with pyaclnn.Tensor.strided(g, offset=3) as gt, \\
            pyaclnn.Tensor(rows + (L,), np.float32, offset=3) as out:
        pyaclnn.run_op("UpsampleNearestExact1dBackward", gt, [Lout], list(rows) + [L], 0.0, out)
        ours = out.numpy()
    want = want_of(g, Lout, list(rows) + [L])
    assert ours.tobytes() == want.tobytes(), "offset view"
    digest.update(ours.tobytes())
    print(digest.hexdigest())
""")


def test_flat_streamed_rows_match_torch_under_every_split():
    runs = [tiers.Run(threads=t, streaming=s) for t, s in ((1, 0), (1, 1), (2, 0), (2, 1), (3, 1))]
    runs += [tiers.Run("avx2", threads=2), tiers.Run("portable", threads=2)]
    runs.append(tiers.Run(threads=2))  # the default streaming decision
    tiers.assert_same_output(SCRIPT, runs)
