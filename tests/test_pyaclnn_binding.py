"""The generated cffi declarations against the library and against CANN's ABI values.

Every function the headers declare must be exported by the library, and the enum and constant
values in the declarations must be the numbers the CANN ABI fixes.  The expected numbers are typed
here from CANN's headers (acl_base.h, aclnn_base.h, acl_rt.h), independently of our own headers.
"""

import os
import re
import subprocess
import sys

import pytest

import pyaclnn
from pyaclnn import ffi, lib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ACL_DATA_TYPE = {
    "ACL_DT_UNDEFINED": -1, "ACL_FLOAT": 0, "ACL_FLOAT16": 1, "ACL_INT8": 2, "ACL_INT32": 3,
    "ACL_UINT8": 4, "ACL_INT16": 6, "ACL_UINT16": 7, "ACL_UINT32": 8, "ACL_INT64": 9,
    "ACL_UINT64": 10, "ACL_DOUBLE": 11, "ACL_BOOL": 12, "ACL_STRING": 13, "ACL_COMPLEX64": 16,
    "ACL_COMPLEX128": 17, "ACL_BF16": 27, "ACL_INT4": 29, "ACL_UINT1": 30, "ACL_COMPLEX32": 33,
    "ACL_HIFLOAT8": 34, "ACL_FLOAT8_E5M2": 35, "ACL_FLOAT8_E4M3FN": 36, "ACL_FLOAT8_E8M0": 37,
    "ACL_FLOAT6_E3M2": 38, "ACL_FLOAT6_E2M3": 39, "ACL_FLOAT4_E2M1": 40, "ACL_FLOAT4_E1M2": 41,
}

ACL_FORMAT = {
    "ACL_FORMAT_UNDEFINED": -1, "ACL_FORMAT_NCHW": 0, "ACL_FORMAT_NHWC": 1, "ACL_FORMAT_ND": 2,
    "ACL_FORMAT_NC1HWC0": 3, "ACL_FORMAT_FRACTAL_Z": 4, "ACL_FORMAT_NC1HWC0_C04": 12,
    "ACL_FORMAT_HWCN": 16, "ACL_FORMAT_NDHWC": 27, "ACL_FORMAT_FRACTAL_NZ": 29,
    "ACL_FORMAT_NCDHW": 30, "ACL_FORMAT_NDC1HWC0": 32, "ACL_FRACTAL_Z_3D": 33, "ACL_FORMAT_NC": 35,
    "ACL_FORMAT_NCL": 47, "ACL_FORMAT_FRACTAL_NZ_C0_16": 50, "ACL_FORMAT_FRACTAL_NZ_C0_32": 51,
    "ACL_FORMAT_FRACTAL_NZ_C0_2": 52, "ACL_FORMAT_FRACTAL_NZ_C0_4": 53,
    "ACL_FORMAT_FRACTAL_NZ_C0_8": 54,
}

ACLNN_STATUS = {
    "ACLNN_SUCCESS": 0, "ACLNN_ERR_PARAM_NULLPTR": 161001, "ACLNN_ERR_PARAM_INVALID": 161002,
    "ACLNN_ERR_RUNTIME_ERROR": 361001, "ACLNN_ERR_INNER": 561000,
    "ACLNN_ERR_INNER_INFERSHAPE_ERROR": 561001, "ACLNN_ERR_INNER_TILING_ERROR": 561002,
    "ACLNN_ERR_INNER_FIND_KERNEL_ERROR": 561003, "ACLNN_ERR_INNER_CREATE_EXECUTOR": 561101,
    "ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR": 561102, "ACLNN_ERR_INNER_NULLPTR": 561103,
    "ACLNN_ERR_INNER_WRONG_ATTR_INFO_SIZE": 561104, "ACLNN_ERR_INNER_KEY_CONFLICT": 561105,
    "ACLNN_ERR_INNER_KEY_CONFILICT": 561105, "ACLNN_ERR_INNER_INVALID_IMPL_MODE": 561106,
    "ACLNN_ERR_INNER_OPP_PATH_NOT_FOUND": 561107, "ACLNN_ERR_INNER_LOAD_JSON_FAILED": 561108,
    "ACLNN_ERR_INNER_JSON_VALUE_NOT_FOUND": 561109, "ACLNN_ERR_INNER_JSON_FORMAT_INVALID": 561110,
    "ACLNN_ERR_INNER_JSON_DTYPE_INVALID": 561111,
    "ACLNN_ERR_INNER_OPP_KERNEL_PKG_NOT_FOUND": 561112, "ACLNN_ERR_INNER_OP_FILE_INVALID": 561113,
    "ACLNN_ERR_INNER_ATTR_NUM_OUT_OF_BOUND": 561114, "ACLNN_ERR_INNER_ATTR_LEN_NOT_ENOUGH": 561115,
    "ACLNN_ERR_INNER_INPUT_NUM_IN_JSON_TOO_LARGE": 561116,
    "ACLNN_ERR_INNER_INPUT_JSON_IS_NULL": 561117,
    "ACLNN_ERR_INNER_STATIC_WORKSPACE_INVALID": 561118,
    "ACLNN_ERR_INNER_STATIC_BLOCK_DIM_INVALID": 561119,
}

ACL_ERRORS_SAMPLE = {
    "ACL_SUCCESS": 0, "ACL_ERROR_NONE": 0, "ACL_ERROR_INVALID_PARAM": 100000,
    "ACL_ERROR_UNINITIALIZE": 100001, "ACL_ERROR_REPEAT_INITIALIZE": 100002,
    "ACL_ERROR_INVALID_FILE": 100003, "ACL_ERROR_REPEAT_FINALIZE": 100037,
    "ACL_ERROR_PROF_REPEAT_SUBSCRIBE": 148046, "ACL_ERROR_INVALID_BUNDLE_MODEL_ID": 148053,
    "ACL_ERROR_BAD_ALLOC": 200000, "ACL_ERROR_API_NOT_SUPPORT": 200001,
    "ACL_ERROR_INVALID_DEVICE": 200002, "ACL_ERROR_STORAGE_OVER_LIMIT": 300000,
    "ACL_ERROR_INTERNAL_ERROR": 500000, "ACL_ERROR_FAILURE": 500001,
    "ACL_ERROR_RT_FAILURE": 500003, "ACL_ERROR_PROFILING_FAILURE": 500005,
    "ACL_RT_SUCCESS": 0, "ACL_ERROR_RT_PARAM_INVALID": 107000,
    "ACL_ERROR_RT_INVALID_DEVICEID": 107001, "ACL_ERROR_RT_CONTEXT_NULL": 107002,
    "ACL_ERROR_RT_STREAM_NO_CB_REG": 107015, "ACL_ERROR_RT_SYSPARAMOPT_NOT_SET": 107021,
    "ACL_ERROR_RT_DEVICE_TASK_ABORT": 107022, "ACL_ERROR_STREAM_CAPTURE_CONFLICT": 107032,
    "ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING": 107045,
    "ACL_ERROR_RT_FEATURE_NOT_SUPPORT": 207000, "ACL_ERROR_RT_MEMORY_ALLOCATION": 207001,
    "ACL_ERROR_RT_MEMORY_FREE": 207002, "ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED": 207021,
    "ACL_ERROR_RT_INTERNAL_ERROR": 507000, "ACL_ERROR_RT_REPORT_TIMEOUT": 507012,
    "ACL_ERROR_RT_AICORE_EXCEPTION": 507015, "ACL_ERROR_RT_STREAM_SYNC_TIMEOUT": 507046,
    "ACL_ERROR_RT_EVENT_SYNC_TIMEOUT": 507047, "ACL_ERROR_RT_COMM_OP_RETRY_FAIL": 507904,
    "ACL_ERROR_SNAPSHOT_LOCK_TIMEOUT": 507905, "ACL_ERROR_RT_CCU_EXCEPTION": 507916,
    "ACL_ERROR_GE_PARAM_INVALID": 145000, "ACL_ERROR_GE_MEMORY_ALLOCATION": 245000,
    "ACL_ERROR_GE_INTERNAL_ERROR": 545000, "ACL_ERROR_GE_REDEPLOYING": 545602,
}

RUNTIME_ENUMS = {
    "ACL_DEVICE": 0, "ACL_HOST": 1,
    "ACL_MEMCPY_HOST_TO_HOST": 0, "ACL_MEMCPY_HOST_TO_DEVICE": 1, "ACL_MEMCPY_DEVICE_TO_HOST": 2,
    "ACL_MEMCPY_DEVICE_TO_DEVICE": 3, "ACL_MEMCPY_DEFAULT": 4,
    "ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE": 5, "ACL_MEMCPY_INNER_DEVICE_TO_DEVICE": 6,
    "ACL_MEMCPY_INTER_DEVICE_TO_DEVICE": 7,
    "ACL_MEM_MALLOC_HUGE_FIRST": 0, "ACL_MEM_MALLOC_HUGE_ONLY": 1, "ACL_MEM_MALLOC_NORMAL_ONLY": 2,
    "ACL_MEM_MALLOC_HUGE_FIRST_P2P": 3, "ACL_MEM_MALLOC_HUGE_ONLY_P2P": 4,
    "ACL_MEM_MALLOC_NORMAL_ONLY_P2P": 5, "ACL_MEM_MALLOC_HUGE1G_ONLY": 6,
    "ACL_MEM_MALLOC_HUGE1G_ONLY_P2P": 7, "ACL_MEM_TYPE_LOW_BAND_WIDTH": 0x0100,
    "ACL_MEM_TYPE_HIGH_BAND_WIDTH": 0x1000, "ACL_MEM_ACCESS_USER_SPACE_READONLY": 0x100000,
    "ACL_DDR_MEM": 0, "ACL_HBM_MEM": 1, "ACL_HBM_MEM_P2P_NORMAL": 9, "ACL_MEM_P2P_HUGE1G": 17,
    "ACL_EVENT_STATUS_COMPLETE": 0, "ACL_EVENT_STATUS_NOT_READY": 1,
    "ACL_EVENT_RECORDED_STATUS_NOT_READY": 0, "ACL_EVENT_RECORDED_STATUS_COMPLETE": 1,
    "ACL_EVENT_WAIT_STATUS_COMPLETE": 0, "ACL_EVENT_WAIT_STATUS_RESERVED": 0xFFFF,
    "ACL_STREAM_STATUS_COMPLETE": 0, "ACL_STREAM_STATUS_NOT_READY": 1,
    "ACL_STREAM_STATUS_RESERVED": 0xFFFF,
    "ACL_CALLBACK_NO_BLOCK": 0, "ACL_CALLBACK_BLOCK": 1,
    "ACL_RT_OVERFLOW_MODE_SATURATION": 0, "ACL_RT_OVERFLOW_MODE_INFNAN": 1,
    "ACL_RT_THREAD_LEVEL": 0,
    "ACL_OPT_DETERMINISTIC": 0, "ACL_OPT_ENABLE_DEBUG_KERNEL": 1,
    "ACL_OPT_STRONG_CONSISTENCY": 2, "ACL_OPT_ENABLE_KERNEL_EARLY_START": 3,
    "ACL_DEBUG": 0, "ACL_INFO": 1, "ACL_WARNING": 2, "ACL_ERROR": 3,
    "ACL_MEMTYPE_DEVICE": 0, "ACL_MEMTYPE_HOST": 1,
    "ACL_PKG_NAME_CANN": 0, "ACL_PKG_NAME_DRIVER": 7,
    "ACL_MAJOR_VERSION": 1, "ACL_MINOR_VERSION": 17, "ACL_PATCH_VERSION": 0,
    "ACL_EVENT_SYNC": 0x1, "ACL_EVENT_CAPTURE_STREAM_PROGRESS": 0x2, "ACL_EVENT_TIME_LINE": 0x8,
    "ACL_EVENT_DEVICE_USE_ONLY": 0x10, "ACL_EVENT_EXTERNAL": 0x20, "ACL_EVENT_IPC": 0x40,
    "ACL_STREAM_FAST_LAUNCH": 0x1, "ACL_STREAM_FAST_SYNC": 0x2, "ACL_STREAM_PERSISTENT": 0x4,
    "ACL_STREAM_HUGE": 0x8, "ACL_STREAM_CPU_SCHEDULE": 0x10, "ACL_STREAM_DEVICE_USE_ONLY": 0x20,
    "ACL_CONTINUE_ON_FAILURE": 0, "ACL_STOP_ON_FAILURE": 1,
}

# The ten operators and the extra ops their headers declare.
OPERATORS = [
    "aclnnReplicationPad2d", "aclnnReplicationPad2dBackward", "aclnnReflectionPad2dBackward",
    "aclnnUpsampleNearestExact1d", "aclnnUpsampleNearestExact1dBackward",
    "aclnnMaxPool2dWithMask", "aclnnMaxPool2dWithMaskBackward", "aclnnMaxPool2dWithIndices",
    "aclnnMaxPool2dWithIndicesBackward", "aclnnIm2col", "aclnnIm2colBackward", "aclnnPrelu",
    "aclnnPreluBackward",
]


def test_every_declared_function_is_exported():
    missing = []
    for name in pyaclnn.FUNCTIONS:
        try:
            getattr(lib, name)
        except AttributeError:
            missing.append(name)
    assert not missing, "declared in the headers but not exported by %s: %s" % (
        pyaclnn.LIBRARY_PATH, missing)


def test_every_declared_function_resolves_in_a_fresh_dlopen():
    fresh = ffi.dlopen(pyaclnn.LIBRARY_PATH)
    for name in pyaclnn.FUNCTIONS:
        assert callable(getattr(fresh, name)), name


def test_declarations_cover_the_documented_api():
    declared = set(pyaclnn.FUNCTIONS)
    runtime = ["aclInit", "aclFinalize", "aclGetRecentErrMsg", "aclrtSetDevice", "aclrtResetDevice",
               "aclrtCreateStream", "aclrtDestroyStream", "aclrtSynchronizeStream", "aclrtMalloc",
               "aclrtFree", "aclrtMemcpy", "aclrtCreateEvent", "aclrtEventElapsedTime",
               "aclFloat16ToFloat", "aclFloatToFloat16", "aclDataTypeSize"]
    meta = ["aclCreateTensor", "aclDestroyTensor", "aclCreateIntArray", "aclCreateFloatArray",
            "aclCreateBoolArray", "aclCreateScalar", "aclCreateTensorList", "aclGetViewShape",
            "aclSetAclOpExecutorRepeatable", "aclDestroyAclOpExecutor", "aclSetInputTensorAddr",
            "aclSetRawTensorAddr", "aclnnInit", "aclnnFinalize"]
    two_phase = OPERATORS + [op + "GetWorkspaceSize" for op in OPERATORS]
    assert not [f for f in runtime + meta + two_phase if f not in declared]


@pytest.mark.parametrize("table", [ACL_DATA_TYPE, ACL_FORMAT, ACLNN_STATUS, ACL_ERRORS_SAMPLE,
                                   RUNTIME_ENUMS],
                         ids=["aclDataType", "aclFormat", "aclnnStatus", "aclError", "runtime"])
def test_constant_values_match_the_spec(table):
    wrong = {name: (getattr(lib, name, "missing"), value) for name, value in table.items()
             if getattr(lib, name, None) != value}
    assert not wrong, "name: (cdef value, spec value): %s" % wrong
    for name, value in table.items():
        assert pyaclnn.CONSTANTS[name] == value


def test_data_type_sizes_follow_the_spec():
    sizes = {"ACL_FLOAT": 4, "ACL_FLOAT16": 2, "ACL_INT8": 1, "ACL_INT32": 4, "ACL_UINT8": 1,
             "ACL_INT16": 2, "ACL_UINT16": 2, "ACL_UINT32": 4, "ACL_INT64": 8, "ACL_UINT64": 8,
             "ACL_DOUBLE": 8, "ACL_BOOL": 1, "ACL_STRING": 0, "ACL_COMPLEX64": 8,
             "ACL_COMPLEX128": 16, "ACL_BF16": 2, "ACL_INT4": 1, "ACL_COMPLEX32": 4}
    for name, size in sizes.items():
        assert lib.aclDataTypeSize(getattr(lib, name)) == size, name


def test_status_types_have_the_abi_width():
    assert ffi.sizeof("aclnnStatus") == 4
    assert ffi.sizeof("aclError") == 4
    assert ffi.sizeof("aclFloat16") == 2
    assert ffi.sizeof("aclrtStream") == ffi.sizeof("void *")
    assert ffi.sizeof("aclCANNPackageVersion") == 128 + 64 * 4 + 128


def test_two_phase_calls_are_exposed_for_every_operator():
    names = set(pyaclnn.two_phase_names())
    for op in OPERATORS:
        assert op in names and op + "GetWorkspaceSize" in names
        assert callable(getattr(pyaclnn, op))
        assert getattr(pyaclnn, op + "GetWorkspaceSize").__name__ == op + "GetWorkspaceSize"
    assert "aclnnPrelu" in dir(pyaclnn)
    with pytest.raises(AttributeError):
        pyaclnn.aclnnNoSuchOperatorGetWorkspaceSize


def test_error_name_tables_come_from_the_constants():
    assert pyaclnn.ACLNN_STATUS_NAMES[161002] == "ACLNN_ERR_PARAM_INVALID"
    assert pyaclnn.ACLNN_STATUS_NAMES[561105] == "ACLNN_ERR_INNER_KEY_CONFLICT"
    assert pyaclnn.ACL_ERROR_NAMES[0] == "ACL_SUCCESS"
    assert pyaclnn.ACL_ERROR_NAMES[107000] == "ACL_ERROR_RT_PARAM_INVALID"
    assert pyaclnn.ACL_ERROR_NAMES[507046] == "ACL_ERROR_RT_STREAM_SYNC_TIMEOUT"


def test_generator_output_is_current_and_complete(tmp_path):
    """tools/gen_cdef.py run now gives the declarations the package uses."""
    out = tmp_path / "cdef.py"
    subprocess.check_call([sys.executable, os.path.join(ROOT, "tools", "gen_cdef.py"),
                           "--out", str(out)], stdout=subprocess.DEVNULL)
    namespace = {}
    exec(compile(out.read_text(), str(out), "exec"), namespace)
    assert namespace["CDEF"] == pyaclnn.CDEF
    assert tuple(namespace["FUNCTIONS"]) == tuple(pyaclnn.FUNCTIONS)
    # every prototype of every public header made it in (nothing dropped silently)
    assert "Left out of the cdef:\n" in out.read_text()
    dropped = out.read_text().split("Left out of the cdef:\n", 1)[1].strip()
    assert dropped == "", dropped


def test_header_prototypes_all_reach_the_cdef():
    """Cross-check with a plain regex over the header files: no prototype is lost."""
    include = os.path.join(ROOT, "libaclnn", "include")
    found, types = set(), set()
    for sub in ("acl", "aclnn", "aclnnop"):
        for root, _dirs, files in os.walk(os.path.join(include, sub)):
            if "level2" in root:
                continue
            for name in files:
                text = open(os.path.join(root, name)).read()
                text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)  # drop comments
                found.update(re.findall(r"\b(acl\w+|Acl\w+)\s*\([^;{]*\)\s*;", text))
                types.update(re.findall(r"\btypedef\s+(acl\w+)\b", text))  # a return type, not a function
    missing = sorted(f for f in found - types if f not in pyaclnn.FUNCTIONS and not f.isupper()
                     and not f.startswith("ACL"))
    assert not missing, missing
