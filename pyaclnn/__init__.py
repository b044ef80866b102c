"""pyaclnn: drive the CANN aclnn two-phase API from Python.

The same package drives libaclnn (the CPU implementation) or, by pointing ``PYACLNN_LIBRARY`` at
CANN's libraries, an NPU.  Layers, from raw to friendly:

``pyaclnn.ffi`` / ``pyaclnn.lib``
    cffi objects with the exact C names (``lib.aclrtMalloc``, ``lib.ACL_FLOAT``), generated from
    the public headers.
handle classes
    :class:`Tensor`, :class:`IntArray`, :class:`FloatArray`, :class:`BoolArray`, :class:`Scalar`,
    :class:`TensorList`, :class:`ScalarList`, :class:`Stream`, :class:`Event`,
    :class:`DeviceBuffer`, :class:`Executor`: context managers that free their C object on
    ``close()`` and keep the memory they wrap alive.
two-phase calls
    ``pyaclnn.aclnnXxxGetWorkspaceSize(...)`` -> ``(workspace_size, executor)`` and
    ``pyaclnn.aclnnXxx(workspace, workspace_size, executor, stream=None)`` for every operator in
    the headers; failures raise :class:`AclnnError` subclasses; ``run_op`` does it all in one call.
``pyaclnn.functional``
    numpy in, numpy out: ``pyaclnn.functional.prelu(x, weight)``.
``pyaclnn.testing``
    comparison helpers and strided layouts for tests.
``pyaclnn.mask_from_indices`` / ``pyaclnn.indices_from_mask``
    convert between PyTorch's int64 max-pool indices and CANN's INT8 max-pool mask.

Quick start::

    import numpy as np, pyaclnn
    x = np.random.rand(1, 1, 3, 3).astype(np.float32)
    with pyaclnn.Tensor.from_numpy(x) as t, pyaclnn.Tensor.empty((1, 1, 5, 5), np.float32) as out:
        pyaclnn.run_op("ReplicationPad2d", t, [1, 1, 1, 1], out)
        print(out.numpy())
"""

from ._core import (ffi, lib, init, current_device, recent_error_message,  # noqa: F401
                    set_soc_version, set_thread_soc_version, soc, soc_name,
                    check_error_count, check_tools,
                    LIBRARY_PATH, CDEF, FUNCTIONS, CONSTANTS)
from ._loader import LibraryNotFoundError  # noqa: F401
from ._errors import (Error, AclnnError, ParamError, ParamNullptrError,  # noqa: F401
                      ParamInvalidError, RuntimeError_, InnerError, AclError, AclParamError,
                      AclResourceError, AclStateError, AclInternalError,
                      ACLNN_STATUS_NAMES, ACL_ERROR_NAMES)
from ._dtypes import acl_dtype, numpy_dtype, dtype_name, supported_dtypes  # noqa: F401
from ._runtime import (DeviceBuffer, Stream, Event, synchronize,  # noqa: F401
                       synchronize_device, memcpy)
from ._meta import (Tensor, IntArray, FloatArray, BoolArray, Scalar,  # noqa: F401
                    TensorList, ScalarList, acl_format, contiguous_strides, free_array,
                    get_view_shape, get_view_strides, get_storage_shape, get_view_offset,
                    get_format, get_data_type)
from ._ops import Executor, run_op, two_phase_names  # noqa: F401
from .mask import mask_from_indices, indices_from_mask, mask_shape  # noqa: F401
from ._dispatch import empty_cache  # noqa: F401

from ._version import __version__  # noqa: F401  (the one place it is written)

_LAZY_SUBMODULES = ("functional", "testing", "nn", "torch_ops")


def __getattr__(name):
    """Two-phase calls by CANN name, and the lazily imported submodules."""
    from . import _ops
    wrapper = _ops.get_wrapper(name)
    if wrapper is not None:
        globals()[name] = wrapper
        return wrapper
    if name in _LAZY_SUBMODULES:
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError("module 'pyaclnn' has no attribute %r" % name)


def __dir__():
    return sorted(set(globals()) | set(two_phase_names()) | set(_LAZY_SUBMODULES))
