"""`make tsan` in CI: tests/c/test_threads_streams.c against a ThreadSanitizer build of the library
(halt on error).  A file of its own so that pytest's workers run it beside the fuzz run
(tests/test_fuzz_short.py), not after it."""
import subprocess

import support


def test_make_tsan_is_clean():
    result = subprocess.run(["make", "-s", "tsan"], cwd=support.ROOT, capture_output=True, text=True, timeout=900)
    tail = (result.stdout + result.stderr)[-6000:]
    assert result.returncode == 0, tail
    assert "match the single-threaded run bit for bit" in tail, tail
    assert "WARNING: ThreadSanitizer" not in tail, tail
