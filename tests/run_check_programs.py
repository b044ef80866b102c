#!/usr/bin/env python3
"""Builds every tests/c program and every example (the programs tests/compat builds with CANN's
recipe) and runs each in checking mode (ACLNN_CHECK=1, docs/checking.md): a program fails when it
exits non-zero, prints an "ACLNN_CHECK ERROR" report, or exits with ACLNN_CHECK_EXITCODE.
Warnings are allowed (host handles left at exit, product warnings).  Used by `make check-test`.

Prints one line per program and closes with 'N passed, N failed'; exits non-zero on failure.
"""
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import support  # noqa: E402

EXIT_CODE = 86  # ACLNN_CHECK_EXITCODE: no program exits with it on its own
CHECK_ENV = {"ACLNN_CHECK": "1", "ACLNN_CHECK_EXITCODE": str(EXIT_CODE), "ACLNN_NUM_THREADS": "2"}
# The test programs make calls fail on purpose to test their statuses: failed calls are not
# reported for them (docs/checking.md, "Failed calls").  The examples, like any CANN program,
# make none, so for them a failed call is an error.
TEST_PROGRAM_ENV = dict(CHECK_ENV, ACLNN_CHECK_API_ERRORS="0")


# Programs that leave something behind on purpose to test another feature, with the checking
# errors that must come out of it (and make the program exit with EXIT_CODE).
EXPECTED_ERRORS = {
    # aclFinalize releases an event the program never destroyed
    "test_runtime_event.c": ["ACLNN_CHECK ERROR (leakcheck): aclrtEvent not destroyed at aclFinalize"],
    # aclFinalize while threads wait on a stream (three times) and on an event: their objects
    # are aclFinalize's to release
    "test_runtime_teardown.c": ["ACLNN_CHECK ERROR (leakcheck): aclrtStream not destroyed at aclFinalize"] * 3
                               + ["ACLNN_CHECK ERROR (leakcheck): aclrtEvent not destroyed at aclFinalize"],
}


def sources():
    return support.c_test_sources() + sorted(p for p in support.EXAMPLES.glob("*.c*"))


def run_one(source):
    """(ok, detail) for one program."""
    try:
        out_dir = support.BIN_DIR / ("examples" if source.parent == support.EXAMPLES else "")
        exe = support.compile_program(source, out_dir=out_dir)
        result = support.run_program(exe, env=CHECK_ENV if source.parent == support.EXAMPLES else TEST_PROGRAM_ENV)
    except Exception as exc:  # a compile failure or a time-out is a failure
        return False, str(exc)
    output = result.stdout + result.stderr
    errors = output.count("ACLNN_CHECK ERROR")
    expected = EXPECTED_ERRORS.get(source.name, [])
    if expected:
        ok = (result.returncode == EXIT_CODE and errors == len(expected)
              and all(output.count(line) == expected.count(line) for line in expected))
    else:
        ok = result.returncode == 0 and errors == 0
    detail = f"exit {result.returncode}, {errors} checking error(s)\n{output[-6000:]}"
    return ok, detail


def main():
    chosen = [s for s in sources() if not sys.argv[1:] or any(a in s.name for a in sys.argv[1:])]
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = ((source, *outcome) for source, outcome in zip(chosen, pool.map(run_one, chosen)))
        return support.report_results(results, " (ACLNN_CHECK=1)")

if __name__ == "__main__":
    sys.exit(main())
