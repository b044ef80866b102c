"""Every standalone C/C++ program in tests/c, built against the library and run (also under
valgrind, which must report no error and no leak); the operator programs also on the other SIMD
tiers (tests/tiers.py)."""
import pytest

import support
import tiers

SOURCES = support.c_test_sources()
OP_SOURCES = [s for s in SOURCES if s.name.startswith("test_op_")]


@pytest.mark.parametrize("source", SOURCES, ids=[s.name for s in SOURCES])
def test_c_program(source):
    exe = support.compile_program(source)
    result = support.run_program(exe)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("tier", [tier for tier in tiers.TIERS if tier != "best"])
@pytest.mark.parametrize("source", OP_SOURCES, ids=[s.name for s in OP_SOURCES])
def test_c_op_program_on_other_tiers(source, tier):
    exe = support.compile_program(source)
    result = support.run_program(exe, env=tiers.Run(tier).env())
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("source", SOURCES, ids=[s.name for s in SOURCES])
def test_c_program_valgrind(source):
    exe = support.compile_program(source)
    # two threads, small launches included (base/nn_base.h, NN_SMALL_WORK_BYTES)
    result = support.run_program(exe, valgrind=True,
                                 env={"ACLNN_NUM_THREADS": "2", "ACLNN_SMALL_WORK_BYTES": "0"})
    assert result.returncode == 0, result.stdout + result.stderr
