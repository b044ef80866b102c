"""The raw binding: ``ffi``, ``lib``, ``init()`` and the status checks every layer uses."""

import threading

from . import _errors
from ._ffi import ffi, CDEF, FUNCTIONS, CONSTANTS, SOURCE as CDEF_SOURCE  # noqa: F401
from ._loader import load as _load

lib, LIBRARY_PATH, _keep_handles = _load(ffi)

_errors.install_names(CONSTANTS)


def recent_error_message():
    """aclGetRecentErrMsg() as a str, or None when there is none (reading clears it)."""
    try:
        text = lib.aclGetRecentErrMsg()
    except AttributeError:
        return None
    if text == ffi.NULL:
        return None
    return ffi.string(text).decode("utf-8", "replace")


_errors.set_message_source(recent_error_message)


def function(name):
    """lib.<name>, with a clear error when the library does not export it."""
    try:
        return getattr(lib, name)
    except AttributeError:
        declared = name in FUNCTIONS
        raise NotImplementedError(
            "%s is %s but the library %s does not export it"
            % (name, "declared in the headers" if declared else "not declared in the headers",
               LIBRARY_PATH)) from None


def drives_libaclnn():
    """Whether the library is libaclnn, where device memory is host memory.

    libaclnn exports its own ``aclnnCpu*`` extensions; CANN's libraries do not.  pyaclnn wraps
    the caller's arrays in place only then; on a real CANN it copies them (pyaclnn._dispatch).
    """
    return hasattr(lib, "aclnnCpuFreeArray")


def call_acl(name, *args):
    """Call a runtime function and raise AclError on a non-zero aclError."""
    _errors.check_acl(function(name)(*args), name)


def call_aclnn(name, *args):
    """Call a meta/operator function and raise AclnnError on a non-zero aclnnStatus."""
    _errors.check_aclnn(function(name)(*args), name)


# Bumped by set_soc_version; part of pyaclnn's executor-cache key (_dispatch).
soc_epoch = 0


def set_soc_version(name):
    """Select the emulated product (SoC) for the whole process: a family name ("Ascend310P",
    "Ascend910", "Ascend910B", "Ascend910_93", "Ascend950") or a card's name ("Ascend910B2",
    "Ascend310P3", ...); None restores the process default (ACLNN_SOC_VERSION, else an A2 card).
    libaclnn only (``aclnnCpuSetSocVersion``); an unknown name raises AclnnError (161002)."""
    global soc_epoch
    call_aclnn("aclnnCpuSetSocVersion", ffi.NULL if name is None else str(name).encode("utf-8"))
    # An executor keeps the product it was planned on: cached ones must not serve the new one.
    soc_epoch += 1


def soc_name():
    """aclrtGetSocName() as a str, or None when the library reports none."""
    text = lib.aclrtGetSocName()
    return None if text == ffi.NULL else ffi.string(text).decode("utf-8", "replace")


_state = threading.local()
_process_lock = threading.Lock()
_process_initialized = False


def init(device=0):
    """Initialise ACL once per process and select ``device`` for the calling thread.

    Calls ``aclInit(NULL)`` (a repeated-initialise code 100002 is ignored, as CANN documents) and
    ``aclrtSetDevice(device)``.  Idempotent: later calls with the same device do nothing.  Every
    pyaclnn object calls it implicitly, so scripts only need it to pick a device other than 0.
    """
    global _process_initialized
    if getattr(_state, "device", None) == device:
        return
    with _process_lock:
        if not _process_initialized:
            code = lib.aclInit(ffi.NULL)
            if code not in (0, lib.ACL_ERROR_REPEAT_INITIALIZE):
                _errors.check_acl(code, "aclInit")
            recent_error_message()  # a repeated-initialise note is not the user's error
            _process_initialized = True
    call_acl("aclrtSetDevice", device)
    _state.device = device


def ensure_init():
    if getattr(_state, "device", None) is None:
        init(0)


def current_device():
    return getattr(_state, "device", None)
