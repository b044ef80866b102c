"""Sanitizer runs in CI: a short bounded fuzz run (`make fuzz-short`: libFuzzer + ASan + UBSan
over both phases of every operator, starting from the checked-in corpus fuzz/corpus); `make tsan`
is tests/test_tsan.py. Any property violation, sanitizer report, leak or timeout fails the run.
The long run is `make fuzz FUZZ_SECONDS=...` (docs/robustness.md)."""
import subprocess

import support


def test_fuzz_short_run_is_clean():
    result = subprocess.run(["make", "-s", "fuzz-short"], cwd=support.ROOT, capture_output=True, text=True,
                            timeout=900)
    tail = (result.stdout + result.stderr)[-6000:]
    assert result.returncode == 0, tail
    assert "Done" in tail and "runs in" in tail, tail


def test_checked_in_corpus_replays_clean():
    """Every seed (including past findings) still passes on its own, quickly."""
    subprocess.run(["make", "-s", "fuzz-build"], cwd=support.ROOT, check=True, capture_output=True, timeout=900)
    result = subprocess.run(["build-fuzz/fuzz_ops", "-runs=0", "-artifact_prefix=build-fuzz/", "fuzz/corpus"],
                            cwd=support.ROOT, capture_output=True, text=True, timeout=300,
                            env={"UBSAN_OPTIONS": "halt_on_error=1:suppressions=fuzz/ubsan.supp",
                                 "ASAN_OPTIONS": "detect_leaks=1:allocator_may_return_null=1",
                                 "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]

