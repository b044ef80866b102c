"""A launch whose input the device can no longer reach (docs/checking.md, "Launch ranges"): host
memory unregistered, or an aclrtMapMem range unmapped and its physical memory freed, between
phase 1 and the launch.  memcheck refuses the launch (161002) with a report naming the operand
and the call; before, the first ran unreported and the second died with SIGSEGV in the kernel.
The same calls after the launch was queued and before it ran are reported and wait for the launch
(before: unreported, and the unmapped one died with SIGSEGV in the stream's worker)."""
import pytest

import support

CHECKED = {"ACLNN_CHECK": "1", "ACLNN_CHECK_LOG": ""}


@pytest.fixture(scope="module")
def program():
    return support.compile_program(support.ROOT / "tests" / "check" / "unreachable_launch.c")


@pytest.mark.parametrize("case", ["unregister", "unmap"])
def test_launch_on_memory_gone_since_phase1(program, case):
    result = support.run_program(program, env=CHECKED, args=[case])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "launch status 161002, 0 wrong" in result.stdout, result.stdout
    assert result.stderr.count("ACLNN_CHECK ERROR") == 1, result.stderr
    assert "ACLNN_CHECK ERROR (memcheck): launch reaches memory the device cannot reach" in result.stderr
    assert "aclnnPrelu: input 0 (self)" in result.stderr
    assert "+4096 bytes) is neither device memory" in result.stderr


@pytest.mark.parametrize("case,api,length", [("unregister", "aclrtHostUnregister", "+4096 bytes"),
                                             ("unmap", "aclrtUnmapMem", "+2097152 bytes")])
def test_release_under_a_queued_launch(program, case, api, length):
    result = support.run_program(program, env=CHECKED, args=[case, "queued"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "launch status 0, 0 wrong" in result.stdout, result.stdout + result.stderr
    assert result.stderr.count("ACLNN_CHECK ERROR") == 1, result.stderr
    assert "ACLNN_CHECK ERROR (memcheck): memory released while a queued launch still reaches it" in result.stderr
    assert f"call:     {api} of [0x" in result.stderr and length in result.stderr
    assert "aclnnPrelu, operand 0 (self) at [0x" in result.stderr and "queued (not run yet) at:" in result.stderr

