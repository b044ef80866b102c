"""Every status code becomes an exception here, and only here.

Two families of codes exist in the ABI:

* ``aclnnStatus`` from the meta API and the operators (``aclnn/opdev/op_errno.h``).  Raised as
  :class:`AclnnError` or one of its subclasses, chosen by code:

  ============================  =======================================================
  class                         codes
  ============================  =======================================================
  :class:`ParamNullptrError`    161001 ``ACLNN_ERR_PARAM_NULLPTR``
  :class:`ParamInvalidError`    161002 ``ACLNN_ERR_PARAM_INVALID``
  :class:`ParamError`           any other 1xxxxx (base of the two above)
  :class:`RuntimeError_`        3xxxxx, e.g. 361001 ``ACLNN_ERR_RUNTIME_ERROR``
  :class:`InnerError`           5xxxxx, e.g. 561103 ``ACLNN_ERR_INNER_NULLPTR``
  ============================  =======================================================

* ``aclError`` from the runtime (``acl/acl_base_rt.h``, ``rt_error_codes.h``).  Raised as
  :class:`AclError`, or by the runtime's own code classes: :class:`AclParamError` (1xxxxx, the
  caller or the environment), :class:`AclResourceError` (2xxxxx, resources or unsupported),
  :class:`AclStateError` (3xxxxx), :class:`AclInternalError` (5xxxxx).

Each class also derives from the matching Python built-in, so code that knows nothing of
pyaclnn can catch it: the parameter classes (:class:`ParamError` and below, :class:`AclParamError`)
are ``ValueError``s, the runtime and internal ones (:class:`RuntimeError_`, :class:`InnerError`,
:class:`AclResourceError`, :class:`AclStateError`, :class:`AclInternalError`) ``RuntimeError``s.
A bad Python type (a float where an int is meant) is refused before the library is called, with
a plain ``TypeError`` naming the argument.

Every exception carries ``.code`` (int), ``.name`` (the C constant's name, or ``"UNKNOWN"``),
``.message`` (the text ``aclGetRecentErrMsg`` returned, or ``None``) and ``.func`` (the C function
that failed).  Names come from the constants in the cdef, so they follow the headers.
"""


class Error(Exception):
    """Root of every pyaclnn status exception."""

    family = "status"

    def __init__(self, code, name=None, message=None, func=None):
        self.code = int(code)
        self.name = name if name is not None else _lookup_name(self.code, self._names())
        self.message = message
        self.func = func
        super().__init__(self._describe())

    @staticmethod
    def _names():
        return {}

    def _describe(self):
        where = "%s failed" % self.func if self.func else "call failed"
        text = "%s with %s %d (%s)" % (where, self.family, self.code, self.name)
        if self.message:
            text += ": " + self.message
        return text

    def __reduce__(self):
        return (type(self), (self.code, self.name, self.message, self.func))


class AclnnError(Error):
    """An aclnn API (meta function or operator phase) returned a non-zero aclnnStatus."""

    family = "aclnnStatus"

    @staticmethod
    def _names():
        return ACLNN_STATUS_NAMES


class ParamError(AclnnError, ValueError):
    """A 1xxxxx aclnnStatus: the caller passed something wrong (a ``ValueError`` too)."""


class ParamNullptrError(ParamError):
    """161001 ACLNN_ERR_PARAM_NULLPTR: a required argument was NULL."""


class ParamInvalidError(ParamError):
    """161002 ACLNN_ERR_PARAM_INVALID: a dtype, shape, format or attribute check failed."""


class RuntimeError_(AclnnError, RuntimeError):
    """A 3xxxxx aclnnStatus (361001 ACLNN_ERR_RUNTIME_ERROR): a runtime call inside the API failed."""


class InnerError(AclnnError, RuntimeError):
    """A 5xxxxx aclnnStatus (5610xx/5611xx): an internal error of the library."""


class AclError(Error):
    """A runtime (acl/aclrt) function returned a non-zero aclError."""

    family = "aclError"

    @staticmethod
    def _names():
        return ACL_ERROR_NAMES


class AclParamError(AclError, ValueError):
    """A 1xxxxx aclError: wrong argument or environment (e.g. 100000, 107000 codes)."""


class AclResourceError(AclError, RuntimeError):
    """A 2xxxxx aclError: out of resources, or not supported here (e.g. 207001 allocation)."""


class AclStateError(AclError, RuntimeError):
    """A 3xxxxx aclError: a business-state error (queue full or empty)."""


class AclInternalError(AclError, RuntimeError):
    """A 5xxxxx aclError: internal or asynchronous task failure (e.g. 507015)."""


# Filled from the cdef by install_names(); {code: name}.
ACLNN_STATUS_NAMES = {}
ACL_ERROR_NAMES = {}

_DEPRECATED = ("ACL_ERROR_NONE", "ACL_RT_SUCCESS", "ACLNN_ERR_INNER_KEY_CONFILICT")


def _lookup_name(code, table):
    return table.get(code, "UNKNOWN")


def install_names(constants):
    """Build the code -> name tables from the cdef's constants (called once at import)."""
    ACLNN_STATUS_NAMES.clear()
    ACL_ERROR_NAMES.clear()
    preferred = sorted(constants.items(), key=lambda kv: (kv[0] in _DEPRECATED, kv[0]))
    for name, value in preferred:
        if name == "ACLNN_SUCCESS" or name.startswith("ACLNN_ERR_"):
            ACLNN_STATUS_NAMES.setdefault(value, name)
        elif name == "ACL_SUCCESS" or name.startswith("ACL_ERROR_"):
            ACL_ERROR_NAMES.setdefault(value, name)
    ACLNN_STATUS_NAMES.setdefault(0, "ACLNN_SUCCESS")
    ACL_ERROR_NAMES.setdefault(0, "ACL_SUCCESS")


def aclnn_error_class(code):
    """The exception class for an aclnnStatus code."""
    if code == 161001:
        return ParamNullptrError
    if code == 161002:
        return ParamInvalidError
    family = {1: ParamError, 3: RuntimeError_, 5: InnerError}
    return family.get(code // 100000, AclnnError)


def acl_error_class(code):
    """The exception class for an aclError code."""
    family = {1: AclParamError, 2: AclResourceError, 3: AclStateError, 5: AclInternalError}
    return family.get(code // 100000, AclError)


_recent_message = None  # set by __init__: a function returning aclGetRecentErrMsg() as str/None


def set_message_source(func):
    global _recent_message
    _recent_message = func


def _message():
    return _recent_message() if _recent_message is not None else None


def check_aclnn(status, func):
    """Raise the matching AclnnError when status != 0 (with the recent error message)."""
    if status != 0:
        status = int(status)
        raise aclnn_error_class(status)(status, None, _message(), func)


def check_acl(code, func):
    """Raise the matching AclError when code != 0 (with the recent error message)."""
    if code != 0:
        code = int(code)
        raise acl_error_class(code)(code, None, _message(), func)
