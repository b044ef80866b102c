"""One-call operators: numpy arrays in, numpy arrays out.

Each operator pair lives in its own module ``pyaclnn/functional/_<op>.py`` that lists its public
functions in ``__all__``; this package imports every such module and re-exports those names, so
``pyaclnn.functional.replication_pad2d(x, padding)`` works without knowing the module.

A module that fails to import does not take the others down: the failure is reported with a
warning at import, and using one of the missing names raises ImportError naming the module and the
original error.
"""

import importlib
import os
import warnings

__all__ = []
_BROKEN = {}   # module name -> the exception its import raised


def _load_operator_modules():
    here = os.path.dirname(os.path.abspath(__file__))
    for filename in sorted(os.listdir(here)):
        if not (filename.startswith("_") and filename.endswith(".py")) or filename == "__init__.py":
            continue
        module_name = filename[:-3]
        try:
            module = importlib.import_module("." + module_name, __name__)
        except Exception as exc:  # keep the other operators usable, but say so loudly
            _BROKEN[module_name] = exc
            warnings.warn("pyaclnn.functional: %s failed to import: %r" % (module_name, exc),
                          RuntimeWarning, stacklevel=2)
            continue
        for name in getattr(module, "__all__", ()):
            globals()[name] = getattr(module, name)
            __all__.append(name)


_load_operator_modules()


def __getattr__(name):
    if _BROKEN:
        details = "; ".join("%s: %r" % kv for kv in _BROKEN.items())
        raise ImportError("pyaclnn.functional has no %r; these operator modules failed to import: %s"
                          % (name, details))
    raise AttributeError("module 'pyaclnn.functional' has no attribute %r" % name)
