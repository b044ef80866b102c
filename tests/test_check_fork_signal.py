"""The checking mode never changes what a legal program does (docs/checking.md, "What checking
does not change"): a forked child has its own copy of device memory and no leak report for what
it inherited; a SIGSEGV the program raises ends it as without checking."""
import signal

import pytest

import support

CHECK = {"ACLNN_CHECK": "1", "ACLNN_CHECK_EXITCODE": "42", "ACLNN_CHECK_LOG": ""}


@pytest.fixture(scope="module")
def program():
    return support.compile_program(support.ROOT / "tests" / "check" / "fork_signal.c")


@pytest.mark.parametrize("env", [{}, CHECK], ids=["unchecked", "checked"])
def test_child_writes_stay_in_the_child(program, env):
    result = support.run_program(program, env=env, args=["fork_write"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "child exit 0, parent blocks changed: 0" in result.stdout
    assert "ACLNN_CHECK ERROR" not in result.stderr


def test_child_that_exits_reports_no_leak(program):
    result = support.run_program(program, env=CHECK, args=["fork_exit"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "child exit 0" in result.stdout
    assert "not freed" not in result.stderr and "not destroyed" not in result.stderr
    assert result.stderr.count("ACLNN_CHECK SUMMARY: 0 errors") == 2   # the child's and the parent's


@pytest.mark.parametrize("env", [{}, CHECK], ids=["unchecked", "checked"])
def test_raised_segv_ends_the_process(program, env):
    result = support.run_program(program, env=env, args=["raise"])
    assert result.returncode == -signal.SIGSEGV, result.stdout + result.stderr
    assert "survived" not in result.stdout
