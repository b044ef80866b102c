"""Host memory freed while a queued copy still uses it (docs/checking.md, "Memory freed under a
queued task"): the free returns, the memory stays until the copy has run, and the checking mode
reports it with both calls' stacks.  Before, the stream's worker copied from the unmapped buffer
and the process died with SIGSEGV inside the library, checked or not."""
import pytest

import support

CHECKED = {"ACLNN_CHECK": "1", "ACLNN_CHECK_API_ERRORS": "0", "ACLNN_CHECK_LOG": ""}


@pytest.fixture(scope="module")
def program():
    return support.compile_program(support.ROOT / "tests" / "check" / "queued_free.c")


@pytest.mark.parametrize("env", [{}, CHECKED], ids=["unchecked", "checked"])
def test_free_host_before_the_copy_ran(program, env):
    result = support.run_program(program, env=env, args=["free_host"])
    assert result.returncode == 0, result.stdout + result.stderr
    # the copy read the bytes the program wrote; the second free is a double free
    assert "free 0, second free 107000, device bytes 0x6b 0x6b" in result.stdout, result.stdout
    if env:
        assert result.stderr.count("ACLNN_CHECK ERROR") == 1, result.stderr
        assert "aclrtFreeHost frees pinned memory a queued copy still uses" in result.stderr
        assert "an asynchronous copy that reads or writes it, not run yet, queued at:" in result.stderr
        assert "frees the 67108864-byte aclrtMallocHost block at" in result.stderr
    else:
        assert "ACLNN_CHECK" not in result.stderr


@pytest.mark.parametrize("case", ["free_d32", "free_2d"])
def test_free_under_a_queued_runtime_task(program, case):
    """aclrtFree of a 300 MiB block an aclrtMemsetD32Async or aclrtMemcpy2dAsync still writes: the
    block waits for the task, so a new block of its size does not get its addresses (before: it
    did, and the task overwrote it; the 2-D copy with spitch < dpitch failed under memcheck)."""
    result = support.run_program(program, env=CHECKED, args=[case])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "queued 0, new block bytes 0x11 0x11" in result.stdout, result.stdout + result.stderr
    assert result.stderr.count("ACLNN_CHECK ERROR") == 1, result.stderr
    assert "ACLNN_CHECK ERROR (racecheck): aclrtFree frees memory an unfinished task writes" in result.stderr
