"""The cffi declarations: the generated ``_cdef`` module, or the headers parsed on the spot.

An installed pyaclnn carries ``pyaclnn/_cdef.py``, written at build time by ``tools/gen_cdef.py``
from the public headers (a pre-parsed, out-of-line ABI-mode ``ffi``).  When that module is missing
or older than the headers of the source tree the package sits in (someone used ``PYTHONPATH`` on a
checkout, or edited a header since the last build), the same generator runs now and the
declarations are parsed in-line.  That needs a C compiler as a preprocessor, which a source tree
needs anyway.

Exports ``ffi``, ``CDEF`` (text), ``FUNCTIONS`` (tuple of names), ``CONSTANTS`` ({name: int}) and
``SOURCE`` (where they came from, for error messages).
"""

import importlib.util
import os

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_SOURCE_TREE = os.path.dirname(_PACKAGE_DIR)
_INCLUDE_DIR = os.path.join(_SOURCE_TREE, "libaclnn", "include")
_GENERATOR = os.path.join(_SOURCE_TREE, "tools", "gen_cdef.py")
_GENERATED = os.path.join(_PACKAGE_DIR, "_cdef.py")


def _newest_header_mtime():
    newest = 0.0
    for root, _dirs, files in os.walk(_INCLUDE_DIR):
        for name in files:
            if name.endswith(".h"):
                newest = max(newest, os.path.getmtime(os.path.join(root, name)))
    return newest


def _source_tree_available():
    return os.path.isdir(_INCLUDE_DIR) and os.path.isfile(_GENERATOR)


def _generated_is_current():
    if not os.path.isfile(_GENERATED):
        return False
    if not _source_tree_available():
        return True          # installed package: nothing to compare against
    return os.path.getmtime(_GENERATED) >= _newest_header_mtime()


def _generate_now():
    import cffi

    spec = importlib.util.spec_from_file_location("_pyaclnn_gen_cdef", _GENERATOR)
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    result = generator.generate(_INCLUDE_DIR)
    ffi = cffi.FFI()
    ffi.cdef(result.cdef)
    return ffi, result.cdef, tuple(result.functions), dict(result.constants)


if _generated_is_current():
    from ._cdef import ffi, CDEF, FUNCTIONS, CONSTANTS  # noqa: F401
    SOURCE = _GENERATED
elif _source_tree_available():
    ffi, CDEF, FUNCTIONS, CONSTANTS = _generate_now()
    SOURCE = "headers in %s (parsed at import)" % _INCLUDE_DIR
else:
    raise ImportError(
        "pyaclnn: the cffi declarations are missing: neither %s nor the headers in %s exist. "
        "Reinstall with `pip install .` from the libaclnn source tree." % (_GENERATED, _INCLUDE_DIR))
