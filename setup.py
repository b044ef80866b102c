"""Build hooks for pyaclnn (metadata lives in pyproject.toml).

Before the Python files are collected, the build:

1. runs ``make BUILD=<dir> lib`` in this source tree (``<dir>``: ``$ACLNN_BUILD_DIR``, else the
   ``BUILD=`` a calling make was given, else ``build``); set ``PYACLNN_SKIP_MAKE=1`` to use an
   already built library as is;
2. copies ``<dir>/lib64/libaclnn.so`` into ``pyaclnn/_lib/`` (the loader finds it there by
   absolute path);
3. writes ``pyaclnn/_cdef.py`` from the public headers with ``tools/gen_cdef.py``.

It works for ``pip install .`` and ``pip install --no-build-isolation -e .`` alike (both write the
two generated files into the source package, which an editable install uses in place).
"""

import os
import shlex
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_LIB = os.path.join(HERE, "pyaclnn", "_lib")


def build_dir():
    """The libaclnn build directory, relative to the source tree unless absolute."""
    if os.environ.get("ACLNN_BUILD_DIR"):
        return os.environ["ACLNN_BUILD_DIR"]
    # `make BUILD=x test` reaches us through pip; make exports its command-line variables here.
    for word in shlex.split(os.environ.get("MAKEFLAGS", "")):
        if word.startswith("BUILD="):
            return word[len("BUILD="):]
    return "build"


def build_native_library():
    directory = build_dir()
    if os.environ.get("PYACLNN_SKIP_MAKE") != "1":
        env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
        subprocess.check_call(["make", "BUILD=" + directory, "lib"], cwd=HERE, env=env)
    library = os.path.join(HERE, directory, "lib64", "libaclnn.so")
    if not os.path.isfile(library):
        sys.exit("pyaclnn: %s was not built; run `make BUILD=%s lib` and check its output"
                 % (library, directory))
    os.makedirs(PACKAGE_LIB, exist_ok=True)
    target = os.path.join(PACKAGE_LIB, "libaclnn.so")
    tmp = target + ".tmp"
    shutil.copy2(os.path.realpath(library), tmp)
    os.replace(tmp, target)  # atomic: a running process keeps its mapping of the old file


def generate_cdef():
    subprocess.check_call([sys.executable, os.path.join(HERE, "tools", "gen_cdef.py"),
                           "--include", os.path.join(HERE, "libaclnn", "include"),
                           "--out", os.path.join(HERE, "pyaclnn", "_cdef.py")])


class BuildPyWithNative(build_py):
    """build_py that first builds libaclnn and generates the cffi declarations."""

    def run(self):
        build_native_library()
        generate_cdef()
        super().run()


class BinaryDistribution(Distribution):
    """The wheel carries a native library, so it is platform specific."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildPyWithNative}, distclass=BinaryDistribution)
