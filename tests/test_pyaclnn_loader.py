"""Finding the library and the declarations, in fresh interpreters.

* a bogus PYACLNN_LIBRARY fails with LibraryNotFoundError naming the path it tried;
* a package with no bundled library and no build tree lists every default path it tried;
* a colon-separated list (how CANN's split libascendcl/libnnopbase/libopapi is loaded) works,
  here with libaclnn's CANN-named aliases;
* a checkout's generated declarations are found in <tree>/$ACLNN_BUILD_DIR/pyaclnn/_cdef.py, then
  <tree>/build/pyaclnn/_cdef.py (the build writes nothing into the package), one older than the
  headers is skipped;
* without any generated _cdef.py, a source tree's headers are parsed at import.
"""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import pyaclnn
import pyaclnn._core as core

PACKAGE_DIR = os.path.dirname(os.path.abspath(pyaclnn.__file__))
ROOT = os.path.dirname(PACKAGE_DIR)
LIBRARY = os.path.realpath(pyaclnn.LIBRARY_PATH.split(":")[0])
GENERATOR = os.path.join(ROOT, "tools", "gen_cdef.py")


def _python(code, env_updates, cwd, pythonpath=None):
    env = {k: v for k, v in os.environ.items() if k not in ("PYACLNN_LIBRARY", "ACLNN_BUILD_DIR")}
    env.update(env_updates)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=120)


def _write_cdef(path):
    """The generated declarations at path: a copy of the ones in use, else generated now."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.isfile(core.CDEF_SOURCE):
        shutil.copy(core.CDEF_SOURCE, path)
    else:
        subprocess.check_call([sys.executable, GENERATOR, "--out", path], stdout=subprocess.DEVNULL)
    return path


def _copy_package(dest, with_cdef=True):
    """A copy of the pure-Python package (no library) under dest/pyaclnn; with_cdef: with the
    declarations in the package, as a wheel has them."""
    target = os.path.join(dest, "pyaclnn")
    shutil.copytree(PACKAGE_DIR, target,
                    ignore=shutil.ignore_patterns("_lib", "_cdef.py", "__pycache__"))
    if with_cdef:
        _write_cdef(os.path.join(target, "_cdef.py"))
    return target


def _symlink_sources(tree):
    """The checkout's headers and generator next to a copied package: a source tree."""
    os.symlink(os.path.join(ROOT, "libaclnn"), str(tree / "libaclnn"))
    os.symlink(os.path.join(ROOT, "tools"), str(tree / "tools"))


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
    _symlink_sources(tree)
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


CDEF_SOURCE_CODE = "import pyaclnn, pyaclnn._core as core; print(core.CDEF_SOURCE)"


def test_checkout_cdef_is_found_in_the_build_directory(tmp_path):
    """A checkout's package has no _cdef.py: make and an editable install write it under build/."""
    tree = tmp_path / "tree"
    _copy_package(str(tree), with_cdef=False)
    _symlink_sources(tree)
    default = _write_cdef(str(tree / "build" / "pyaclnn" / "_cdef.py"))
    proc = _python(CDEF_SOURCE_CODE, {"PYACLNN_LIBRARY": LIBRARY}, str(tmp_path),
                   pythonpath=str(tree))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == default

    # $ACLNN_BUILD_DIR comes first, as for the library
    other = _write_cdef(str(tree / "build-other" / "pyaclnn" / "_cdef.py"))
    proc = _python(CDEF_SOURCE_CODE, {"PYACLNN_LIBRARY": LIBRARY, "ACLNN_BUILD_DIR": "build-other"},
                   str(tmp_path), pythonpath=str(tree))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == other

    # a module older than the headers is skipped (here: both), the headers are parsed instead
    for path in (default, other):
        os.utime(path, (1, 1))
    proc = _python(CDEF_SOURCE_CODE, {"PYACLNN_LIBRARY": LIBRARY, "ACLNN_BUILD_DIR": "build-other"},
                   str(tmp_path), pythonpath=str(tree))
    assert proc.returncode == 0, proc.stderr
    assert "parsed at import" in proc.stdout


def test_the_package_in_a_checkout_holds_no_build_output():
    """The build leaves pyaclnn/ as checked in: the library and cdef come from build/."""
    if not os.path.isdir(os.path.join(ROOT, "libaclnn", "include")):
        pytest.skip("pyaclnn is installed, not used from a checkout")
    assert not os.path.exists(os.path.join(PACKAGE_DIR, "_lib"))
    assert not os.path.exists(os.path.join(PACKAGE_DIR, "_cdef.py"))
    assert not os.path.isfile(os.path.join(ROOT, "pyaclnn.egg-info", "PKG-INFO"))
