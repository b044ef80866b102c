"""memcheck reports two outputs of one launch in the same bytes, and not two outputs that only
share a span (docs/checking.md, memcheck)."""
import pytest

import support

CHECK = {"ACLNN_CHECK": "1", "ACLNN_CHECK_EXITCODE": "42", "ACLNN_CHECK_LOG": ""}


@pytest.fixture(scope="module")
def program():
    return support.compile_program(support.ROOT / "tests" / "check" / "aliasing_outputs.c")


def test_outputs_sharing_bytes_are_reported(program):
    result = support.run_program(program, env=CHECK, args=["alias"])
    assert result.returncode == 42, result.stdout + result.stderr
    assert "launch ran" in result.stdout             # reported, not refused: a card runs it
    assert result.stderr.count("ACLNN_CHECK ERROR (memcheck): two outputs of one launch share bytes") == 1
    assert "aclnnPreluBackward: output 0 (gradInput)" in result.stderr
    assert "output 1 (gradWeight), in the same device memory" in result.stderr


@pytest.mark.parametrize("case", ["interleaved", "separate"])
def test_outputs_in_their_own_bytes_are_not(program, case):
    result = support.run_program(program, env=CHECK, args=[case])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ACLNN_CHECK SUMMARY: 0 errors, 0 warnings" in result.stderr
