"""memcheck's device memory at scale (docs/checking.md, "The arena"): a checked program may hold as
many allocations as an unchecked one, an impossible size fails as it fails unchecked, large blocks
keep their 2 MiB placement, a host access past an allocation's end is still attributed, and a
free under a queued task neither crashes nor hands the memory to the next allocation."""
import re

import pytest

import support

UNCHECKED = {"ACLNN_CHECK": "", "ACLNN_CHECK_LOG": ""}
MEMCHECK = {"ACLNN_CHECK": "memcheck", "ACLNN_CHECK_LOG": ""}
ALL = {"ACLNN_CHECK": "1", "ACLNN_CHECK_LOG": ""}


@pytest.fixture(scope="module")
def program():
    return support.compile_program(support.ROOT / "tests" / "check" / "arena.c")


@pytest.mark.parametrize("env", [UNCHECKED, MEMCHECK], ids=["unchecked", "memcheck"])
def test_a_million_live_allocations(program, env):
    # before the arena: aclrtMalloc failed after 32,743 blocks and every later mmap failed
    result = support.run_program(program, env=env, args=["many", "1000000"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "live blocks 1000000, wrong 0, mmap after: ok" in result.stdout, result.stdout
    assert "ACLNN_CHECK ERROR" not in result.stderr


def _status_and_message(result):
    status = re.search(r"^status (-?\d+)$", result.stdout, re.M).group(1)
    message = re.search(r"^message (.*)$", result.stdout, re.M).group(1)
    return int(status), re.sub(r"^\[PID:\d+\] \S+ ", "", message)   # pid and time differ


def test_impossible_size_fails_as_unchecked(program):
    # before: aclrtMalloc(16 TiB) succeeded under memcheck (a sparse memfd maps any size)
    unchecked = _status_and_message(support.run_program(program, env=UNCHECKED, args=["huge"]))
    checked_run = support.run_program(program, env=MEMCHECK, args=["huge"])
    checked = _status_and_message(checked_run)
    assert unchecked[0] == 207001, unchecked
    assert checked == unchecked
    assert "a call failed" in checked_run.stderr   # and reported, as every failed call


def test_large_blocks_stay_2mib_aligned_and_apart(program):
    result = support.run_program(program, env=ALL, args=["align"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "misplaced 0, overlaps 0" in result.stdout
    assert "ACLNN_CHECK SUMMARY: 0 errors" in result.stderr


def test_read_past_the_end_is_attributed(program):
    result = support.run_program(program, env=MEMCHECK, args=["past_end"])
    assert result.returncode != 0
    assert "host access to device memory" in result.stderr
    assert "200 bytes into allocation #1 (past its end)" in result.stderr
    assert "read " not in result.stdout


@pytest.mark.parametrize("env,title", [
    (MEMCHECK, "ACLNN_CHECK ERROR (memcheck): aclrtFree frees memory a queued task still uses"),
    (ALL, "ACLNN_CHECK ERROR (racecheck): aclrtFree frees memory an unfinished task writes")],
    ids=["memcheck", "all"])
def test_free_under_a_queued_fill_keeps_the_memory(program, env, title):
    # before: the 300 MiB block left the quarantine at once and the next aclrtMalloc got its
    # addresses: the queued fill overwrote the new block (its last byte read 0x5a, not 0x11)
    result = support.run_program(program, env=env, args=["free_queued"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "survived, next block's last byte 0x11" in result.stdout, result.stdout
    assert result.stderr.count("ACLNN_CHECK ERROR") == 1, result.stderr
    assert title in result.stderr
    assert "allocation #1: 314572832 bytes at" in result.stderr


@pytest.mark.parametrize("env", [UNCHECKED, ALL], ids=["unchecked", "checked"])
def test_allocate_launch_free_loop_computes_right(program, env):
    # the program compares every round's Prelu with x > 0 ? x : 0.25 x; 6000 rounds recycle
    # slots out of the quarantine (4096 blocks) many times over
    result = support.run_program(program, env=env, args=["loop", "2000"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "median_us" in result.stdout
    assert "ACLNN_CHECK ERROR" not in result.stderr


def test_reused_stacks_name_their_own_call_site(tmp_path):
    # stacks are taken again from a per-thread cache when the same calls are made at the same
    # depth (check.c walk_stack): two sites alternating at one depth must not swap stacks
    program = support.compile_program(support.ROOT / "tests" / "check" / "arena.c", out_dir=tmp_path,
                                      extra_flags=["-rdynamic"])
    result = support.run_program(program, env={"ACLNN_CHECK": "leakcheck", "ACLNN_CHECK_LOG": ""},
                                 args=["sites"])
    assert result.returncode == 0, result.stdout + result.stderr
    reports = result.stderr.split("ACLNN_CHECK ERROR (leakcheck)")[1:]
    assert len(reports) == 2, result.stderr
    site_a = next(r for r in reports if "allocation #39:" in r)
    site_b = next(r for r in reports if "allocation #40:" in r)
    assert "#0 allocate_at_site_a+" in site_a and "allocate_at_site_b" not in site_a
    assert "#0 allocate_at_site_b+" in site_b and "allocate_at_site_a" not in site_b
