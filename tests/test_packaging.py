"""The Python package as it is published: sdist, wheel, and an install in a fresh environment.

* ``python -m build`` makes the sdist and the wheel (into a temporary directory) and writes nothing
  into the source tree outside ``build/``;
* the sdist carries what its build needs (Makefile, libaclnn sources, tools/gen_cdef.py, LICENSE);
* the wheel is ``py3-none-manylinux_2_X_<arch>`` (cffi's ABI mode needs no CPython tag), bundles
  the library and the declarations, and ``auditwheel show`` finds it consistent with that tag;
* the sdist installs with pip in a fresh venv and, from an unrelated directory, runs an operator
  whose result matches numpy;
* one version number: pyaclnn/_version.py, the file names, the metadata and ``pyaclnn.__version__``.

pip may fetch setuptools, cffi and numpy from the package index (its cache is used).
"""

import email.parser
import importlib.metadata
import os
import re
import subprocess
import sys
import tarfile
import zipfile

import numpy as np
import pytest

import support

ROOT = str(support.ROOT)
TIMEOUT = 900
# Only these top-level entries of the source tree may change during a build.
BUILD_OUTPUT = ("build", ".venv", ".git", ".pytest_cache")


def _source_version():
    namespace = {}
    with open(os.path.join(ROOT, "pyaclnn", "_version.py")) as f:
        exec(f.read(), namespace)
    return namespace["__version__"]


VERSION = _source_version()


def _clean_env(**updates):
    """The environment without anything that points pyaclnn or make at this checkout."""
    drop = ("PYACLNN_LIBRARY", "ACLNN_BUILD_DIR", "PYACLNN_SKIP_MAKE", "PYTHONPATH", "VIRTUAL_ENV",
            "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "PYTHONHOME")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(updates)
    return env


def _run(cmd, cwd, env=None):
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=TIMEOUT)
    assert proc.returncode == 0, "%s failed:\n%s" % (" ".join(cmd), proc.stdout[-6000:])
    return proc.stdout


def _tree_snapshot():
    """{path: mtime} of the source tree, outside build output and caches."""
    snapshot = {}
    for top, dirs, files in os.walk(ROOT):
        if top == ROOT:
            dirs[:] = [d for d in dirs if d not in BUILD_OUTPUT and not d.startswith("build-")]
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files + dirs:
            path = os.path.join(top, name)
            snapshot[os.path.relpath(path, ROOT)] = os.lstat(path).st_mtime_ns
    return snapshot


@pytest.fixture(scope="module")
def dists(tmp_path_factory):
    """(sdist, wheel) built from this tree with `python -m build`."""
    out = tmp_path_factory.mktemp("dist")
    before = _tree_snapshot()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    _run([sys.executable, "-m", "build", "--sdist", "--outdir", str(out), ROOT], ROOT, env)
    _run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), ROOT], ROOT, env)
    after = _tree_snapshot()
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    assert changed == [], "the build wrote into the source tree: %s" % changed
    sdists = sorted(out.glob("*.tar.gz"))
    wheels = sorted(out.glob("*.whl"))
    assert len(sdists) == 1 and len(wheels) == 1, os.listdir(str(out))
    return sdists[0], wheels[0]


def test_version_is_one_number():
    import pyaclnn
    assert re.match(r"^\d+\.\d+\.\d+", VERSION)
    assert pyaclnn.__version__ == VERSION
    assert importlib.metadata.version("pyaclnn") == VERSION


def test_sdist_carries_what_the_build_needs(dists):
    sdist, _ = dists
    assert sdist.name == "pyaclnn-%s.tar.gz" % VERSION
    top = "pyaclnn-%s/" % VERSION
    with tarfile.open(str(sdist)) as tar:
        names = {n[len(top):] for n in tar.getnames() if n.startswith(top)}
        pkg_info = tar.extractfile(top + "PKG-INFO").read().decode()
    for needed in ("PKG-INFO", "setup.py", "pyproject.toml", "Makefile", "LICENSE", "README.md",
                   "docs/python.md", "tools/gen_cdef.py", "libaclnn/include/acl/acl.h",
                   "pyaclnn/__init__.py", "pyaclnn/_version.py", "pyaclnn/functional/__init__.py",
                   "pyaclnn/_operators/_max_pool.py"):
        assert needed in names, needed
    sources = {os.path.relpath(p, ROOT) for p in support.ROOT.glob("libaclnn/src/*/*.c")}
    assert sources and sources <= names, sorted(sources - names)
    leftovers = sorted(n for n in names if n.startswith("build/") or n.endswith((".so", ".o", ".pyc"))
                       or n == "pyaclnn/_cdef.py" or ".egg-info" in n)
    assert leftovers == []
    metadata = email.parser.Parser().parsestr(pkg_info)
    assert metadata["Version"] == VERSION
    assert metadata["License-Expression"] == "Apache-2.0"


def test_wheel_tag_contents_and_auditwheel(dists):
    _, wheel = dists
    match = re.match(r"^pyaclnn-(?P<version>[^-]+)-py3-none-(?P<plat>manylinux_2_(\d+)_\w+)\.whl$",
                     wheel.name)
    assert match, wheel.name
    assert match.group("version") == VERSION
    info = "pyaclnn-%s.dist-info/" % VERSION
    with zipfile.ZipFile(str(wheel)) as zf:
        names = set(zf.namelist())
        wheel_file = zf.read(info + "WHEEL").decode()
        metadata = email.parser.Parser().parsestr(zf.read(info + "METADATA").decode())
        license_text = zf.read(info + "licenses/LICENSE").decode()
    for needed in ("pyaclnn/__init__.py", "pyaclnn/_lib/libaclnn.so", "pyaclnn/_cdef.py",
                   "pyaclnn/functional/__init__.py", "pyaclnn/_operators/_max_pool.py"):
        assert needed in names, needed
    assert "Root-Is-Purelib: false" in wheel_file
    assert "Tag: py3-none-%s" % match.group("plat") in wheel_file
    assert metadata["Version"] == VERSION
    assert metadata["License-Expression"] == "Apache-2.0"
    assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text

    report = _run([sys.executable, "-m", "auditwheel", "show", str(wheel)], ROOT)
    report = " ".join(report.split())
    consistent = re.search(r'consistent with the following platform tag: "([^"]+)"', report)
    assert consistent, report
    assert consistent.group(1) == match.group("plat"), report


def test_sdist_installs_in_a_fresh_venv_and_runs(dists, tmp_path):
    sdist, _ = dists
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], str(tmp_path), _clean_env())
    python = str(venv / "bin" / "python")
    _run([python, "-m", "pip", "install", "-q", str(sdist)], str(tmp_path), _clean_env())

    rng = np.random.default_rng(20261126)
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    weight = rng.uniform(0.1, 0.9, 3).astype(np.float32)
    np.save(str(tmp_path / "x.npy"), x)
    np.save(str(tmp_path / "weight.npy"), weight)
    code = (
        "import importlib.metadata, numpy as np, pyaclnn, pyaclnn._core as core\n"
        "import pyaclnn.functional as F\n"
        "out = F.prelu(np.load('x.npy'), np.load('weight.npy'))\n"
        "np.save('out.npy', out)\n"
        "print(pyaclnn.__version__, importlib.metadata.version('pyaclnn'))\n"
        "print(pyaclnn.LIBRARY_PATH)\n"
        "print(core.CDEF_SOURCE)\n"
    )
    work = tmp_path / "elsewhere"
    work.mkdir()
    for name in ("x.npy", "weight.npy"):
        os.replace(str(tmp_path / name), str(work / name))
    lines = _run([python, "-c", code], str(work), _clean_env()).splitlines()
    assert lines[-3] == "%s %s" % (VERSION, VERSION)
    site = str(venv)
    assert lines[-2].startswith(site) and lines[-2].endswith("pyaclnn/_lib/libaclnn.so"), lines
    assert lines[-1].startswith(site) and lines[-1].endswith("pyaclnn/_cdef.py"), lines

    expected = np.where(x > 0, x, x * weight.reshape(1, 3, 1, 1))
    np.testing.assert_allclose(np.load(str(work / "out.npy")), expected, rtol=1e-6, atol=0)


@pytest.mark.parametrize("machine,code", [("x86_64", 0x3E), ("aarch64", 0xB7)])
def test_wheel_tag_names_the_machine_the_library_was_built_for(tmp_path, machine, code):
    """setup.py tags the wheel with the machine the bundled library was built for, read from its
    ELF header (a library built on, or for, aarch64 gives manylinux_2_X_aarch64): a stand-in
    file with an ELF64 header, and this machine's own build."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("pyaclnn_setup_under_test", os.path.join(ROOT, "setup.py"))
    module = importlib.util.module_from_spec(spec)
    argv = sys.argv
    sys.argv = ["setup.py", "--version"]  # setup() runs on import: make it a harmless query
    try:
        import contextlib
        import io
        with contextlib.redirect_stdout(io.StringIO()):
            spec.loader.exec_module(module)
    finally:
        sys.argv = argv
    header = bytearray(64)
    header[:4] = b"\x7fELF"
    header[4], header[5], header[6] = 2, 1, 1            # ELF64, little-endian, version 1
    header[18:20] = code.to_bytes(2, "little")          # e_machine
    library = tmp_path / "libaclnn.so"
    library.write_bytes(bytes(header))
    assert module.elf_machine(str(library)) == machine
    assert re.fullmatch(r"manylinux_2_\d+_%s" % machine, module.wheel_platform_tag(str(library)))
    real = support.lib_dir() / "libaclnn.so"  # this machine's own build
    assert module.elf_machine(str(real)) == {"amd64": "x86_64", "arm64": "aarch64"}.get(
        os.uname().machine.lower(), os.uname().machine)
