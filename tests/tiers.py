"""The library's SIMD tiers, and running a check under one of them.

The library chooses its kernels once per process, from the CPU and two environment variables;
its pool size (ACLNN_NUM_THREADS) and its store policy (ACLNN_STREAMING_STORES) are fixed when it
starts too.  So a kernel test that covers the tiers runs a Python script in a fresh process per
configuration (`Run`), and every such test goes through each tier in TIERS: `every_tier` (which
`outputs` and `assert_same_output` apply) refuses a list of runs that leaves one out.  The
operator C programs run on each tier too (tests/test_c_programs.py).
"""
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass

from support import ROOT

# tier -> the environment that selects it (and the variables involved, which a run's process
# does not inherit from the test's)
TIERS = {
    "best": {},                            # what the CPU has: AVX-512 where present, else AVX2
    "avx2": {"ACLNN_NO_AVX512": "1"},      # the AVX2 + F16C kernels, even on an AVX-512 CPU
    "portable": {"ACLNN_NO_SIMD": "1"},    # the plain C loops
}
TIER_VARIABLES = {name for env in TIERS.values() for name in env}
AVX512 = {"avx512f", "avx512bw", "avx512vl", "avx512dq"}   # what the library calls AVX-512


def has_avx512():
    """Whether the best tier is the AVX-512 one on this CPU."""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return AVX512 <= set(line.split(":", 1)[1].split())
    return False


@dataclass(frozen=True)
class Run:
    """One process configuration: a tier, the pool size, the store policy (None: the library's
    own choice) and any other environment settings as (name, value) pairs."""
    tier: str = "best"
    threads: int = None
    streaming: int = None
    extra: tuple = ()

    def env(self):
        env = dict(TIERS[self.tier])
        if self.threads is not None:
            env["ACLNN_NUM_THREADS"] = str(self.threads)
            # small launches would run on one thread (base/nn_base.h, NN_SMALL_WORK_BYTES): a
            # thread-count test shares even its small shapes out over the pool
            env["ACLNN_SMALL_WORK_BYTES"] = "0"
        if self.streaming is not None:
            env["ACLNN_STREAMING_STORES"] = str(self.streaming)
        env.update(self.extra)
        return env

    def __str__(self):
        parts = [self.tier]
        if self.threads is not None:
            parts.append("%d threads" % self.threads)
        if self.streaming is not None:
            parts.append("streaming %s" % ("on" if self.streaming else "off"))
        parts += ["%s=%s" % kv for kv in self.extra]
        return ", ".join(parts)


def sweep(threads=(1, 2, 3), tier_threads=2):
    """The runs of a thread-count and tier invariance test: the best tier at each of `threads`,
    then every other tier at `tier_threads`."""
    return ([Run(threads=t) for t in threads] +
            [Run(tier, threads=tier_threads) for tier in TIERS if tier != "best"])


def run_script(script, run, args=(), timeout=300):
    """Runs `python -c script args...` under `run` (from the checkout's root); returns its
    stripped stdout.  The process must exit 0."""
    env = {name: value for name, value in os.environ.items() if name not in TIER_VARIABLES}
    env.update(run.env())
    res = subprocess.run([sys.executable, "-c", script, *map(str, args)], env=env, capture_output=True,
                         text=True, timeout=timeout, cwd=ROOT)
    assert res.returncode == 0, "%s:\n%s" % (run, res.stderr)
    return res.stdout.strip()


def every_tier(runs):
    """The runs, after checking that they cover every tier in TIERS."""
    missing = set(TIERS) - {run.tier for run in runs}
    assert not missing, "the runs leave out the tiers %s" % sorted(missing)
    return runs


def outputs(script, runs, timeout=300):
    """The stdout of `script` under each run (which together must cover every tier)."""
    return [run_script(script, run, timeout=timeout) for run in every_tier(runs)]


def assert_same_output(script, runs, timeout=300):
    """The script (which prints a digest of its results) prints the same under every run."""
    outs = outputs(script, runs, timeout)
    assert len(set(outs)) == 1, ["%s: %s" % pair for pair in zip(map(str, runs), outs)]


def npz_results(script, runs, inputs, folder, timeout=300):
    """{run: {name: array}}: `inputs` ({name: array}) saved to folder/in.npz, then `script` run under
    each run (which together must cover every tier) with the arguments (that file, an output
    .npz), its output read back.  One process per run serves every case."""
    import numpy as np
    src, dst = folder / "in.npz", folder / "out.npz"
    np.savez(src, **inputs)
    by_run = {}
    for run in every_tier(runs):
        run_script(script, run, args=(src, dst), timeout=timeout)
        by_run[run] = dict(np.load(dst))
    return by_run


def product_script(call):
    """A script for npz_results that runs one operator call per input on its product: an input
    named "<soc>/<dtype>/..." (dtype fp32, fp16 or bf16; names starting "meta_" are skipped) is
    given to `call`, a Python expression of `x` (the input in its dtype), `meta` (the float64
    array stored under "meta_<name>"), `name` and `DT` (the dtypes by name), with `F` =
    pyaclnn.functional, after pyaclnn.set_soc_version(soc); its result is saved under the name
    (2-byte results as uint16)."""
    return textwrap.dedent("""
        import sys, numpy as np, ml_dtypes, pyaclnn
        from pyaclnn import functional as F
        DT = {"fp32": np.float32, "fp16": np.float16, "bf16": ml_dtypes.bfloat16}
        src, dst = sys.argv[1:]
        data = np.load(src, allow_pickle=False)
        outs = {}
        for name in data.files:
            if name.startswith("meta_"):
                continue
            soc, dt = name.split("/")[:2]
            pyaclnn.set_soc_version(soc)
            x, meta = data[name].view(DT[dt]), data["meta_" + name]
            out = %s
            outs[name] = out.view(np.uint16) if out.dtype.itemsize == 2 else out
        np.savez(dst, **outs)
    """) % call
