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


def check_error_count():
    """The errors ACLNN_CHECK (docs/checking.md) has reported in this process so far: 0 when
    checking is off (and on a real CANN, which has no checking mode)."""
    return int(lib.aclnnCpuCheckErrorCount()) if drives_libaclnn() else 0


def check_tools():
    """The ACLNN_CHECK tools on in this process, by name (an empty set when checking is off)."""
    bits = int(lib.aclnnCpuCheckTools()) if drives_libaclnn() else 0
    return {name for bit, name in ((1, "memcheck"), (2, "initcheck"), (4, "racecheck"),
                                   (8, "leakcheck")) if bits & bit}


def call_acl(name, *args):
    """Call a runtime function and raise AclError on a non-zero aclError."""
    _errors.check_acl(function(name)(*args), name)


def call_aclnn(name, *args):
    """Call a meta/operator function and raise AclnnError on a non-zero aclnnStatus."""
    _errors.check_aclnn(function(name)(*args), name)


# Bumped by set_soc_version; part of pyaclnn's executor-cache key (_dispatch), with the calling
# thread's own selection (thread_soc.name).
soc_epoch = 0


class _ThreadSoc(threading.local):
    name = None      # the calling thread's own product (set_thread_soc_version), or None


thread_soc = _ThreadSoc()


def set_soc_version(name):
    """Select the emulated product (SoC) for the whole process: a family name ("Ascend310P",
    "Ascend910", "Ascend910B", "Ascend910_93", "Ascend950") or a card's name ("Ascend910B2",
    "Ascend310P3", ...); None restores the process default (ACLNN_SOC_VERSION, else an A2 card).
    A thread's own selection (:func:`set_thread_soc_version`, :func:`soc`) wins over it in that
    thread.  libaclnn only (``aclnnCpuSetSocVersion``); an unknown name raises
    ParamInvalidError (161002) and changes nothing."""
    global soc_epoch
    call_aclnn("aclnnCpuSetSocVersion", ffi.NULL if name is None else str(name).encode("utf-8"))
    # An executor keeps the product it was planned on: cached ones must not serve the new one.
    soc_epoch += 1


def set_thread_soc_version(name):
    """Select the emulated product for the calling thread only (``aclnnCpuSetThreadSocVersion``):
    its calls, ``soc_name()`` and the max-pool mask layout follow it, other threads keep theirs.
    None (or "") makes the thread follow the process's selection again.  Names as for
    :func:`set_soc_version`; an unknown one raises ParamInvalidError and changes nothing."""
    text = None if name is None or name == "" else str(name)
    call_aclnn("aclnnCpuSetThreadSocVersion", ffi.NULL if text is None else text.encode("utf-8"))
    thread_soc.name = text


class soc:
    """``with pyaclnn.soc("Ascend910"): ...`` runs the block's calls on that product, in the
    calling thread only (:func:`set_thread_soc_version`); the thread's previous selection comes
    back when the block ends, however it ends.  ``soc(None)`` follows the process's selection
    for the block.  Blocks nest."""

    __slots__ = ("name", "_previous")

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self._previous = thread_soc.name
        set_thread_soc_version(self.name)
        return self

    def __exit__(self, *exc):
        set_thread_soc_version(self._previous)
        return False


def current_product():
    """The product the calling thread's calls run on now, as a name :class:`soc` takes back
    (what ``aclrtGetSocName`` reports), or None when pyaclnn drives a real CANN or no valid
    product is selected: what a saved forward records for its backward.  Remembered per
    selection (the process's, counted by ``soc_epoch``, and the thread's own), as the eager
    lanes key their executors: every forward of a training step asks."""
    key = (soc_epoch, thread_soc.name)
    product = _products.get(key, _UNKNOWN)
    if product is _UNKNOWN:
        product = soc_name() if drives_libaclnn() else None
        if len(_products) >= 64:
            _products.clear()
        _products[key] = product
    return product


_products = {}        # (soc_epoch, the thread's own selection) -> current_product()
_UNKNOWN = object()


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
