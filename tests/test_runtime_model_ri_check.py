"""The model runtime instance programs (tests/c/test_runtime_model_ri.c, and
test_runtime_model_ri_update.c for task groups and their updates, test_runtime_model_ri_cond.c
for conditional tasks, test_runtime_model_ri_abort.c for aclmdlRIAbort) run clean under the
checking mode (docs/checking.md): tasks a stream records into a model are kept, not queued, so
racecheck must not count them as unfinished work (it did: four false reports of copies "an
unfinished task" reads or writes, before captured tasks were left out of it).  Failed calls are
not reported here: the programs make some on purpose (CANN's statuses for misuse)."""
import pytest

import support

PROGRAMS = ["test_runtime_model_ri", "test_runtime_model_ri_update", "test_runtime_model_ri_cond",
            "test_runtime_model_ri_abort", "test_runtime_model_ri_label"]


@pytest.mark.parametrize("program", PROGRAMS)
def test_model_ri_program_is_clean_under_aclnn_check(program):
    exe = support.compile_program(support.ROOT / "tests" / "c" / f"{program}.c")
    env = {"ACLNN_CHECK": "1", "ACLNN_CHECK_API_ERRORS": "0", "ACLNN_NUM_THREADS": "2"}
    result = support.run_program(exe, env=env)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "ACLNN_CHECK SUMMARY: 0 errors, 0 warnings" in output, output
    assert f"{program}: all checks passed" in output
