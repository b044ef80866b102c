"""Benchmark harness: pyaclnn operators against PyTorch, interleaved in one process.

Registering a case
------------------
Drop a module ``bench/cases_<op>.py`` next to this file that defines ``CASES``, a list of
:class:`BenchCase`::

    import numpy as np, torch, pyaclnn
    from harness import BenchCase, op_runner

    def make_prelu_fp32():
        x = np.random.default_rng(0).standard_normal((32, 64, 56, 56)).astype(np.float32)
        w = np.full(64, 0.25, np.float32)
        tx, tw = pyaclnn.Tensor.from_numpy(x), pyaclnn.Tensor.from_numpy(w)
        out = pyaclnn.Tensor.empty(x.shape, np.float32)
        ours = op_runner("Prelu", tx, tw, out)          # phase 1 once, repeatable executor
        X, W = torch.from_numpy(x), torch.from_numpy(w)
        Y = torch.empty_like(X)
        theirs = lambda: torch.ops.aten._prelu_kernel(X, W)   # or any torch call with out=
        bytes_moved = 2 * x.nbytes + w.nbytes           # what an ideal kernel reads + writes
        return ours, theirs, bytes_moved

    CASES = [BenchCase(name="prelu 32x64x56x56", dtype="float32", make=make_prelu_fp32)]

``make()`` runs inside the measuring process (after the thread count is set) and returns
``(ours, theirs, bytes_moved)`` or ``(ours, theirs, bytes_moved, cleanup)``:

* ``ours()``: one complete run of our kernel - phase 2 plus synchronize, with every output and the
  workspace allocated beforehand and a repeatable executor (:func:`op_runner` builds exactly that);
* ``theirs()``: the PyTorch equivalent, outputs preallocated (``out=`` overloads) where torch has
  them, so neither side is charged for allocating;
* ``bytes_moved``: the bytes an ideal kernel must read and write; it gives GB/s and the fraction
  of this machine's STREAM copy bandwidth;
* ``cleanup()`` (optional): frees what make() created.

``BenchCase(quick=False)`` leaves a case out of ``--quick`` runs.

How a case is timed
-------------------
``run.py`` starts one worker process per thread count (1 and all cores) with ``ACLNN_NUM_THREADS``
set (the library reads it when it starts) and ``torch.set_num_threads`` called; the workers take
turns case by case (one measures while the others wait), so a case's rows at each thread count
are taken seconds apart.  In the worker,
each case is warmed up, a call count per sample is calibrated for each side so one sample of
each lasts about 20 ms, and then ours and theirs are timed *alternately* (ours first on even repetitions,
theirs first on odd ones) so drifting machine load hits both equally.  The reported time is the
median per call over the repetitions.  The same worker measures STREAM copy bandwidth (the best
of torch's ``copy_`` and glibc ``memmove`` on as many threads) on two arrays far larger than the
caches: once after each repetition's pair, so each of our samples has a bandwidth of its own
moment (the fraction of STREAM is the median of the per-repetition ratios, paired_fraction), and
as the best of 8 copies just before and after the case (the earlier, looser pairing, kept for
comparison).
"""

import dataclasses
import glob
import importlib.util
import os
import statistics
import sys
import time
import traceback

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))


@dataclasses.dataclass
class BenchCase:
    """One benchmark: a name for the table, the dtype name, and the factory described above.

    ``table`` is "kernels" (phase 2 against torch's kernel, outputs preallocated) or "python"
    (whole pyaclnn.functional calls, bench/cases_python_calls.py); ``bar`` is the speed-up the
    project promises for the row, if any; ``stream_bar`` the fraction of the same-moment STREAM
    copy it promises (memory-bound kernels), at the thread counts in ``stream_bar_threads``."""
    name: str
    dtype: str
    make: object
    quick: bool = True
    module: str = ""
    table: str = "kernels"
    bar: float = None
    stream_bar: float = None
    stream_bar_threads: tuple = (1, 2)


class OpRunner:
    """Phase 2 + synchronize of an operator whose phase 1 ran once (repeatable executor).

    Calling the runner launches the operator on ``stream`` and waits for it.  ``close()`` destroys
    the executor and frees the workspace.
    """

    def __init__(self, op, *args, stream=None):
        import pyaclnn
        name = op if op.startswith("aclnn") else "aclnn" + op
        self.phase2 = getattr(pyaclnn, name)
        self.workspace_size, self.executor = getattr(pyaclnn, name + "GetWorkspaceSize")(*args)
        self.executor.set_repeatable()
        self.workspace = pyaclnn.DeviceBuffer(self.workspace_size) if self.workspace_size else None
        self.stream = stream
        self.args = args
        self._synchronize = pyaclnn.synchronize

    def __call__(self):
        self.phase2(self.workspace, self.workspace_size, self.executor, self.stream)
        self._synchronize(self.stream)

    def close(self):
        self.executor.close()
        if self.workspace is not None:
            self.workspace.close()


def op_runner(op, *args, stream=None):
    """An :class:`OpRunner` for ``op`` ("Prelu" or "aclnnPrelu") with phase-1 ``args``."""
    return OpRunner(op, *args, stream=stream)


# ---- the built-in self-test case: a plain device copy --------------------------------------------
def _make_memcpy_case(nbytes):
    def make():
        import numpy as np
        import torch
        import pyaclnn
        from pyaclnn import lib
        src = pyaclnn.DeviceBuffer(nbytes)
        dst = pyaclnn.DeviceBuffer(nbytes)
        src.copy_from_host(np.ones(nbytes, np.uint8))
        dst.memset(0)
        kind = lib.ACL_MEMCPY_DEVICE_TO_DEVICE
        memcpy = lib.aclrtMemcpy
        src_ptr, dst_ptr = src.ptr, dst.ptr

        def ours():
            if memcpy(dst_ptr, nbytes, src_ptr, nbytes, kind) != 0:
                raise RuntimeError("aclrtMemcpy failed: %s" % pyaclnn.recent_error_message())

        a = torch.ones(nbytes, dtype=torch.uint8)
        b = torch.zeros(nbytes, dtype=torch.uint8)

        def theirs():
            b.copy_(a)

        def cleanup():
            src.close()
            dst.close()

        return ours, theirs, 2 * nbytes, cleanup
    return make


BUILTIN_CASES = [
    BenchCase(name="memcpy 64 MiB (aclrtMemcpy D2D vs copy_)", dtype="uint8",
              make=_make_memcpy_case(64 << 20), module="harness"),
]


def discover(bench_dir=BENCH_DIR):
    """All cases: the built-in ones, then every bench/cases_*.py module's CASES.

    Returns (cases, errors) where errors lists (module file, traceback text) for modules that
    failed to import; a broken module does not stop the others.
    """
    if bench_dir not in sys.path:
        sys.path.insert(0, bench_dir)
    cases = list(BUILTIN_CASES)
    errors = []
    for path in sorted(glob.glob(os.path.join(bench_dir, "cases_*.py"))):
        module_name = os.path.splitext(os.path.basename(path))[0]
        try:
            spec = importlib.util.spec_from_file_location(module_name, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            for case in getattr(module, "CASES", []):
                if not case.module:
                    case.module = module_name
                cases.append(case)
        except Exception:
            errors.append((path, traceback.format_exc()))
    return cases, errors


# ---- timing ------------------------------------------------------------------------------------
def _calibrate(fn, target_seconds):
    """Calls per sample so that one sample takes about target_seconds."""
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    return max(1, int(target_seconds / once))


def _sample(fn, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def time_samples(ours, theirs, repetitions, warmup=2, target_seconds=0.02, between=None):
    """Per-repetition seconds per call of ours() and theirs(), measured alternately.

    Each side gets its own call count, so each side's sample lasts about target_seconds. A
    shared count (the smaller one) would make a 1 ms call of ours a sample of one call right
    after torch's 10-30 ms call, and on the reference host a ~1 ms memory-bound call that
    starts after milliseconds of little memory traffic runs at up to half speed (the
    same kernel back to back runs at full speed): the sample would time the host's memory
    clock ramping up, not the kernel, and STREAM, which the fraction divides by, is measured
    in steady state. The ramp lasts about 2-3 such calls (fp16 Im2col N8 C256 28x28, 1 thread:
    1.3 ms for each of the first two calls after torch's, 0.85-0.9 ms from the fourth on), so
    a sample of 20 ms is mostly steady state where one of 5 ms was not.

    ``between()``, if given, is called once per repetition right after the pair (the STREAM copy
    of that moment) and its values are returned alongside. Returns (ours seconds list, theirs
    seconds list, between values list, (ours calls, theirs calls))."""
    for _ in range(warmup):
        ours()
        theirs()
    ours_calls = _calibrate(ours, target_seconds)
    theirs_calls = _calibrate(theirs, target_seconds)
    ours_times, theirs_times, between_values = [], [], []
    for rep in range(repetitions):
        if rep % 2 == 0:
            ours_times.append(_sample(ours, ours_calls))
            theirs_times.append(_sample(theirs, theirs_calls))
        else:
            theirs_times.append(_sample(theirs, theirs_calls))
            ours_times.append(_sample(ours, ours_calls))
        if between is not None:
            between_values.append(between())
    return ours_times, theirs_times, between_values, (ours_calls, theirs_calls)


def time_pair(ours, theirs, repetitions, warmup=2, target_seconds=0.02):
    """Median seconds per call of ours() and theirs() (time_samples). Returns (ours seconds,
    theirs seconds, (ours calls, theirs calls))."""
    ours_times, theirs_times, _, calls = time_samples(ours, theirs, repetitions, warmup, target_seconds)
    return statistics.median(ours_times), statistics.median(theirs_times), calls


def paired_fraction(bytes_moved, ours_times, stream_gbps):
    """The median over repetitions of our bandwidth in a repetition over the STREAM copy of the
    same repetition: a neighbour's burst that slows one repetition slows both sides of its
    ratio, where a single STREAM figure taken before and after the case would judge the slowed
    repetitions against a moment they did not share."""
    return statistics.median(bytes_moved / t / 1e9 / gbps for t, gbps in zip(ours_times, stream_gbps))


class StreamCopy:
    """STREAM copy bandwidth (GB/s, read + write counted) on ``threads`` threads.

    Each sample is the best of torch's ``copy_`` and glibc's ``memmove`` (through ctypes, which
    releases the GIL, on ``threads`` Python threads each copying one slice); both arrays are
    touched first, so no page faults are timed.  The arrays and the thread pool are made once, so
    the bandwidth can be sampled again next to every case: on this shared machine it drifts by
    up to 2x over minutes, and a case is fairly judged only against the bandwidth of its moment.
    """

    def __init__(self, threads, nbytes):
        from concurrent.futures import ThreadPoolExecutor
        import torch
        self.nbytes = nbytes
        self.src = torch.ones(nbytes // 4, dtype=torch.float32)
        self.dst = torch.zeros(nbytes // 4, dtype=torch.float32)
        chunk = (nbytes // threads) & ~63
        self.slices = [(i * chunk, chunk if i < threads - 1 else nbytes - i * chunk)
                       for i in range(threads)]
        self.pool = ThreadPoolExecutor(max_workers=threads)

    def best(self, repetitions):
        """Best GB/s over ``repetitions`` copies with each of the two methods."""
        import ctypes
        src, dst = self.src.data_ptr(), self.dst.data_ptr()
        best = 0.0
        for _ in range(repetitions):
            start = time.perf_counter()
            self.dst.copy_(self.src)
            best = max(best, 2 * self.nbytes / (time.perf_counter() - start) / 1e9)
        for _ in range(repetitions):
            start = time.perf_counter()
            list(self.pool.map(lambda s: ctypes.memmove(dst + s[0], src + s[0], s[1]),
                               self.slices))
            best = max(best, 2 * self.nbytes / (time.perf_counter() - start) / 1e9)
        return best

    def close(self):
        self.pool.shutdown()


def run_worker(threads, quick, only=None, turn=None, table=None):
    """Measure every case in this process (env already set by the parent), or only those of
    ``table`` ("kernels" or "python") when given; return a dict.

    ``turn()``, if given, is called before the start's STREAM copy and before each case, and
    returns when this worker may measure: run.py uses it to take the thread counts' workers in
    turns, case by case (run.py: run_in_turns)."""
    turn = turn or (lambda: None)
    import torch
    torch.set_num_threads(threads)
    import pyaclnn
    pyaclnn.init()

    repetitions = 5 if quick else 15
    result = {"threads": threads, "torch_threads": torch.get_num_threads(), "cases": [],
              "errors": []}
    stream = StreamCopy(threads, (64 if quick else 256) << 20)
    turn()
    result["stream_gbps"] = stream.best(5 if quick else 10)
    cases, errors = discover()
    result["errors"].extend("%s: %s" % e for e in errors)
    for case in cases:
        if quick and not case.quick:
            continue
        if only and not any(word in case.name for word in only):
            continue
        if table is not None and case.table != table:
            continue
        turn()
        entry = {"name": case.name, "dtype": case.dtype, "module": case.module,
                 "table": case.table, "bar": case.bar, "started": time.time(),
                 "stream_bar": case.stream_bar if threads in case.stream_bar_threads else None,
                 "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY")}
        ours = theirs = cleanup = None
        try:
            made = case.make()
            ours, theirs, bytes_moved = made[:3]
            cleanup = made[3] if len(made) > 3 else None
            # The STREAM copy of each repetition's moment (one copy per method, right after the
            # pair), and the best of 8 copies just before and just after the case.
            stream_before = stream.best(2)
            ours_t, theirs_t, stream_t, calls = time_samples(ours, theirs, repetitions,
                                                             between=lambda: stream.best(1))
            entry.update(ours_ms=statistics.median(ours_t) * 1e3,
                         torch_ms=statistics.median(theirs_t) * 1e3, bytes=int(bytes_moved),
                         calls_per_sample=calls,
                         stream_gbps=statistics.median(stream_t),
                         of_stream=paired_fraction(bytes_moved, ours_t, stream_t),
                         stream_best_gbps=max(stream_before, stream.best(2)))
        except Exception:
            entry["error"] = traceback.format_exc()
        finally:
            try:
                if cleanup is not None:
                    cleanup()
                for obj in (ours, theirs):
                    if hasattr(obj, "close"):
                        obj.close()
            except Exception:
                entry.setdefault("error", traceback.format_exc())
        entry["ended"] = time.time()
        result["cases"].append(entry)
    stream.close()
    return result
