"""racecheck orders callbacks and host functions as their stream does (docs/checking.md,
racecheck): host code the stream runs after a launch may read the launch's output; the same read
from the main thread with nothing in between is a race."""
import pytest

import support

CHECK = {"ACLNN_CHECK": "racecheck", "ACLNN_CHECK_EXITCODE": "42", "ACLNN_CHECK_LOG": ""}


@pytest.fixture(scope="module")
def program():
    return support.compile_program(support.ROOT / "tests" / "check" / "callback_reads.c")


@pytest.mark.parametrize("case", ["callback", "hostfunc"])
def test_stream_ordered_host_code_is_clean(program, case):
    result = support.run_program(program, env=CHECK, args=[case])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "wrong values: 0" in result.stdout
    assert "ACLNN_CHECK SUMMARY: 0 errors, 0 warnings" in result.stderr


def test_unordered_read_is_a_race(program):
    result = support.run_program(program, env=CHECK, args=["racy"])
    assert result.returncode == 42, result.stdout + result.stderr
    assert "ACLNN_CHECK ERROR (racecheck)" in result.stderr
