"""Shared pytest fixtures.

``acl``  the pyaclnn module, initialised once per session (aclInit + aclrtSetDevice(0)).
``rng``  a numpy Generator with a fixed seed, fresh for each test.
``soc``  pyaclnn.set_soc_version, for selecting a product in one test; the default is restored
         afterwards.

pyaclnn is imported inside the fixture, so test files that do not use it (for example the C
program runner) still collect when the Python binding is broken.
"""

import numpy as np
import pytest


@pytest.fixture(scope="session")
def acl():
    import pyaclnn
    pyaclnn.init()
    pyaclnn.recent_error_message()  # start every session with an empty error slot
    return pyaclnn


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)


@pytest.fixture
def soc():
    import pyaclnn
    yield pyaclnn.set_soc_version
    pyaclnn.set_soc_version(None)


# The files that take longest, started first: `make test` hands whole files to its pytest workers
# (pytest-xdist, --dist loadfile --no-loadscope-reorder) in collection order - without that flag
# xdist orders the files by their number of tests - and one of these started last would run
# alone after the others are done (the fuzz file builds the library with sanitizers for libFuzzer,
# then fuzzes for 60 s: ~7 minutes of one worker on a 2-core host).
LONGEST_FIRST = ("test_fuzz_short.py", "test_c_programs.py", "test_op_max_pool_forward.py",
                 "test_packaging.py", "test_tsan.py", "test_op_im2col.py")


def pytest_collection_modifyitems(config, items):
    def rank(item):
        name = item.path.name
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)
    items.sort(key=rank)       # stable: each file's tests keep their order
