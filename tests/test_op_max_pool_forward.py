"""aclnnMaxPool2dWithMask forward: every SIMD tier and thread count against a NumPy loop (the 3x3
stride-2 fp16/bf16 planes against PyTorch), bit for bit.

The forward has an AVX-512 plane kernel in four forms - the paired path (2x2 windows, stride 2,
no padding, planes without NaN: 16 outputs per step pooled from the loaded rows), the pooled-rows
path (3x3 windows, stride 2, planes without NaN: each input row pooled along the row once, then
down; fp32 on its values, fp16 and bf16 on int16 keys, 32 windows per vector), the keyed path (other planes without NaN: key rows built first, then 16 or 32
outputs per compare) and the cell
path (planes with a NaN: 16 outputs per vector, the winner's bits carried in registers) - and the
portable row-at-a-time
kernel (widened fp32 copy of the plane, winners gathered by index).  On a CPU with AVX512-FP16
the paired and pooled-rows paths compare fp16 with vcmpph instead of int16 keys; the tests of
those paths also run the key form (ACLNN_NO_AVX512FP16=1).  All must give exactly
reference.max_pool_argmax's indices and the raw input bits at them - NaN payloads (quiet,
signalling, negative), infinities, signed zeros and ties included - and the mask container's
zero tail.  Every input is run with NaNs (the cell path) and without (the paired or keyed path).
"""
import hashlib
import itertools
import textwrap

import ml_dtypes
import numpy as np

import reference as ref
import tiers

BF16 = ml_dtypes.bfloat16

# (kernel, stride, padding): strides 1 and 2 along the row (the AVX-512 kernel), 3 (portable)
GEOMETRIES = [((3, 3), (2, 2), (1, 1)), ((2, 2), (2, 2), (0, 0)), ((3, 3), (1, 1), (1, 1)),
              ((3, 2), (1, 2), (1, 1)), ((5, 5), (2, 2), (2, 2)), ((2, 2), (1, 1), (0, 0)),
              ((3, 3), (3, 3), (1, 1))]
SHAPES = [(2, 3, 23, 45), (1, 2, 9, 70), (1, 1, 5, 131)]

# Special bit patterns per dtype: quiet, negative quiet and signalling NaN payloads, +-inf,
# +-0.0.  Written over random values, with values rounded to a few levels so windows tie.
SPECIALS = {
    "float32": (np.uint32, [0x7FC00001, 0xFFC12345, 0x7F800001, 0x7F800000, 0xFF800000, 0x00000000, 0x80000000]),
    "float16": (np.uint16, [0x7E01, 0xFE03, 0x7C01, 0x7C00, 0xFC00, 0x0000, 0x8000]),
    "bfloat16": (np.uint16, [0x7FC1, 0xFFC3, 0x7F81, 0x7F80, 0xFF80, 0x0000, 0x8000]),
}
DTYPES = {"float32": np.float32, "float16": np.float16, "bfloat16": BF16}


def make_input(shape, dtype_name, seed, nans=True):
    dtype = DTYPES[dtype_name]
    rng = np.random.default_rng(seed)
    x = np.round(rng.standard_normal(shape) * 2).astype(np.float32).astype(dtype)
    word, specials = SPECIALS[dtype_name]
    if not nans:
        specials = specials[3:]  # infinities and signed zeros only
    bits = x.view(word).reshape(-1)
    at = rng.choice(bits.size, bits.size // 6, replace=False)
    bits[at] = np.array(specials, dtype=word)[rng.integers(0, len(specials), at.size)]
    x[-1, -1] = -np.inf  # a plane of -inf: every window keeps its first in-range cell
    return x


_SCRIPT = textwrap.dedent("""
    import hashlib, itertools, sys
    sys.path.insert(0, "tests")
    from test_op_max_pool_forward import GEOMETRIES, SHAPES, DTYPES, make_input
    from pyaclnn.functional import max_pool2d_with_mask
    h = hashlib.sha256()
    for name, (si, shape), nans in itertools.product(DTYPES, enumerate(SHAPES), (True, False)):
        x = make_input(shape, name, si, nans)
        for k, s, p in GEOMETRIES:
            for ceil_mode in (False, True):
                out, mask = max_pool2d_with_mask(x, k, s, p, 1, ceil_mode)
                h.update(out.tobytes())
                h.update(mask.tobytes())
    print(h.hexdigest())
""")


def digest_of_reference(cases):
    """The digest the scripts print, from the NumPy reference: out, then mask, per (x, k, s, p,
    ceil_mode) case."""
    h = hashlib.sha256()
    for x, k, s, p, ceil_mode in cases:
        index = ref.max_pool_argmax(x, k, s, p, ceil_mode)
        h.update(np.ascontiguousarray(ref.max_pool_values(x, index)).tobytes())
        h.update(np.ascontiguousarray(ref.max_pool_mask(index, k)).tobytes())
    return h.hexdigest()


def reference_digest():
    return digest_of_reference(
        (make_input(shape, name, si, nans), k, s, p, ceil_mode)
        for name, (si, shape), nans in itertools.product(DTYPES, enumerate(SHAPES), (True, False))
        for k, s, p in GEOMETRIES for ceil_mode in (False, True))


def test_every_tier_and_thread_count_gives_the_reference_bits():
    want = reference_digest()
    runs = tiers.sweep(threads=(1, 2))
    for run, got in zip(runs, tiers.outputs(_SCRIPT, runs)):
        assert got == want, "%s: the forward's out or mask differs from the reference" % run


def check_streamed(x, name, k, s, p):
    """The forward of x, out + mask of 16 MiB or more, into a container prefilled with -1 and an
    out prefilled with 7: every byte the forward owes is compared with the reference."""
    import pyaclnn
    index = ref.max_pool_argmax(x, k, s, p, False)
    want_mask = ref.max_pool_mask(index, k)
    with pyaclnn.Tensor.from_numpy(x) as xt, \
            pyaclnn.Tensor.empty(index.shape, DTYPES[name], fill=7) as out, \
            pyaclnn.Tensor.empty(want_mask.shape, np.int8, fill=-1) as mask:
        pyaclnn.run_op("MaxPool2dWithMask", xt, list(k), list(s), list(p), [1, 1], False, out, mask)
        assert want_mask.nbytes >= 16 << 20
        assert out.numpy().tobytes() == np.ascontiguousarray(ref.max_pool_values(x, index)).tobytes(), name
        assert np.array_equal(mask.numpy(), want_mask), name


def test_streamed_outputs_and_tail():
    """out + mask of 16 MiB or more are written with streaming stores, the tail zeroed in the
    kernel's rows: the container is prefilled so every byte the forward owes is checked."""
    k, s, p = (3, 3), (2, 2), (1, 1)
    for name, shape, nans in (("float32", (13, 64, 66, 70), True), ("bfloat16", (14, 64, 66, 70), True),
                              ("float16", (14, 64, 66, 70), False), ("float32", (13, 64, 66, 70), False)):
        check_streamed(make_input(shape, name, 3, nans), name, k, s, p)


# The paired path (2x2 windows, stride 2, no padding, every window inside the plane): row
# widths with and without a partial last step of 16 outputs (fp32, fp16 keys) or chunk of 32
# (fp16, bf16: 16, 17, 28, 31, 33, 48, 49 and 65 outputs, and whole chunks of 32 and 64), odd H
# and W (a last row / column in no window), one output per row.  fp16/bf16 planes with W = 2*Wo
# and Wo >= 16 but not a multiple of 32 run as one stream of chunks across the output rows
# (16, 20, 24, 28, 33, 49, 60, 65 outputs and the tie planes' 25 and 36; 60 and 67 in the
# streamed test), in planes whose last chunk holds 8 to 32 outputs (16 and 60 outputs: 16 and
# 28; 64 and 96: 32; 168: 8; 300: 12; 1296: 16).
PAIRED_SHAPES = [(1, 2, 8, 32), (2, 1, 7, 66), (1, 3, 6, 63), (1, 2, 5, 2), (1, 1, 34, 98), (1, 1, 4, 130),
                 (1, 2, 4, 64), (1, 1, 6, 97), (1, 1, 3, 128), (1, 2, 13, 56), (1, 2, 7, 40), (1, 1, 8, 48),
                 (1, 1, 10, 120), (1, 2, 3, 32)]
ZERO_TIE_CELLS = (-0.0, 0.0, -1.0, 1.0, -np.inf)


# The smallest subnormals of each half type, as bits: the fp16 ones turn into fp32 denormals in
# the paired path's fp32 form for CPUs without AVX512-FP16 (pair_step_f16_spread).
TINY_BITS = {"float16": (0x0001, 0x0002, 0x8001, 0x007F), "bfloat16": (0x0001, 0x0002, 0x8001, 0x007F)}


def tie_windows(cells, dtype):
    """Every window of four cells drawn from `cells` (a 2x2-window plane of len(cells)^4 windows)."""
    n = len(cells) ** 2
    windows = np.array(list(itertools.product(cells, repeat=4)), dtype=dtype).reshape(n, n, 2, 2)
    return windows.transpose(0, 2, 1, 3).reshape(1, 1, 2 * n, 2 * n)


def paired_inputs(name):
    """The paired path's inputs of one dtype: random planes with and without NaNs; every window
    of four cells from ZERO_TIE_CELLS (625 windows: signed zeros tied with each other, -inf
    alone); for fp16/bf16 every window of signed zeros and the smallest subnormals (ties among
    them, and with zeros); and a NaN only in the column that no window covers (W odd)."""
    dtype = DTYPES[name]
    xs = [make_input(shape, name, 10 + i, nans) for i, shape in enumerate(PAIRED_SHAPES) for nans in (True, False)]
    xs.append(tie_windows(np.array(ZERO_TIE_CELLS, np.float32), np.float32).astype(dtype))
    if name in TINY_BITS:
        bits = np.array((0x0000, 0x8000) + TINY_BITS[name], np.uint16)
        xs.append(tie_windows(bits, np.uint16).view(dtype))
    outside = make_input((1, 2, 6, 35), name, 30, False)
    outside[:, :, :, -1] = np.nan
    xs.append(outside)
    return xs


_PAIRED_SCRIPT = textwrap.dedent("""
    import hashlib, sys
    sys.path.insert(0, "tests")
    from test_op_max_pool_forward import DTYPES, paired_inputs
    from pyaclnn.functional import max_pool2d_with_mask
    h = hashlib.sha256()
    for name in DTYPES:
        for x in paired_inputs(name):
            out, mask = max_pool2d_with_mask(x, (2, 2), (2, 2), (0, 0), 1, False)
            h.update(out.tobytes())
            h.update(mask.tobytes())
    print(h.hexdigest())
""")


def sweep_both_fp16_forms():
    """tiers.sweep at 1 and 2 threads, then the best tier again with ACLNN_NO_AVX512FP16=1: on a
    CPU with AVX512-FP16 the fp16 paired and pooled-rows steps compare the halves with vcmpph,
    and the switch keeps their int16-key form, so both forms meet the reference."""
    return tiers.sweep(threads=(1, 2)) + [tiers.Run(threads=t, extra=(("ACLNN_NO_AVX512FP16", "1"),)) for t in (1, 2)]


def test_paired_2x2_windows_on_every_tier_and_thread_count():
    want = digest_of_reference((x, (2, 2), (2, 2), (0, 0), False) for name in DTYPES for x in paired_inputs(name))
    runs = sweep_both_fp16_forms()
    for run, got in zip(runs, tiers.outputs(_PAIRED_SCRIPT, runs)):
        assert got == want, "%s: the 2x2 stride-2 forward's out or mask differs from the reference" % run


_PAIRED_DAZ_SCRIPT = textwrap.dedent("""
    import hashlib, sys
    import torch
    assert torch.set_flush_denormal(True)   # DAZ + FTZ on this thread and the threads it starts
    sys.path.insert(0, "tests")
    from test_op_max_pool_forward import paired_inputs
    from pyaclnn.functional import max_pool2d_with_mask
    h = hashlib.sha256()
    for x in paired_inputs("float16"):
        out, mask = max_pool2d_with_mask(x, (2, 2), (2, 2), (0, 0), 1, False)
        h.update(out.tobytes())
        h.update(mask.tobytes())
    print(h.hexdigest())
""")


def test_paired_fp16_under_denormals_are_zero():
    """With MXCSR's DAZ set (torch.set_flush_denormal) the fp16 2x2 forward still tells the
    subnormals apart: without AVX512-FP16 its fp32 form, which would read them as zeros, gives
    way to the int16 keys; vcmpph ignores DAZ."""
    want = digest_of_reference((x, (2, 2), (2, 2), (0, 0), False) for x in paired_inputs("float16"))
    runs = [tiers.Run(threads=t, extra=(("ACLNN_NO_AVX512FP16", "1"),)) for t in (1, 2)]
    runs += [tiers.Run(threads=1), tiers.Run("avx2", threads=2), tiers.Run("portable", threads=2)]
    for run, got in zip(runs, tiers.outputs(_PAIRED_DAZ_SCRIPT, runs)):
        assert got == want, "%s: the fp16 2x2 forward under DAZ differs from the reference" % run


def test_paired_streamed_outputs_and_tail():
    """The paired path with out + mask past 16 MiB: values and indices drained between rows with
    streaming stores, the tail zeroed in the rows; the container is prefilled."""
    k, s, p = (2, 2), (2, 2), (0, 0)
    # 66x134 and 70x120: the stream (Wo = 67, 60), 2211 and 2100 outputs a plane: the planes'
    # streamed indices start at many offsets within a line
    for name, shape, nans in (("float32", (16, 64, 66, 134), False), ("float16", (16, 64, 70, 120), False),
                              ("bfloat16", (16, 64, 66, 134), False), ("bfloat16", (16, 64, 70, 120), True)):
        check_streamed(make_input(shape, name, 4, nans), name, k, s, p)


# The pooled-rows path (fp32, 3x3 windows, stride 2, planes without NaN): each input row pooled
# along the row once, then down.  Paddings 0 and 1 on each axis with and without ceil mode; row
# widths whose output rows end before, on and after a step of 16 windows; one output row and
# one output column; a last row or column in no window.
ROWS3_PADDINGS = [(0, 0), (1, 1), (0, 1), (1, 0)]
ROWS3_SHAPES = [(1, 2, 9, 31), (2, 1, 8, 32), (1, 1, 6, 33), (1, 2, 3, 3), (1, 1, 1, 64), (1, 1, 2, 66),
                (1, 1, 35, 67), (1, 1, 4, 97), (1, 1, 5, 130)]
ROWS3_CELLS = (-0.0, 0.0, -1.0, 1.0, -np.inf)


def rows3_inputs():
    """fp32 planes for the pooled-rows path: random with and without NaNs (ties, +-0, +-inf, a
    plane of -inf); windows of ROWS3_CELLS only, so a maximum recurs in a window's rows and
    columns (the first in row order must win, not the first down a column); a NaN only in the
    last row, which no window covers without padding; a lone NaN in the third cell of a row's
    last window."""
    xs = [make_input(shape, "float32", 40 + i, nans) for i, shape in enumerate(ROWS3_SHAPES) for nans in (True, False)]
    rng = np.random.default_rng(50)
    xs.append(np.array(ROWS3_CELLS, np.float32)[rng.integers(0, len(ROWS3_CELLS), (2, 3, 17, 41))])
    outside = make_input((1, 2, 8, 37), "float32", 51, False)
    outside[:, :, -1, :] = np.nan
    xs.append(outside)
    # a lone NaN in the last column a row's last step reads (its windows' third cell, one past
    # the step's 32 loaded elements): W = 64 with padding, 66 and 33 without
    for i, (w, col) in enumerate(((64, 63), (66, 64), (33, 32), (34, 32))):
        last = make_input((1, 1, 5, w), "float32", 52 + i, False)
        last[0, 0, 2, col] = np.nan
        xs.append(last)
    return xs


def rows3_cases():
    """(x, k, s, p, ceil_mode) of the pooled-rows test: every input with every padding, with and
    without ceil mode, where the padded plane holds a window."""
    return [(x, (3, 3), (2, 2), p, ceil_mode) for x in rows3_inputs() for p in ROWS3_PADDINGS
            for ceil_mode in (False, True) if x.shape[2] + 2 * p[0] >= 3 and x.shape[3] + 2 * p[1] >= 3]


_ROWS3_SCRIPT = textwrap.dedent("""
    import hashlib, sys
    sys.path.insert(0, "tests")
    from test_op_max_pool_forward import rows3_cases
    from pyaclnn.functional import max_pool2d_with_mask
    h = hashlib.sha256()
    for x, k, s, p, ceil_mode in rows3_cases():
        out, mask = max_pool2d_with_mask(x, k, s, p, 1, ceil_mode)
        h.update(out.tobytes())
        h.update(mask.tobytes())
    print(h.hexdigest())
""")


def test_pooled_rows_3x3_stride2_on_every_tier_and_thread_count():
    want = digest_of_reference(rows3_cases())
    runs = tiers.sweep(threads=(1, 2))
    for run, got in zip(runs, tiers.outputs(_ROWS3_SCRIPT, runs)):
        assert got == want, "%s: the 3x3 stride-2 fp32 forward's out or mask differs from the reference" % run


def test_pooled_rows_streamed_outputs_and_tail():
    """The pooled-rows path with out + mask past 16 MiB, unpadded and with ceil-mode windows
    past the edge on one axis; the container is prefilled."""
    check_streamed(make_input((13, 64, 67, 69), "float32", 5, False), "float32", (3, 3), (2, 2), (0, 1))


# The 3x3 stride-2 planes in fp16 and bf16 (the pooled-rows path on int16 keys, 32 windows per
# step; rows of more than 2048 outputs: bf16 on the fp32 form, fp16 on the keyed path), against
# PyTorch's CPU max_pool2d: the fp32 inputs above in each dtype, rows ending before, on and after
# a step of 32 windows, a lone NaN of either sign in the cell after a step's 64 elements (the
# last window's third), and planes of subnormal halves (the largest of a window a subnormal, or
# tied with a zero of either sign).
HALF_SUBNORMALS = {
    "float16": (np.uint16, [0x0001, 0x0002, 0x03FF, 0x8001, 0x83FF, 0x0400, 0x8400, 0x0000, 0x8000]),
    "bfloat16": (np.uint16, [0x0001, 0x0002, 0x007F, 0x8001, 0x807F, 0x0080, 0x8080, 0x0000, 0x8000]),
}


def rows3_half_inputs(name):
    """rows3_inputs' planes in fp16 or bf16, the 32-window steps' edges, then two planes of
    subnormals and signed zeros."""
    dtype = DTYPES[name]
    xs = [make_input(shape, name, 60 + i, nans) for i, shape in enumerate(ROWS3_SHAPES) for nans in (True, False)]
    rng = np.random.default_rng(70)
    xs.append(np.array(ROWS3_CELLS, np.float32)[rng.integers(0, len(ROWS3_CELLS), (2, 3, 17, 41))].astype(dtype))
    outside = make_input((1, 2, 8, 37), name, 71, False)
    outside[:, :, -1, :] = np.nan
    xs.append(outside)
    word, subnormals = HALF_SUBNORMALS[name]
    negative_nan = np.array([0xFE00 if name == "float16" else 0xFFC0], word).view(dtype)[0]
    # (64, 63) ... (34, 32): the 16-window steps' edges; (65, 64) ... (130, 129): the 32-window
    # steps' (the last window's third cell one past a step's 64 elements, padded or not)
    for i, (w, col) in enumerate(((64, 63), (66, 64), (33, 32), (34, 32), (65, 64), (129, 128), (128, 127),
                                  (130, 129))):
        last = make_input((1, 1, 5, w), name, 72 + i, False)
        last[0, 0, 2, col] = negative_nan if i % 2 else np.nan
        xs.append(last)
    for i, shape in enumerate(((1, 2, 5, 190), (1, 1, 3, 194), (1, 1, 3, 4101))):
        xs.append(make_input(shape, name, 80 + i, False))
    for i, shape in enumerate(((1, 2, 9, 35), (1, 1, 12, 66))):
        xs.append(np.array(subnormals, word)[rng.integers(0, len(subnormals), shape)].view(dtype))
    return xs


def rows3_half_cases():
    return [(x, (3, 3), (2, 2), p, ceil_mode) for name in ("float16", "bfloat16") for x in rows3_half_inputs(name)
            for p in ROWS3_PADDINGS for ceil_mode in (False, True)
            if x.shape[2] + 2 * p[0] >= 3 and x.shape[3] + 2 * p[1] >= 3]


def torch_out_and_mask(x, k, s, p, ceil_mode):
    """out and the mask container from PyTorch's CPU max_pool2d (return_indices): its indices as
    the mask's int32 stream, and out as the input's bits at them - PyTorch's values, whose NaNs
    come back with its own payload, must be those numbers (NaN where NaN, zeros' signs too)."""
    import torch
    import torch.nn.functional as F
    from op_helpers import assert_bits, from_torch, to_torch
    got, index = F.max_pool2d(to_torch(x), k, s, p, ceil_mode=ceil_mode, return_indices=True)
    index = index.numpy()
    values = np.ascontiguousarray(ref.max_pool_values(x, index))
    assert_bits(from_torch(got, x.dtype), values, "torch's values at its indices", nan_sign_free=True)
    return values, ref.max_pool_mask(index, k)


_ROWS3_HALF_SCRIPT = _ROWS3_SCRIPT.replace("rows3_cases", "rows3_half_cases")


def assert_torch_bits_on_every_run(cases, script, what):
    """The script's digest of out + mask over the cases, on every tier, at 1 and 2 threads and
    in both fp16 forms, against PyTorch's."""
    import torch
    torch.set_num_threads(1)
    h = hashlib.sha256()
    for case in cases:
        for part in torch_out_and_mask(*case):
            h.update(part.tobytes())
    want = h.hexdigest()
    runs = sweep_both_fp16_forms()
    for run, got in zip(runs, tiers.outputs(script, runs)):
        assert got == want, "%s: the %s forward's out or mask differs from PyTorch's" % (run, what)


def test_3x3_stride2_half_precision_against_torch_on_every_tier_and_thread_count():
    assert_torch_bits_on_every_run(rows3_half_cases(), _ROWS3_HALF_SCRIPT, "3x3 stride-2 fp16/bf16")


def paired_half_cases():
    return [(x, (2, 2), (2, 2), (0, 0), False) for name in ("float16", "bfloat16") for x in paired_inputs(name)]


_PAIRED_HALF_SCRIPT = _ROWS3_SCRIPT.replace("rows3_cases", "paired_half_cases")


def test_paired_half_precision_against_torch_in_both_fp16_forms():
    """The paired path's fp16 and bf16 inputs against PyTorch's CPU max_pool2d, fp16 both with
    vcmpph (where the CPU has AVX512-FP16) and on int16 keys."""
    assert_torch_bits_on_every_run(paired_half_cases(), _PAIRED_HALF_SCRIPT, "2x2 stride-2 fp16/bf16")


def test_3x3_stride2_half_precision_streamed_against_torch():
    """fp16 and bf16 3x3 stride-2 planes with out + mask past 16 MiB (values and indices drained
    between rows, the tail zeroed in the rows), ceil-mode windows past the edge on one axis; the
    container and out are prefilled."""
    import pyaclnn
    k, s, p = (3, 3), (2, 2), (0, 1)
    for name in ("float16", "bfloat16"):
        x = make_input((14, 64, 67, 69), name, 6, False)
        want_out, want_mask = torch_out_and_mask(x, k, s, p, False)
        assert want_mask.nbytes >= 16 << 20
        with pyaclnn.Tensor.from_numpy(x) as xt, \
                pyaclnn.Tensor.empty(want_out.shape, DTYPES[name], fill=7) as out, \
                pyaclnn.Tensor.empty(want_mask.shape, np.int8, fill=-1) as mask:
            pyaclnn.run_op("MaxPool2dWithMask", xt, list(k), list(s), list(p), [1, 1], False, out, mask)
            assert out.numpy().tobytes() == want_out.tobytes(), name
            assert np.array_equal(mask.numpy(), want_mask), name
