"""A copy or fill into an aclrtMapMem mapping whose access (aclrtMemSetAccess) forbids it fails
with a status (and, checked, a failed-call report) instead of faulting inside the library: before,
the copy into an ACL_RT_MEM_ACCESS_FLAGS_NONE mapping ended the process with SIGSEGV
(docs/checking.md, "Failed calls"; docs/runtime.md, aclrtMemSetAccess)."""
import pytest

import support

CHECKED = {"ACLNN_CHECK": "1", "ACLNN_CHECK_LOG": ""}


@pytest.fixture(scope="module")
def program():
    return support.compile_program(support.ROOT / "tests" / "check" / "vmm_access.c")


@pytest.mark.parametrize("env", [{}, CHECKED], ids=["unchecked", "checked"])
def test_forbidden_copies_fail_with_a_status(program, env):
    result = support.run_program(program, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    for line in ("h2d into NONE: 107000", "d2h from NONE: 107000", "fill NONE: 107000",
                 "h2d into READ: 107000", "d2h from READ: 0, byte 0x33"):
        assert line in result.stdout, result.stdout
    if env:
        assert result.stderr.count("ACLNN_CHECK ERROR (api): a call failed") == 4, result.stderr
        assert "set to ACL_RT_MEM_ACCESS_FLAGS_NONE by aclrtMemSetAccess; the call would write it" in result.stderr
