"""Every standalone C/C++ program in tests/c, built against the library and run (also under
valgrind, which must report no error and no leak)."""
import pytest

import support

SOURCES = support.c_test_sources()


@pytest.mark.parametrize("source", SOURCES, ids=[s.name for s in SOURCES])
def test_c_program(source):
    exe = support.compile_program(source)
    result = support.run_program(exe)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("source", SOURCES, ids=[s.name for s in SOURCES])
def test_c_program_valgrind(source):
    exe = support.compile_program(source)
    result = support.run_program(exe, valgrind=True, env={"ACLNN_NUM_THREADS": "2"})
    assert result.returncode == 0, result.stdout + result.stderr
