"""Finding the library and the declarations, in fresh interpreters.

* a bogus PYACLNN_LIBRARY fails with LibraryNotFoundError naming the path it tried;
* a package with no bundled library and no build tree lists every default path it tried;
* a colon-separated list (how CANN's split libascendcl/libnnopbase/libopapi is loaded) works,
  here with libaclnn's CANN-named aliases;
* without the generated _cdef.py, a source tree's headers are parsed at import.
"""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import pyaclnn

PACKAGE_DIR = os.path.dirname(os.path.abspath(pyaclnn.__file__))
ROOT = os.path.dirname(PACKAGE_DIR)
LIBRARY = os.path.realpath(pyaclnn.LIBRARY_PATH.split(":")[0])


def _python(code, env_updates, cwd, pythonpath=None):
    env = {k: v for k, v in os.environ.items() if k not in ("PYACLNN_LIBRARY", "ACLNN_BUILD_DIR")}
    env.update(env_updates)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=120)


def _copy_package(dest, with_cdef=True):
    """A copy of the pure-Python package (no bundled library) under dest/pyaclnn."""
    target = os.path.join(dest, "pyaclnn")
    shutil.copytree(PACKAGE_DIR, target, ignore=shutil.ignore_patterns("_lib", "__pycache__"))
    if not with_cdef:
        os.remove(os.path.join(target, "_cdef.py"))
    return target


def test_bogus_override_lists_the_path(tmp_path):
    bogus = str(tmp_path / "nowhere" / "libaclnn.so")
    proc = _python("import pyaclnn", {"PYACLNN_LIBRARY": bogus}, str(tmp_path))
    assert proc.returncode != 0
    assert "LibraryNotFoundError" in proc.stderr
    assert bogus in proc.stderr and "no such file" in proc.stderr
    assert "PYACLNN_LIBRARY" in proc.stderr


def test_unloadable_file_reports_the_loader_error(tmp_path):
    fake = tmp_path / "libaclnn.so"
    fake.write_text("not an ELF file")
    proc = _python("import pyaclnn", {"PYACLNN_LIBRARY": str(fake)}, str(tmp_path))
    assert proc.returncode != 0 and str(fake) in proc.stderr


def test_default_search_lists_every_path_tried(tmp_path):
    tree = tmp_path / "tree"
    package = _copy_package(str(tree))
    proc = _python("import pyaclnn", {"ACLNN_BUILD_DIR": "build-elsewhere"}, str(tmp_path),
                   pythonpath=str(tree))
    assert proc.returncode != 0
    for path in (os.path.join(package, "_lib", "libaclnn.so"),
                 os.path.join(str(tree), "build-elsewhere", "lib64", "libaclnn.so"),
                 os.path.join(str(tree), "build", "lib64", "libaclnn.so")):
        assert path in proc.stderr, proc.stderr


def test_dev_tree_build_directory_is_found(tmp_path):
    tree = tmp_path / "tree"
    _copy_package(str(tree))
    libdir = tree / "build" / "lib64"
    libdir.mkdir(parents=True)
    shutil.copy(LIBRARY, str(libdir / "libaclnn.so"))
    proc = _python("import pyaclnn; print(pyaclnn.LIBRARY_PATH)", {}, str(tmp_path),
                   pythonpath=str(tree))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(libdir / "libaclnn.so")


def test_colon_separated_list_like_cann(tmp_path):
    libdir = os.path.dirname(LIBRARY)
    split = [os.path.join(libdir, name) for name in ("libascendcl.so", "libnnopbase.so", "libopapi.so")]
    if not all(os.path.exists(p) for p in split):  # a bundled copy has no aliases: make them
        for p in split:
            alias = tmp_path / os.path.basename(p)
            shutil.copy(LIBRARY, str(alias))
        split = [str(tmp_path / os.path.basename(p)) for p in split]
    code = """
        import numpy as np, pyaclnn
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        with pyaclnn.Tensor.from_numpy(x) as t:
            assert (t.numpy() == x).all()
            assert pyaclnn.get_view_shape(t) == (2, 3)
        print(pyaclnn.LIBRARY_PATH)
    """
    proc = _python(code, {"PYACLNN_LIBRARY": ":".join(split)}, str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ":".join(split)


def test_missing_cdef_is_generated_from_the_headers(tmp_path):
    if not os.path.isdir(os.path.join(ROOT, "libaclnn", "include")):
        pytest.fail("source tree headers not found next to the package")
    tree = tmp_path / "tree"
    _copy_package(str(tree), with_cdef=False)
    os.symlink(os.path.join(ROOT, "libaclnn"), str(tree / "libaclnn"))
    os.symlink(os.path.join(ROOT, "tools"), str(tree / "tools"))
    code = """
        import pyaclnn, pyaclnn._core as core
        print(core.CDEF_SOURCE)
        print(len(pyaclnn.FUNCTIONS), pyaclnn.lib.ACL_BF16)
        print(callable(pyaclnn.aclnnPreluGetWorkspaceSize))
    """
    proc = _python(code, {"PYACLNN_LIBRARY": LIBRARY}, str(tmp_path), pythonpath=str(tree))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split("\n")
    assert "parsed at import" in lines[0]
    assert lines[1] == "%d 27" % len(pyaclnn.FUNCTIONS)
    assert lines[2] == "True"
