"""memcheck and pinned host memory (docs/checking.md, "Pinned host memory"): a host read of an
aclrtMallocHost buffer that a queued aclrtMemcpyAsync(..., ACL_MEMCPY_DEVICE_TO_HOST) writes,
before the program waited for the copy, is reported (before: missed) and the program goes on;
reads after aclrtSynchronizeStream or aclrtSynchronizeEvent are clean."""
import pytest

import support

CHECKED = {"ACLNN_CHECK": "1", "ACLNN_CHECK_LOG": ""}


@pytest.fixture(scope="module")
def program():
    return support.compile_program(support.ROOT / "tests" / "check" / "pinned_read.c")


def test_read_before_the_copy_is_reported(program):
    result = support.run_program(program, env=CHECKED, args=["early"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr.count("ACLNN_CHECK ERROR") == 1, result.stderr
    assert "ACLNN_CHECK ERROR (memcheck): host access to pinned memory an asynchronous copy writes" in result.stderr
    assert "host read at" in result.stderr and "524288 bytes into the 1048576-byte aclrtMallocHost block" in result.stderr
    assert "aclrtMemcpyAsync into it (not run yet), queued at:" in result.stderr
    assert "after the wait 0x7c 0x7c" in result.stdout   # the copy itself was made


@pytest.mark.parametrize("case", ["synced", "event"])
def test_read_after_a_wait_is_clean(program, case):
    result = support.run_program(program, env=CHECKED, args=[case])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ACLNN_CHECK ERROR" not in result.stderr
    assert "after the wait 0x7c 0x7c" in result.stdout


@pytest.mark.parametrize("env", [{}, CHECKED], ids=["unchecked", "checked"])
def test_forked_child_writes_stay_in_the_child(program, env):
    result = support.run_program(program, env=env, args=["fork"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "child status 0" in result.stdout
    assert "after the wait 0x7c 0x7c" in result.stdout, result.stdout
    assert "ACLNN_CHECK ERROR" not in result.stderr
