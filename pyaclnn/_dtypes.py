"""Map between numpy dtypes and ``aclDataType``.

=================  ========================  ==================
aclDataType        numpy                     strings accepted
=================  ========================  ==================
ACL_FLOAT          float32                   float32 fp32 float f32
ACL_FLOAT16        float16                   float16 fp16 half f16
ACL_BF16           ml_dtypes.bfloat16        bfloat16 bf16
ACL_DOUBLE         float64                   float64 fp64 double f64
ACL_INT8/16/32/64  int8/16/32/64             int8 ... int64 (also i8 ... i64)
ACL_UINT8/16/32/64 uint8/16/32/64            uint8 ... uint64
ACL_BOOL           bool                      bool
ACL_COMPLEX64      complex64                 complex64
ACL_COMPLEX128     complex128                complex128
ACL_FLOAT8_E5M2    ml_dtypes.float8_e5m2     float8_e5m2
ACL_FLOAT8_E4M3FN  ml_dtypes.float8_e4m3fn   float8_e4m3fn
=================  ========================  ==================

``ml_dtypes`` is needed only for bf16 and the float8 types; asking for them without it raises a
clear ImportError.  ``torch.float32``-style objects are accepted by their name.
"""

import numpy as np

try:
    import ml_dtypes
except ImportError:  # bf16 is then unavailable, everything else works
    ml_dtypes = None

# aclDataType values (CANN's acl_base.h); checked against the cdef by the tests.
_ACL = {
    "float32": 0, "float16": 1, "int8": 2, "int32": 3, "uint8": 4, "int16": 6, "uint16": 7,
    "uint32": 8, "int64": 9, "uint64": 10, "float64": 11, "bool": 12, "complex64": 16,
    "complex128": 17, "bfloat16": 27, "float8_e5m2": 35, "float8_e4m3fn": 36,
}
_ACL_NAME = {
    0: "ACL_FLOAT", 1: "ACL_FLOAT16", 2: "ACL_INT8", 3: "ACL_INT32", 4: "ACL_UINT8", 6: "ACL_INT16",
    7: "ACL_UINT16", 8: "ACL_UINT32", 9: "ACL_INT64", 10: "ACL_UINT64", 11: "ACL_DOUBLE",
    12: "ACL_BOOL", 16: "ACL_COMPLEX64", 17: "ACL_COMPLEX128", 27: "ACL_BF16",
    35: "ACL_FLOAT8_E5M2", 36: "ACL_FLOAT8_E4M3FN",
}
_ALIASES = {
    "fp32": "float32", "float": "float32", "f32": "float32", "single": "float32",
    "fp16": "float16", "half": "float16", "f16": "float16",
    "bf16": "bfloat16",
    "fp64": "float64", "double": "float64", "f64": "float64",
    "i8": "int8", "i16": "int16", "short": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
    "bool_": "bool", "cfloat": "complex64", "cdouble": "complex128",
}
_ML_DTYPES_NAMES = ("bfloat16", "float8_e5m2", "float8_e4m3fn")


def _numpy_for_name(name):
    if name in _ML_DTYPES_NAMES:
        if ml_dtypes is None:
            raise ImportError("pyaclnn: %s needs the ml_dtypes package (pip install ml_dtypes)" % name)
        return np.dtype(getattr(ml_dtypes, name))
    return np.dtype(name)


def _canonical_name(dtype):
    """The canonical string name of anything that designates a dtype (None if unknown)."""
    if isinstance(dtype, str):
        name = dtype.lower().strip()
        if name.startswith("torch."):
            name = name[len("torch."):]
        if name.startswith("acl_"):
            by_acl = {v.lower(): k for k, v in _ACL_NAME.items()}
            if name in by_acl:
                return _canonical_of_code(by_acl[name])
        return _ALIASES.get(name, name) if _ALIASES.get(name, name) in _ACL else None
    if isinstance(dtype, (int, np.integer)) and not isinstance(dtype, bool):
        return _canonical_of_code(int(dtype))
    if type(dtype).__module__.startswith("torch"):
        return _canonical_name(str(dtype))
    try:
        npdt = np.dtype(dtype)
    except TypeError:
        return None
    name = npdt.name
    if name == "bool":
        return "bool"
    return name if name in _ACL else None


def _canonical_of_code(code):
    for name, value in _ACL.items():
        if value == code:
            return name
    return None


def acl_dtype(dtype):
    """The aclDataType (int) for a numpy dtype, array, ml_dtypes type, string or acl code."""
    if isinstance(dtype, np.ndarray):
        dtype = dtype.dtype
    name = _canonical_name(dtype)
    if name is None:
        raise TypeError("pyaclnn: no aclDataType for %r; supported: %s"
                        % (dtype, ", ".join(sorted(_ACL))))
    return _ACL[name]


def numpy_dtype(dtype):
    """The numpy dtype for an aclDataType code (or anything acl_dtype accepts)."""
    name = _canonical_name(dtype)
    if name is None:
        raise TypeError("pyaclnn: no numpy dtype for %r; supported: %s"
                        % (dtype, ", ".join(sorted(_ACL))))
    return _numpy_for_name(name)


def dtype_name(code):
    """The C enumerator name of an aclDataType code, e.g. 'ACL_BF16'."""
    return _ACL_NAME.get(int(code), "aclDataType(%d)" % int(code))


def supported_dtypes():
    """All aclDataType codes pyaclnn can map to numpy (the float8 ones only with ml_dtypes)."""
    return [code for name, code in _ACL.items()
            if name not in _ML_DTYPES_NAMES or ml_dtypes is not None]


def is_floating(dtype):
    name = _canonical_name(dtype)
    return name in ("float16", "float32", "float64", "bfloat16", "float8_e5m2", "float8_e4m3fn")


def native_byte_order(array):
    """``array`` itself when its dtype is in the machine's byte order, else a converted copy.

    The library reads every element in the machine's order; a big-endian array (``'>f4'``) read
    in place would give other numbers with no error, so it is converted first."""
    dtype = array.dtype
    if dtype.isnative:
        return array
    return array.astype(dtype.newbyteorder("="))
