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


@pytest.fixture(scope="module")
def writer():
    return support.compile_program(support.ROOT / "tests" / "check" / "pinned_write.c")


def test_write_before_the_copy_reads_is_reported(writer):
    """A host write into the source of a queued host-to-device copy (before: missed)."""
    result = support.run_program(writer, env=CHECKED, args=["write"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr.count("ACLNN_CHECK ERROR") == 1, result.stderr
    assert "ACLNN_CHECK ERROR (memcheck): host write to pinned memory an asynchronous copy reads" in result.stderr
    assert "host write at" in result.stderr and "524288 bytes into the 1048576-byte aclrtMallocHost block" in result.stderr
    assert "aclrtMemcpyAsync from it (not run yet), queued at:" in result.stderr
    assert "device received 0x33" in result.stdout  # the write went on, and the copy ran after it


@pytest.mark.parametrize("case,byte", [("read", "0x11"), ("synced", "0x11"), ("hostfunc", "0x33")])
def test_reading_the_source_or_writing_in_order_is_clean(writer, case, byte):
    """Reads of a copy's source, writes after the wait, and writes by a host function the stream
    runs before the copy are legal."""
    result = support.run_program(writer, env=CHECKED, args=[case])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ACLNN_CHECK ERROR" not in result.stderr
    assert f"device received {byte}" in result.stdout


def per_round_us(writer, blocks):
    result = support.run_program(writer, env=CHECKED, args=["waits", str(blocks)])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ACLNN_CHECK ERROR" not in result.stderr
    return float(result.stdout.split()[0])


def test_a_wait_does_not_visit_every_pinned_block(writer):
    """A copy into one pinned block and a wait, with 8000 blocks alive, costs about what it
    costs with one (before: each wait walked every block, 57 us against 6 us a round)."""
    few = min(per_round_us(writer, 1) for _ in range(2))
    many = min(per_round_us(writer, 8000) for _ in range(2))
    assert many < 3 * few, (few, many)
