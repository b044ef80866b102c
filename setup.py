"""Build hooks for pyaclnn (metadata lives in pyproject.toml).

Before the Python files are collected, the build runs ``make BUILD=<dir> lib`` in this source tree
(``<dir>``: ``$ACLNN_BUILD_DIR``, else the ``BUILD=`` a calling make was given, else ``build``);
set ``PYACLNN_SKIP_MAKE=1`` to use an already built library as is.  Then:

* a wheel (``pip install .``, ``python -m build``): ``<dir>/lib64/libaclnn.so`` is copied to
  ``pyaclnn/_lib/`` and ``tools/gen_cdef.py`` writes ``pyaclnn/_cdef.py``, both in setuptools'
  build directory (the loader finds the library there by absolute path);
* an editable install (``pip install --no-build-isolation -e .``): nothing is added to the
  package; the declarations go to ``<dir>/pyaclnn/_cdef.py``, where pyaclnn looks for them (and
  for ``<dir>/lib64/libaclnn.so``) when it is used from a checkout.

Nothing is written into the source tree outside ``build/`` (and ``<dir>``): setuptools' own
directories and the ``.egg-info`` go under ``build/python``.

The wheel is tagged ``py3-none-manylinux_2_X_<arch>``: cffi's ABI mode has no compiled Python
extension, so any CPython 3 can use it, and ``X`` is the newest glibc symbol version the bundled
library needs (read from its ELF version references), the test ``auditwheel show`` applies.
"""

import os
import platform
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
# setuptools' build_base, bdist_dir and egg_base (relative: setuptools runs in this directory).
SETUPTOOLS_BUILD = os.path.join("build", "python")
# manylinux_2_17 (manylinux2014) is the oldest tag current pip and CPython releases target.
OLDEST_MANYLINUX_GLIBC = 17


def build_dir():
    """The libaclnn build directory, relative to the source tree unless absolute."""
    if os.environ.get("ACLNN_BUILD_DIR"):
        return os.environ["ACLNN_BUILD_DIR"]
    # `make BUILD=x test` reaches us through pip; make exports its command-line variables here.
    for word in shlex.split(os.environ.get("MAKEFLAGS", "")):
        if word.startswith("BUILD="):
            return word[len("BUILD="):]
    return "build"


def library_path():
    return os.path.join(HERE, build_dir(), "lib64", "libaclnn.so")


def build_native_library():
    """`make lib` (unless PYACLNN_SKIP_MAKE=1); returns the library's path."""
    directory = build_dir()
    if os.environ.get("PYACLNN_SKIP_MAKE") != "1":
        env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
        jobs = "-j%d" % max(1, min(os.cpu_count() or 1, 8))
        subprocess.check_call(["make", jobs, "BUILD=" + directory, "lib"], cwd=HERE, env=env)
    library = library_path()
    if not os.path.isfile(library):
        sys.exit("pyaclnn: %s was not built; run `make BUILD=%s lib` and check its output"
                 % (library, directory))
    return library


def generate_cdef(out):
    os.makedirs(os.path.dirname(out), exist_ok=True)
    subprocess.check_call([sys.executable, os.path.join(HERE, "tools", "gen_cdef.py"),
                           "--include", os.path.join(HERE, "libaclnn", "include"), "--out", out])


def glibc_versions_needed(library):
    """(2, N) for every GLIBC_2.N version the library references, from its ELF version needs."""
    try:
        text = subprocess.run(["readelf", "--version-info", "--wide", library], check=True,
                              stdout=subprocess.PIPE, universal_newlines=True).stdout
    except (OSError, subprocess.CalledProcessError):
        # No binutils: the names of the versions needed are strings of .dynstr.
        with open(library, "rb") as f:
            text = f.read().decode("latin-1")
    return {(int(a), int(b)) for a, b in re.findall(r"\bGLIBC_(\d+)\.(\d+)", text)}


# ELF e_machine -> the architecture part of a manylinux tag.
ELF_MACHINES = {0x03: "i686", 0x3E: "x86_64", 0xB7: "aarch64"}


def elf_machine(library):
    """The architecture the bundled library was built for (its ELF header), or None."""
    try:
        with open(library, "rb") as f:
            header = f.read(20)
    except OSError:
        return None
    if len(header) < 20 or header[:4] != b"\x7fELF":
        return None
    order = "little" if header[5] == 1 else "big"
    return ELF_MACHINES.get(int.from_bytes(header[18:20], order))


def wheel_platform_tag(library):
    """manylinux_2_X_<arch> from the glibc the library needs and the machine it was built for
    (x86_64 or aarch64: the bundled library's ELF header; this Python's machine otherwise), or
    None off glibc Linux."""
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        return None
    needed = glibc_versions_needed(library)
    minor = max([b for a, b in needed if a == 2] + [OLDEST_MANYLINUX_GLIBC])
    machine = elf_machine(library)
    if machine is None:
        machine = platform.machine()
        if machine == "x86_64" and sys.maxsize <= 2 ** 32:
            machine = "i686"  # a 32-bit Python on a 64-bit kernel
    return "manylinux_2_%d_%s" % (minor, machine)


class BuildPyWithNative(build_py):
    """build_py that first builds libaclnn, then adds it and the cffi declarations."""

    def run(self):
        library = build_native_library()
        if getattr(self, "editable_mode", False):
            # The package is used in place: it finds <dir>/lib64 and <dir>/pyaclnn/_cdef.py.
            generate_cdef(os.path.join(HERE, build_dir(), "pyaclnn", "_cdef.py"))
            super().run()
            return
        package = os.path.join(self.build_lib, "pyaclnn")
        shutil.rmtree(package, ignore_errors=True)  # no module a previous build left behind
        super().run()
        os.makedirs(os.path.join(package, "_lib"), exist_ok=True)
        shutil.copy2(os.path.realpath(library), os.path.join(package, "_lib", "libaclnn.so"))
        generate_cdef(os.path.join(package, "_cdef.py"))

    def get_outputs(self, include_bytecode=1):
        outputs = super().get_outputs(include_bytecode)
        if not getattr(self, "editable_mode", False):
            package = os.path.join(self.build_lib, "pyaclnn")
            outputs += [os.path.join(package, "_lib", "libaclnn.so"),
                        os.path.join(package, "_cdef.py")]
        return outputs


class BdistWheelABIMode(bdist_wheel):
    """A platform wheel (it carries libaclnn.so) for any Python 3: py3-none-manylinux_2_X_<arch>."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        manylinux = wheel_platform_tag(library_path())
        return "py3", "none", manylinux or super().get_tag()[2]


class BinaryDistribution(Distribution):
    """The wheel carries a native library: its files go to platlib, as auditwheel requires."""

    def has_ext_modules(self):
        return True


class SdistWithoutBuildDir(sdist):
    """sdist always adds the egg-info's SOURCES.txt, which lives under build/: leave it out."""

    def make_release_tree(self, base_dir, files):
        files = [f for f in files if os.path.normpath(f).split(os.sep)[0] != "build"]
        super().make_release_tree(base_dir, files)


os.makedirs(os.path.join(HERE, SETUPTOOLS_BUILD), exist_ok=True)
setup(
    distclass=BinaryDistribution,
    cmdclass={"build_py": BuildPyWithNative, "bdist_wheel": BdistWheelABIMode,
              "sdist": SdistWithoutBuildDir},
    options={
        "build": {"build_base": SETUPTOOLS_BUILD},
        "egg_info": {"egg_base": SETUPTOOLS_BUILD},
    },
)
