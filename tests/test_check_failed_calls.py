"""ACLNN_CHECK reports a call that fails because of the program's mistake, even when the
program ignores the status (docs/checking.md, "Failed calls"); ACLNN_CHECK_API_ERRORS=0 turns
that off."""
import pytest

import support

CHECK = {"ACLNN_CHECK": "1", "ACLNN_CHECK_EXITCODE": "42", "ACLNN_CHECK_LOG": ""}
MISTAKES = {
    "double_free": ("107000", "aclrtFree"),
    "copy_past_end": ("aclrtMemcpy", "aclrtMemcpy"),
    "consumed_executor": ("161002", "aclnnPrelu"),
}


@pytest.fixture(scope="module")
def program():
    return support.compile_program(support.ROOT / "tests" / "check" / "failed_calls.c", extra_flags=["-rdynamic"])


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_ignored_failure_is_reported(program, mistake):
    status_or_call, call = MISTAKES[mistake]
    result = support.run_program(program, env=CHECK, args=[mistake])
    assert result.returncode == 42, result.stderr
    report = result.stderr
    assert "ACLNN_CHECK ERROR (api): a call failed" in report
    assert "message:  %s:" % call in report
    assert status_or_call in report
    assert "#0 " in report and "(" in report      # the program's stack at the call
    assert "ACLNN_CHECK SUMMARY: 1 error, 0 warnings" in report


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_switch_turns_failed_calls_off(program, mistake):
    result = support.run_program(program, env=dict(CHECK, ACLNN_CHECK_API_ERRORS="0"), args=[mistake])
    assert result.returncode == 0, result.stderr
    assert "ACLNN_CHECK SUMMARY: 0 errors, 0 warnings" in result.stderr


def test_clean_program_reports_nothing(program):
    result = support.run_program(program, env=CHECK, args=["none"])
    assert result.returncode == 0, result.stderr
    assert "ACLNN_CHECK SUMMARY: 0 errors, 0 warnings" in result.stderr


def test_without_checking_nothing_is_printed(program):
    result = support.run_program(program, env={"ACLNN_CHECK": "", "ACLNN_CHECK_LOG": ""}, args=["double_free"])
    assert result.returncode == 0 and "ACLNN_CHECK" not in result.stderr
