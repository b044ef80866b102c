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
