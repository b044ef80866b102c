"""initcheck's record of written bytes (docs/checking.md, "initcheck"): bytes written from an
allocation's first byte on are kept as a length, checked and marked in constant time (a large
operator's input scan and output fill were most of initcheck's cost); writes elsewhere as bits.
The two mixed give the same verdicts as bits alone (tests/check/init_prefix.c)."""
import pytest

import support

CHECK = {"ACLNN_CHECK": "initcheck", "ACLNN_CHECK_LOG": ""}


@pytest.fixture(scope="module")
def program():
    return support.compile_program(support.ROOT / "tests" / "check" / "init_prefix.c")


@pytest.mark.parametrize("case,first", [("half", 8192), ("hole", 4096)])
def test_unwritten_bytes_are_reported(program, case, first):
    result = support.run_program(program, env=CHECK, args=[case])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "status 0" in result.stdout
    assert result.stderr.count("ACLNN_CHECK ERROR") == 1, result.stderr
    assert "ACLNN_CHECK ERROR (initcheck): operator reads device memory nobody wrote" in result.stderr
    assert f"unwritten: byte {first} of allocation #1 is the first" in result.stderr


@pytest.mark.parametrize("case", ["two", "reversed", "output"])
def test_written_bytes_are_clean(program, case):
    result = support.run_program(program, env=CHECK, args=[case])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "status 0" in result.stdout
    assert "ACLNN_CHECK SUMMARY: 0 errors, 0 warnings" in result.stderr, result.stderr
