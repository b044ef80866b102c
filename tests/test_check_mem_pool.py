"""racecheck keeps a pool's promise (docs/runtime.md, "Stream-ordered memory pools"): a block
freed with aclrtMemPoolFreeAsync while a task of another stream, not ordered before the free by
an event, still writes it is reported, every time (tests/check/pool_free_race.c); the same program
with the event gets no report.  Without checking both layouts run and exit 0."""
import pytest

import support

EXIT_CODE = 9
RUNS = 10


@pytest.fixture(scope="module")
def program():
    return support.compile_program(support.ROOT / "tests" / "check" / "pool_free_race.c")


def run(program, layout, tools):
    env = {"ACLNN_CHECK": tools, "ACLNN_CHECK_EXITCODE": str(EXIT_CODE), "ACLNN_CHECK_LOG": ""} if tools else {}
    result = support.run_program(program, env=env, args=(layout,))
    return result, result.stdout + result.stderr


def test_free_racing_another_stream_is_reported_every_time(program):
    for _ in range(RUNS):
        result, output = run(program, "race", "racecheck")
        assert result.returncode == EXIT_CODE, output
        errors = [line for line in output.splitlines() if line.startswith("========= ACLNN_CHECK ERROR")]
        assert errors == ["========= ACLNN_CHECK ERROR (racecheck): aclrtMemPoolFreeAsync and aclrtMemsetAsync "
                          "on different streams touch the same bytes with no event ordering them"], output
        assert "done" in result.stdout


@pytest.mark.parametrize("tools", ["1", "racecheck"])
def test_free_after_an_event_is_clean_every_time(program, tools):
    for _ in range(RUNS):
        result, output = run(program, "event", tools)
        assert result.returncode == 0 and "ACLNN_CHECK ERROR" not in output, output
        assert "SUMMARY: 0 errors" in output


@pytest.mark.parametrize("layout", ["race", "event"])
def test_unchecked_runs_both(program, layout):
    result, output = run(program, layout, None)
    assert result.returncode == 0 and "done" in result.stdout, output
