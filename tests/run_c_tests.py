#!/usr/bin/env python3
"""Builds and runs every tests/c program without pytest (used by `make sanitize`).

Prints one line per program and closes with 'N passed, N failed'; exits non-zero on failure.
"""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import support  # noqa: E402


ENV = {"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0", "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"}


def run_one(source):
    """(source, ok, detail) for one program."""
    try:
        exe = support.compile_program(source, out_dir=support.BIN_DIR.parent / "tests-asan"
                                      if support.sanitizing() else None)
        result = support.run_program(exe, env=ENV)
        return source, result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    except Exception as exc:  # a compile failure is a test failure
        return source, False, str(exc)


def main():
    return support.report_results(map(run_one, support.c_test_sources()))

if __name__ == "__main__":
    sys.exit(main())
