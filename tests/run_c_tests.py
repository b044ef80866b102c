#!/usr/bin/env python3
"""Builds and runs every tests/c program without pytest (used by `make sanitize`).

Prints one line per program and closes with 'N passed, N failed'; exits non-zero on failure.
"""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import support  # noqa: E402


def main():
    passed = failed = 0
    env = {"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0", "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"}
    for source in support.c_test_sources():
        try:
            exe = support.compile_program(source, out_dir=support.BIN_DIR.parent / "tests-asan"
                                          if support.sanitizing() else None)
            result = support.run_program(exe, env=env)
            ok = result.returncode == 0
            detail = (result.stdout + result.stderr)[-3000:]
        except Exception as exc:  # a compile failure is a test failure
            ok, detail = False, str(exc)
        print(f"{'PASS' if ok else 'FAIL'} {source.name}")
        if not ok:
            print(detail)
        passed += ok
        failed += not ok
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
