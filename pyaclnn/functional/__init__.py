"""One-call operators: numpy arrays in, numpy arrays out; torch tensors in, torch tensors out.

The operators live in ``pyaclnn/_operators/_<op>.py`` (the numpy/C path), each listing its public
functions in ``__all__``; this package imports every such module and re-exports those names, so
``pyaclnn.functional.replication_pad2d(x, padding)`` works without knowing the module.

A module that fails to import does not take the others down: the failure is reported with a
warning at import, and using one of the missing names raises ImportError naming the module and the
original error.

This package is the top of the operator layers (see pyaclnn/_operators/__init__.py): a call with
a torch tensor among its arguments goes through the operator's PyTorch custom operator,
``torch.ops.aclnn.<name>`` (pyaclnn.torch_ops, imported on the first such call), so that
autograd, functorch, torch.compile, torch.export and torch.jit.trace see one operator; numpy
arrays and everything else take the module's function directly, a repeated numpy call through
its lane (pyaclnn._numpy_lane).  Nothing below imports this
package.
"""

import functools
import importlib
import os
import sys
import warnings

from numpy import ndarray

from .. import _operators
from .._interop import has_instance
from .._numpy_lane import make_entry as make_numpy_entry

__all__ = []
_BROKEN = {}   # module name -> the exception its import raised


def _load_operator_modules():
    here = os.path.dirname(os.path.abspath(_operators.__file__))
    for filename in sorted(os.listdir(here)):
        if not (filename.startswith("_") and filename.endswith(".py")) or filename == "__init__.py":
            continue
        module_name = filename[:-3]
        try:
            module = importlib.import_module("." + module_name, _operators.__name__)
        except Exception as exc:  # keep the other operators usable, but say so loudly
            _BROKEN[module_name] = exc
            warnings.warn("pyaclnn.functional: %s failed to import: %r" % (module_name, exc),
                          RuntimeWarning, stacklevel=2)
            continue
        for name in getattr(module, "__all__", ()):
            globals()[name] = _torch_routed(name, getattr(module, name))
            __all__.append(name)


# Names that have a torch.ops.aclnn operator (pyaclnn._torch_library.OPERATORS); listed here so
# that a call without torch never imports it.
_TORCH_OPERATORS = frozenset((
    "replication_pad2d", "replication_pad2d_backward", "upsample_nearest_exact1d",
    "upsample_nearest_exact1d_backward", "max_pool2d_with_mask", "max_pool2d_with_mask_backward",
    "max_pool2d_with_indices", "max_pool2d_with_indices_backward", "im2col", "im2col_backward",
    "prelu", "prelu_backward"))
_entry = [None]   # pyaclnn.torch_ops.functional_entry, once torch_ops is imported


def _torch_routed(name, function):
    """``function``, or the torch custom operator when an argument is a torch tensor."""
    if name not in _TORCH_OPERATORS:
        return function

    @functools.wraps(function)
    def call(*args, **kwargs):
        if args and type(args[0]) is ndarray:     # a numpy call: its lane, if it has one
            return _numpy_entry(name, function, args, kwargs)
        entry = _entry[0]
        if entry is not None:      # torch_ops is loaded: its entry, without _usual_path's frame
            return entry(name, function, args, kwargs)
        return _usual_path(name, function, args, kwargs)
    call.__wrapped_operator__ = function
    return call


def _usual_path(name, function, args, kwargs):
    """A call that takes no numpy lane: through torch_ops when an argument is a torch tensor,
    else ``function`` itself."""
    entry = _entry[0]
    if entry is not None:      # torch_ops tells the calls apart (and takes the quick ones)
        return entry(name, function, args, kwargs)
    torch = sys.modules.get("torch")
    if torch is not None and has_instance(torch.Tensor, args, kwargs):
        return _torch_entry()(name, function, args, kwargs)
    return function(*args, **kwargs)


# a call whose first argument is a numpy array takes its lane (pyaclnn._numpy_lane) whether or
# not torch is in use
_numpy_entry = make_numpy_entry(_usual_path)


def _torch_entry():
    """pyaclnn.torch_ops.functional_entry (torch_ops is imported on the first torch call):
    ``entry(name, function, args, kwargs)`` runs the call through torch_ops when an argument
    is a torch tensor, else ``function`` itself."""
    entry = _entry[0]
    if entry is None:
        from .. import torch_ops
        entry = _entry[0] = torch_ops.functional_entry
    return entry


_load_operator_modules()


def __getattr__(name):
    if _BROKEN:
        details = "; ".join("%s: %r" % kv for kv in _BROKEN.items())
        raise ImportError("pyaclnn.functional has no %r; these operator modules failed to import: %s"
                          % (name, details))
    raise AttributeError("module 'pyaclnn.functional' has no attribute %r" % name)
