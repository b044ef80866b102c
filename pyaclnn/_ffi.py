"""The cffi declarations: a generated ``_cdef`` module, or the headers parsed on the spot.

``tools/gen_cdef.py`` turns the public headers into a module holding a pre-parsed, out-of-line
ABI-mode ``ffi``.  The first of these that exists and is current is used:

1. ``pyaclnn/_cdef.py``, which a wheel (``pip install``) carries;
2. ``<source tree>/$ACLNN_BUILD_DIR/pyaclnn/_cdef.py``, then ``<source tree>/build/pyaclnn/_cdef.py``,
   written by ``make`` or an editable install for a checkout (the build leaves the package
   itself untouched).

In a source tree a module older than a header is skipped.  When none is left (a checkout used
through ``PYTHONPATH`` before any build, or a header edited since), the same generator runs now and
the declarations are parsed in-line.  That needs a C compiler as a preprocessor, which a source
tree needs anyway.

Exports ``ffi``, ``CDEF`` (text), ``FUNCTIONS`` (tuple of names), ``CONSTANTS`` ({name: int}) and
``SOURCE`` (where they came from, for error messages).
"""

import importlib.util
import os

from ._loader import source_build_dirs

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_SOURCE_TREE = os.path.dirname(_PACKAGE_DIR)
_INCLUDE_DIR = os.path.join(_SOURCE_TREE, "libaclnn", "include")
_GENERATOR = os.path.join(_SOURCE_TREE, "tools", "gen_cdef.py")
_BUNDLED = os.path.join(_PACKAGE_DIR, "_cdef.py")


def candidate_paths():
    """Where a generated module is looked for, in order."""
    return [_BUNDLED] + [os.path.join(d, "pyaclnn", "_cdef.py") for d in source_build_dirs()]


def _newest_header_mtime():
    newest = 0.0
    for root, _dirs, files in os.walk(_INCLUDE_DIR):
        for name in files:
            if name.endswith(".h"):
                newest = max(newest, os.path.getmtime(os.path.join(root, name)))
    return newest


def _source_tree_available():
    return os.path.isdir(_INCLUDE_DIR) and os.path.isfile(_GENERATOR)


def _current(path, newest_header):
    if not os.path.isfile(path):
        return False
    return newest_header is None or os.path.getmtime(path) >= newest_header


def _load_generated(path):
    if path == _BUNDLED:
        from . import _cdef
        return _cdef
    spec = importlib.util.spec_from_file_location("pyaclnn._cdef", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _generate_now():
    import cffi

    spec = importlib.util.spec_from_file_location("_pyaclnn_gen_cdef", _GENERATOR)
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    result = generator.generate(_INCLUDE_DIR)
    ffi = cffi.FFI()
    ffi.cdef(result.cdef)
    return ffi, result.cdef, tuple(result.functions), dict(result.constants)


def _find():
    # An installed package has no headers next to it: nothing to compare against.
    newest_header = _newest_header_mtime() if _source_tree_available() else None
    for path in candidate_paths():
        if _current(path, newest_header):
            module = _load_generated(path)
            return module.ffi, module.CDEF, module.FUNCTIONS, module.CONSTANTS, path
    if newest_header is not None:
        ffi, cdef, functions, constants = _generate_now()
        return ffi, cdef, functions, constants, "headers in %s (parsed at import)" % _INCLUDE_DIR
    raise ImportError(
        "pyaclnn: the cffi declarations are missing: none of %s exists, and there are no headers "
        "in %s to parse. Reinstall with `pip install .` from the libaclnn source tree, or run "
        "`make` there." % (", ".join(candidate_paths()), _INCLUDE_DIR))


ffi, CDEF, FUNCTIONS, CONSTANTS, SOURCE = _find()
