"""aclrtRandomNumAsync (docs/runtime.md, "Random-number tasks").

The reference is an independent NumPy Philox4x32-10 written from Salmon et al. 2011 (checked
against the paper's known-answer vectors), with the documented conversions written again here:
u = (w >> 8) * 2^-24; uniform floats min + u * (max - min) in float32; integers
min + w mod (max - min) (two words, low first, for 64-bit types); Box-Muller normals from word
pairs, truncated ones rejecting |z| > 2; dropout bit i set when u >= ratio.  Whole blocks are
drawn from the 128-bit little-endian counter in device memory, which advances by the blocks used.
"""
import ml_dtypes
import numpy as np
import pytest

from pyaclnn import ffi, lib

DROPOUT, UNIFORM, NORMAL, TRUNCATED = 0, 1, 2, 3
INVALID_PARAM, RT_PARAM_INVALID, FEATURE_NOT_SUPPORT = 100000, 107000, 207000
MASK32 = np.uint64(0xFFFFFFFF)


def philox(counters, key):
    """Philox4x32-10 of each row of `counters` (n x 4 words, least significant first)."""
    c = [counters[:, i].astype(np.uint64) for i in range(4)]
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    for _ in range(10):
        p0 = np.uint64(0xD2511F53) * c[0]
        p1 = np.uint64(0xCD9E8D57) * c[2]
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ k0, p1 & MASK32, (p0 >> np.uint64(32)) ^ c[3] ^ k1, p0 & MASK32]
        k0 = (k0 + np.uint64(0x9E3779B9)) & MASK32
        k1 = (k1 + np.uint64(0xBB67AE85)) & MASK32
    return np.stack(c, axis=1).astype(np.uint32)


def words(start, seed, blocks):
    """The word stream of `blocks` blocks from the 128-bit counter `start`."""
    values = [(start + i) % (1 << 128) for i in range(blocks)]
    counters = np.array([[(v >> (32 * j)) & 0xFFFFFFFF for j in range(4)] for v in values], dtype=np.uint64)
    return philox(counters, (seed & 0xFFFFFFFF, seed >> 32)).reshape(-1)


def unit(w):
    return (w >> np.uint32(8)).astype(np.float32) * np.float32(2.0 ** -24)


def box_muller(w):
    u1 = ((w[0::2] >> np.uint32(8)).astype(np.float64) + 1) * 2.0 ** -24
    u2 = (w[1::2] >> np.uint32(8)).astype(np.float64) * 2.0 ** -24
    r = np.sqrt(-2.0 * np.log(u1))
    return np.stack([r * np.cos(2 * np.pi * u2), r * np.sin(2 * np.pi * u2)], axis=1).reshape(-1)


def test_philox_known_answers():
    """The paper's (Random123's) known-answer vectors for Philox4x32-10."""
    cases = [
        ([0, 0, 0, 0], (0, 0), [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
        ([0xFFFFFFFF] * 4, (0xFFFFFFFF, 0xFFFFFFFF), [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
        ([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], (0xA4093822, 0x299F31D0),
         [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]),
    ]
    for ctr, key, want in cases:
        np.testing.assert_array_equal(philox(np.array([ctr], dtype=np.uint64), key)[0], np.uint32(want))


FLOATS = {"float32": (lambda: lib.ACL_FLOAT, np.float32), "float16": (lambda: lib.ACL_FLOAT16, np.float16),
          "bfloat16": (lambda: lib.ACL_BF16, ml_dtypes.bfloat16)}
INTS = {"int32": (lambda: lib.ACL_INT32, np.int32), "uint32": (lambda: lib.ACL_UINT32, np.uint32),
        "int64": (lambda: lib.ACL_INT64, np.int64), "uint64": (lambda: lib.ACL_UINT64, np.uint64)}


class Task:
    """A device result buffer, a 16-byte counter and a stream; builds and runs tasks."""

    def __init__(self, nbytes):
        self.result = self.malloc(nbytes)
        self.counter = self.malloc(16)
        self.nbytes = nbytes
        s = ffi.new("aclrtStream *")
        assert lib.aclrtCreateStream(s) == 0
        self.stream = s[0]
        self.set_counter(0)

    @staticmethod
    def malloc(n):
        out = ffi.new("void **")
        assert lib.aclrtMalloc(out, n, lib.ACL_MEM_MALLOC_HUGE_FIRST) == 0
        return out[0]

    def set_counter(self, value):
        self.put(self.counter, np.frombuffer(value.to_bytes(16, "little"), dtype=np.uint8))

    def get_counter(self):
        return int.from_bytes(self.get(self.counter, 16, np.uint8).tobytes(), "little")

    @staticmethod
    def put(ptr, array):
        buf = ffi.from_buffer(np.ascontiguousarray(array))
        assert lib.aclrtMemcpy(ptr, len(buf), buf, len(buf), lib.ACL_MEMCPY_HOST_TO_DEVICE) == 0

    @staticmethod
    def get(ptr, n, dtype):
        out = np.empty(n, dtype=dtype)
        buf = ffi.from_buffer(out)
        assert lib.aclrtMemcpy(buf, len(buf), ptr, len(buf), lib.ACL_MEMCPY_DEVICE_TO_HOST) == 0
        return out

    def info(self, func, acl_type, seed, num, params):
        t = ffi.new("aclrtRandomNumTaskInfo *")
        t.dataType = acl_type
        t.randomNumFuncParaInfo.funcType = func
        t.randomResultAddr = self.result
        t.randomCounterAddr = self.counter
        slots = {DROPOUT: ["dropoutBitmaskInfo.dropoutRation"], UNIFORM: ["uniformDisInfo.min", "uniformDisInfo.max"],
                 NORMAL: ["normalDisInfo.mean", "normalDisInfo.stddev"]}[min(func, NORMAL)]
        for slot, value in zip(slots, params):
            group, field = slot.split(".")
            set_value(getattr(getattr(t.randomNumFuncParaInfo.paramInfo, group), field), value)
        set_value(t.randomSeed, np.uint64(seed))
        set_value(t.randomNum, np.uint64(num))
        return t

    def run(self, info):
        assert lib.aclrtRandomNumAsync(info, self.stream, ffi.NULL) == 0
        assert lib.aclrtSynchronizeStream(self.stream) == 0

    def close(self):
        lib.aclrtDestroyStream(self.stream)
        lib.aclrtFree(self.result)
        lib.aclrtFree(self.counter)


def set_value(para, value):
    raw = np.array([value]).tobytes()
    para.isAddr = 0
    para.size = len(raw)
    ffi.memmove(para.valueOrAddr, raw, len(raw))


@pytest.fixture
def task(acl):
    made = []

    def make(nbytes=8192):
        made.append(Task(nbytes))
        return made[-1]
    yield make
    for t in made:
        t.close()


def blocks_for(n, per_block):
    return -(-n // per_block)


@pytest.mark.parametrize("name", list(FLOATS))
def test_uniform_float_matches_reference(task, name):
    acl_type, dtype = FLOATS[name][0](), FLOATS[name][1]
    t, n, seed, start = task(), 1001, 0x123456789ABCDEF, (1 << 64) - 3  # the counter carries across words
    t.set_counter(start)
    lo, hi = dtype(-1.5), dtype(4.0)
    t.run(t.info(UNIFORM, acl_type, seed, n, [lo, hi]))
    w = words(start, seed, blocks_for(n, 4))[:n]
    lo32, hi32 = np.float32(lo), np.float32(hi)
    want = (lo32 + unit(w) * (hi32 - lo32)).astype(dtype)
    got = t.get(t.result, n, dtype)
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    assert t.get_counter() == start + blocks_for(n, 4)
    assert abs(float(got.astype(np.float64).mean()) - 1.25) < 0.15


@pytest.mark.parametrize("name", list(INTS))
def test_uniform_int_matches_reference(task, name):
    acl_type, dtype = INTS[name][0](), INTS[name][1]
    wide = np.dtype(dtype).itemsize == 8
    t, n, seed = task(), 513, 7
    lo, hi = (dtype(-1000), dtype(3000)) if np.issubdtype(dtype, np.signedinteger) else (dtype(5), dtype(4005))
    t.run(t.info(UNIFORM, acl_type, seed, n, [lo, hi]))
    per_value = 2 if wide else 1
    w = words(0, seed, blocks_for(n * per_value, 4))[:n * per_value].astype(np.uint64)
    draws = (w[0::2] | (w[1::2] << np.uint64(32))) if wide else w
    want = (int(lo) + (draws % np.uint64(int(hi) - int(lo))).astype(np.int64)).astype(dtype)
    got = t.get(t.result, n, dtype)
    np.testing.assert_array_equal(got, want)
    assert got.min() >= lo and got.max() < hi
    assert abs(got.astype(np.float64).mean() - (float(lo) + float(hi) - 1) / 2) < 120
    assert t.get_counter() == blocks_for(n * per_value, 4)


def test_uniform_int_empty_range_gives_min(task):
    t = task()
    t.run(t.info(UNIFORM, lib.ACL_INT32, 1, 10, [np.int32(42), np.int32(42)]))
    np.testing.assert_array_equal(t.get(t.result, 10, np.int32), np.full(10, 42, np.int32))


@pytest.mark.parametrize("truncated", [False, True])
@pytest.mark.parametrize("name", list(FLOATS))
def test_normal_matches_reference(task, name, truncated):
    acl_type, dtype = FLOATS[name][0](), FLOATS[name][1]
    t, n, seed = task(), 2000, 99
    mean, stddev = dtype(3.0), dtype(2.0)
    t.run(t.info(TRUNCATED if truncated else NORMAL, acl_type, seed, n, [mean, stddev]))
    z = box_muller(words(0, seed, 4 * blocks_for(n, 4)))  # enough pairs for the rejections too
    keep = np.abs(z) <= 2.0 if truncated else np.ones(z.shape, bool)
    used = np.flatnonzero(keep)[n - 1] + 1  # values looked at, kept or not
    z_kept = z[keep][:n]
    want = (float(mean) + float(stddev) * z_kept).astype(np.float32).astype(dtype)
    got = t.get(t.result, n, dtype)
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    assert t.get_counter() == blocks_for(used, 4)
    g = got.astype(np.float64)
    assert abs(g.mean() - 3.0) < 0.2
    if truncated:
        assert g.min() >= 3.0 - 4.0 - 0.05 and g.max() <= 3.0 + 4.0 + 0.05
        assert abs(g.std() - 2.0 * 0.8796) < 0.1  # the standard deviation of N(0,1) cut at +-2
    else:
        assert abs(g.std() - 2.0) < 0.15


@pytest.mark.parametrize("name", list(FLOATS))
def test_dropout_bitmask_matches_reference(task, name):
    acl_type, dtype = FLOATS[name][0](), FLOATS[name][1]
    t, n, seed = task(), 1003, 0
    ratio = dtype(0.4)
    t.put(t.result, np.full(t.nbytes, 0xAB, np.uint8))
    t.run(t.info(DROPOUT, acl_type, seed, n, [ratio]))
    keep = unit(words(0, seed, blocks_for(n, 4))[:n]) >= np.float32(ratio)
    want = np.packbits(keep, bitorder="little")
    got = t.get(t.result, t.nbytes, np.uint8)
    np.testing.assert_array_equal(got[:len(want)], want)
    assert (got[len(want):] == 0xAB).all()  # nothing past ceil(n / 8) bytes
    assert abs(keep.mean() - 0.6) < 0.05
    assert t.get_counter() == blocks_for(n, 4)


def test_counter_advances_between_calls(task):
    """Two tasks of 6 values equal one of 8 blocks' worth only block-wise: each starts a block."""
    t = task()
    info = t.info(UNIFORM, lib.ACL_UINT32, 5, 6, [np.uint32(0), np.uint32(0xFFFFFFFF)])
    t.run(info)
    first = t.get(t.result, 6, np.uint32)
    assert t.get_counter() == 2
    t.run(info)
    second = t.get(t.result, 6, np.uint32)
    assert t.get_counter() == 4
    w = words(0, 5, 4) % np.uint32(0xFFFFFFFF)
    np.testing.assert_array_equal(first, w[:6])
    np.testing.assert_array_equal(second, w[8:14])


def test_params_by_address(task):
    """isAddr = 1: the task reads seed, count and bounds from device memory when it runs."""
    t = task()
    holder = Task.malloc(32)
    try:
        Task.put(holder, np.array([11, 64, 0, 0], dtype=np.uint64))
        Task.put(holder + 16, np.float32([2.0, 3.0]))
        info = t.info(UNIFORM, lib.ACL_FLOAT, 0, 0, [np.float32(0), np.float32(0)])
        fields = [(info.randomSeed, holder), (info.randomNum, holder + 8),
                  (info.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, holder + 16),
                  (info.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, holder + 20)]
        for para, addr in fields:
            set_value(para, np.uint64(int(ffi.cast("uintptr_t", addr))))
            para.isAddr = 1
        t.run(info)
        want = (np.float32(2) + unit(words(0, 11, 16)[:64]) * np.float32(1)).astype(np.float32)
        np.testing.assert_array_equal(t.get(t.result, 64, np.float32), want)
    finally:
        lib.aclrtFree(holder)


def test_sample_uniform_int32_range(task):
    """CANN's 1_random_num_task sample: 128 int32 in [1, 100) from seed 0."""
    t = task()
    t.run(t.info(UNIFORM, lib.ACL_INT32, 0, 128, [np.int32(1), np.int32(100)]))
    got = t.get(t.result, 128, np.int32)
    assert got.min() >= 1 and got.max() < 100


def test_random_checks(task, soc, acl):
    t = task(64)
    host = ffi.new("char[64]")

    def info(**change):
        i = t.info(UNIFORM, lib.ACL_FLOAT, 1, 16, [np.float32(0), np.float32(1)])
        for path, value in change.items():
            obj = i
            *parts, last = path.split("__")
            for p in parts:
                obj = getattr(obj, p)
            setattr(obj, last, value)
        return i
    mf = "randomNumFuncParaInfo__paramInfo__uniformDisInfo"
    cases = [
        ((ffi.NULL, t.stream, ffi.NULL), INVALID_PARAM, "taskInfo"),
        ((info(dataType=lib.ACL_DOUBLE), t.stream, ffi.NULL), INVALID_PARAM, "dataType"),
        ((info(), t.stream, host), RT_PARAM_INVALID, "reserve"),
        ((info(randomNumFuncParaInfo__funcType=4), t.stream, ffi.NULL), RT_PARAM_INVALID, "funcType"),
        ((info(dataType=lib.ACL_INT32, randomNumFuncParaInfo__funcType=NORMAL), t.stream, ffi.NULL),
         RT_PARAM_INVALID, "dataType"),
        ((info(randomCounterAddr=ffi.NULL), t.stream, ffi.NULL), RT_PARAM_INVALID, "randomCounterAddr"),
        ((info(randomResultAddr=ffi.NULL), t.stream, ffi.NULL), RT_PARAM_INVALID, "randomResultAddr"),
        ((info(randomSeed__isAddr=2), t.stream, ffi.NULL), RT_PARAM_INVALID, "randomSeed.isAddr"),
        ((info(randomNum__size=9), t.stream, ffi.NULL), RT_PARAM_INVALID, "randomNum.size"),
        ((info(**{mf + "__min__size": 8}), t.stream, ffi.NULL), RT_PARAM_INVALID, "min.size"),
        ((info(**{mf + "__max__size": 0}), t.stream, ffi.NULL), RT_PARAM_INVALID, "max.size"),
        ((info(randomResultAddr=host), t.stream, ffi.NULL), RT_PARAM_INVALID, "randomResultAddr"),
        ((info(randomCounterAddr=host), t.stream, ffi.NULL), RT_PARAM_INVALID, "randomCounterAddr"),
    ]
    for args, code, word in cases:
        assert lib.aclrtRandomNumAsync(*args) == code, word
        assert word in acl.recent_error_message()
    too_many = info()
    set_value(too_many.randomNum, np.uint64(1 << 24))  # 64 MiB of floats: more than the buffer
    assert lib.aclrtRandomNumAsync(too_many, t.stream, ffi.NULL) == RT_PARAM_INVALID
    for product in ("Ascend910", "Ascend310P", "Ascend950"):
        soc(product)
        assert lib.aclrtRandomNumAsync(info(), t.stream, ffi.NULL) == FEATURE_NOT_SUPPORT
        assert product in acl.recent_error_message()


@pytest.fixture(scope="module")
def check_program():
    import support
    return support.compile_program(support.ROOT / "tests" / "check" / "random_written.c")


def test_check_mode_sees_the_result_written(check_program):
    """Under ACLNN_CHECK a random task's result counts as written, as a fill's: an operator that
    reads it is clean; one that reads past what the task wrote is reported."""
    import support
    env = {"ACLNN_CHECK": "1", "ACLNN_CHECK_LOG": ""}
    clean = support.run_program(check_program, env=env, args=["filled"])
    assert clean.returncode == 0 and "status 0" in clean.stdout, clean.stdout + clean.stderr
    assert "ACLNN_CHECK SUMMARY: 0 errors, 0 warnings" in clean.stderr, clean.stderr
    partial = support.run_program(check_program, env=env, args=["partial"])
    assert "operator reads device memory nobody wrote" in partial.stderr, partial.stderr
    assert f"unwritten: byte {1024 * 4 // 2} of allocation #1 is the first" in partial.stderr


def test_captured_task_draws_anew_at_each_execution(task):
    """A task captured into a model runtime instance runs at each execution: the counter it reads
    is the one the previous execution left, so each execution continues the stream."""
    t = task()
    stream = ffi.new("aclrtStream *")
    assert lib.aclrtCreateStream(stream) == 0
    model = ffi.new("aclmdlRI *")
    try:
        assert lib.aclmdlRICaptureBegin(t.stream, lib.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) == 0
        assert lib.aclrtRandomNumAsync(t.info(UNIFORM, lib.ACL_UINT32, 9, 4, [np.uint32(0), np.uint32(0xFFFFFFFF)]),
                                       t.stream, ffi.NULL) == 0
        assert lib.aclmdlRICaptureEnd(t.stream, model) == 0
        assert t.get_counter() == 0  # captured, not run
        w = words(0, 9, 2) % np.uint32(0xFFFFFFFF)
        for execution in range(2):
            assert lib.aclmdlRIExecuteAsync(model[0], stream[0]) == 0
            assert lib.aclrtSynchronizeStream(stream[0]) == 0
            np.testing.assert_array_equal(t.get(t.result, 4, np.uint32), w[4 * execution:4 * execution + 4])
            assert t.get_counter() == execution + 1
    finally:
        lib.aclmdlRIDestroy(model[0])
        lib.aclrtDestroyStream(stream[0])


def test_unaligned_counter_and_param_block(task):
    """The counter may sit at any byte (the sample's README); randomParaAddr receives the two
    parameters as CANN copies them (8 bytes each, the value's bytes zero-extended)."""
    t = task()
    block = Task.malloc(64)
    try:
        Task.put(block, np.zeros(64, np.uint8))
        info = t.info(UNIFORM, lib.ACL_FLOAT16, 4, 8, [np.float16(1.0), np.float16(2.0)])
        info.randomCounterAddr = ffi.cast("char *", block) + 3
        info.randomParaAddr = ffi.cast("char *", block) + 32
        t.run(info)
        raw = Task.get(block, 64, np.uint8)
        assert int.from_bytes(raw[3:19].tobytes(), "little") == 2
        np.testing.assert_array_equal(raw[32:48].view(np.uint64), [0x3C00, 0x4000])
        want = (np.float32(1) + unit(words(0, 4, 2)[:8]) * np.float32(1)).astype(np.float16)
        np.testing.assert_array_equal(t.get(t.result, 8, np.float16).view(np.uint16), want.view(np.uint16))
    finally:
        lib.aclrtFree(block)


def test_count_by_address_too_large_fails_the_task(task, acl):
    """A count read when the task runs that the result cannot hold fails the task: 107000 at the
    synchronize, nothing written."""
    t = task(64)
    holder = Task.malloc(8)
    try:
        Task.put(holder, np.array([1000], dtype=np.uint64))  # 4000 bytes, past the allocation and its padding
        Task.put(t.result, np.full(64, 0xAB, np.uint8))
        info = t.info(UNIFORM, lib.ACL_FLOAT, 0, 0, [np.float32(0), np.float32(1)])
        set_value(info.randomNum, np.uint64(int(ffi.cast("uintptr_t", holder))))
        info.randomNum.isAddr = 1
        assert lib.aclrtRandomNumAsync(info, t.stream, ffi.NULL) == 0
        assert lib.aclrtSynchronizeStream(t.stream) == RT_PARAM_INVALID
        assert "randomResultAddr" in acl.recent_error_message()
        assert (t.get(t.result, 64, np.uint8) == 0xAB).all()
        assert t.get_counter() == 0
    finally:
        lib.aclrtFree(holder)
