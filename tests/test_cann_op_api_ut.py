"""CANN's own op_api unit tests, replayed against libaclnn.

tests/data/cann_op_api_ut.json holds, for every aclnnXxxGetWorkspaceSize call of CANN's op_api
unit tests of our twelve operators (hicann/ops-nn, ops-math, ops-cv; written by
tools/cann_ut_extract.py), the product the CANN harness is on, every argument in the API's order
and the status the test asserts.  Each record is replayed here through the raw cffi `lib`: the
product is chosen with aclnnCpuSetSocVersion, the handles are built as CANN's harness builds
them (aclCreateTensor with NULL strides = contiguous, storage dims = view dims unless the test
gives them, data NULL - phase 1 reads no data), phase 1 runs, and its status is compared.  Every
handle, and the executor of a successful call, is destroyed and must destroy cleanly.

docs/compatibility.md ("CANN's op_api unit tests") lists what is replayed and every decision.
"""
import collections
import json

import pytest

from support import ROOT

DATA = ROOT / "tests" / "data" / "cann_op_api_ut.json"
CASES = json.loads(DATA.read_text())["cases"]

# The experimental Im2col (ops-math experimental/conversion/im2col) is another package's
# aclnnIm2col, with its own dtype list (FLOAT16, FLOAT, BF16, BOOL, whatever the product) where
# the main package has FLOAT, FLOAT16, BF16 on A2 and fifteen dtypes on Ascend950.  Its cases run
# on the product its harness selects (Ascend910B), except those of a dtype only the experimental
# package adds (BOOL): they run on Ascend950, the one product whose main Im2col takes BOOL too.
# (On Ascend950 its INT32 rejection would fail: the main package accepts INT32 there.)
EXPERIMENTAL = "ops-math experimental"
EXPERIMENTAL_ADDED_DTYPES = {"ACL_BOOL"}
EXPERIMENTAL_ADDED_SOC = "Ascend950"


def socs_of(case):
    """The products a case is replayed on: the one the harness is on when the whole file runs,
    and, when that product was left behind by an earlier TEST, the default a TEST run alone
    (--gtest_filter) starts on."""
    if case["package"] == EXPERIMENTAL:
        if case["args"][0].get("dtype") in EXPERIMENTAL_ADDED_DTYPES:
            return [EXPERIMENTAL_ADDED_SOC]
        return [case["soc"]]
    return list(dict.fromkeys([case["soc"], case["soc_if_run_alone"]]))


RUNS = [(c, soc) for c in CASES for soc in socs_of(c)]
RUN_IDS = [c["id"] if soc == c["soc"] else "%s@%s" % (c["id"], soc) for c, soc in RUNS]


class Handles:
    """The C handles of one call, each destroyed once, in reverse order of creation."""

    def __init__(self, lib, ffi):
        self.lib, self.ffi = lib, ffi
        self.owned = []     # (destroy function name, pointer)
        self.buffers = []   # cffi buffers the handles were created from

    def own(self, ptr, destroy, what):
        assert ptr != self.ffi.NULL, "%s failed: %s" % (what, self.lib_message())
        self.owned.append((destroy, ptr))
        return ptr

    def lib_message(self):
        text = self.lib.aclGetRecentErrMsg()
        return "(no message)" if text == self.ffi.NULL else self.ffi.string(text).decode()

    def int64s(self, values):
        buf = self.ffi.new("int64_t[]", list(values) or [0])
        self.buffers.append(buf)
        return buf

    def tensor(self, arg):
        lib, ffi = self.lib, self.ffi
        shape = arg["shape"]
        # As TensorDesc::ToAclTypeRawPtr: storage dims are the view dims when the test gives none
        # (also for a view with a negative dim: Im2col case_error_tensor_size's {0, -2, 2, 3}).
        storage = arg["storage_shape"] or shape
        strides = ffi.NULL if arg["strides"] is None else self.int64s(arg["strides"])
        ptr = lib.aclCreateTensor(self.int64s(shape), len(shape), getattr(lib, arg["dtype"]), strides,
                                  arg["offset"], getattr(lib, arg["format"]), self.int64s(storage),
                                  len(storage), ffi.NULL)
        return self.own(ptr, "aclDestroyTensor", "aclCreateTensor(%s)" % describe(arg))

    def array(self, arg):
        ffi = self.ffi
        kind = {"int_array": ("Int", "int64_t"), "float_array": ("Float", "float"),
                "bool_array": ("Bool", "bool")}[arg["kind"]]
        buf = ffi.new("%s[]" % kind[1], arg["values"] or [0])
        self.buffers.append(buf)
        ptr = getattr(self.lib, "aclCreate%sArray" % kind[0])(buf, len(arg["values"]))
        return self.own(ptr, "aclDestroy%sArray" % kind[0], "aclCreate%sArray" % kind[0])

    def scalar(self, arg):
        ctype = {"ACL_FLOAT": "float", "ACL_DOUBLE": "double", "ACL_INT32": "int32_t", "ACL_INT64": "int64_t",
                 "ACL_BOOL": "bool", "ACL_UINT64": "uint64_t"}[arg["dtype"]]
        buf = self.ffi.new("%s *" % ctype, arg["value"])
        self.buffers.append(buf)
        ptr = self.lib.aclCreateScalar(buf, getattr(self.lib, arg["dtype"]))
        return self.own(ptr, "aclDestroyScalar", "aclCreateScalar")

    def destroy_all(self):
        failures = []
        for destroy, ptr in reversed(self.owned):
            ret = getattr(self.lib, destroy)(ptr)
            if ret != 0:
                failures.append("%s -> %d: %s" % (destroy, ret, self.lib_message()))
        self.owned.clear()
        return failures


def describe(arg):
    if arg["kind"] == "tensor":
        text = "%s %s %s" % (arg["shape"], arg["dtype"], arg["format"])
        if arg["strides"] is not None:
            text += " strides %s offset %d" % (arg["strides"], arg["offset"])
        if arg["storage_shape"] is not None:
            text += " storage %s" % (arg["storage_shape"],)
        return text
    if arg["kind"] == "null":
        return "NULL"
    if "values" in arg:
        return "%s %s" % (arg["kind"], arg["values"])
    return "%s %r" % (arg["kind"], arg["value"])


PARAM_KINDS = {"aclTensor *": ("tensor",), "aclIntArray *": ("int_array",),
               "aclFloatArray *": ("float_array",), "aclBoolArray *": ("bool_array",),
               "aclScalar *": ("scalar",)}
VALUE_KINDS = {"_Bool": ("bool", "int", "int64"), "int64_t": ("int", "int64", "bool"),
               "int": ("int", "bool"), "double": ("double", "float", "int"), "float": ("float", "double", "int")}


def build_args(handles, func, case):
    """The C arguments of the call, checked against the function's C parameter types."""
    params = handles.ffi.typeof(func).args
    args = case["args"]
    assert len(params) == len(args) + 2, "%s takes %d arguments before (workspaceSize, executor), the case gives %d" % (
        case["operator"], len(params) - 2, len(args))
    out = []
    for i, (arg, ctype) in enumerate(zip(args, params)):
        kind = arg["kind"]
        cname = ctype.cname.replace("const ", "").replace("struct ", "")
        if kind == "null":
            assert ctype.kind == "pointer", "argument %d (%s) is NULL in the case" % (i, cname)
            out.append(handles.ffi.NULL)
        elif cname in PARAM_KINDS:
            assert kind in PARAM_KINDS[cname], "argument %d is %s, the API wants %s" % (i, kind, cname)
            out.append({"tensor": handles.tensor, "scalar": handles.scalar}.get(kind, handles.array)(arg))
        else:
            assert kind in VALUE_KINDS.get(cname, ()), "argument %d is %s, the API wants %s" % (i, kind, cname)
            out.append(arg["value"])
    return out


def replay(acl, set_soc, case, soc):
    lib, ffi = acl.lib, acl.ffi
    set_soc(soc)
    func = getattr(lib, "aclnn%sGetWorkspaceSize" % case["operator"])
    handles = Handles(lib, ffi)
    try:
        args = build_args(handles, func, case)
        workspace = ffi.new("uint64_t *")
        executor = ffi.new("aclOpExecutor **")
        lib.aclGetRecentErrMsg()  # start with an empty message slot
        status = func(*args, workspace, executor)
        message = handles.lib_message()
        if status == 0:
            assert executor[0] != ffi.NULL
            assert lib.aclDestroyAclOpExecutor(executor[0]) == 0
    finally:
        leaks = handles.destroy_all()
    assert not leaks, "destroying the handles failed: %s" % leaks
    return status, message


def where(case, soc):
    return "%s %s:%d (TEST %s, line %d), on %s%s" % (
        case["repo"], case["path"], case["line"], case["test"], case["test_line"], soc,
        "" if soc == case["soc"] else " (the harness is on %s, %s)" % (case["soc"], case["soc_set_by"]))


@pytest.mark.parametrize("case,product", RUNS, ids=RUN_IDS)
def test_cann_op_api_ut(acl, soc, case, product):
    status, message = replay(acl, soc, case, product)
    expect = case["expect"]
    args = "; ".join(describe(a) for a in case["args"])
    if expect["not_equal"]:
        assert status != expect["code"], "%s\n  %s(%s)\n  CANN expects a status other than %s, got it" % (
            where(case, product), case["operator"], args, expect["status"])
    else:
        assert status == expect["code"], "%s\n  %s(%s)\n  CANN expects %s (%d), libaclnn returns %d: %s" % (
            where(case, product), case["operator"], args, expect["status"], expect["code"], status, message)


def test_data_counts():
    """The data holds what the extraction found (docs/compatibility.md quotes these counts)."""
    doc = json.loads(DATA.read_text())
    per_op = collections.Counter(c["operator"] for c in CASES)
    assert sum(per_op.values()) == len(CASES) == len({c["id"] for c in CASES})
    assert len(per_op) == 12
    assert {s["repo"] for s in doc["sources"]} == {"hicann/ops-nn", "hicann/ops-math", "hicann/ops-cv"}
    assert all(len(s["commit"]) == 40 for s in doc["sources"])
    for c in CASES:
        assert c["soc"] in ("Ascend910B", "Ascend910_93", "Ascend950", "Ascend910", "Ascend310P"), c["id"]


def _first_success_per_operator():
    chosen = {}
    for c in CASES:
        if c["expect"]["code"] == 0 and not c["expect"]["not_equal"] and c["package"] != EXPERIMENTAL:
            chosen.setdefault(c["operator"], c)
    return sorted(chosen.values(), key=lambda c: c["operator"])


NO_DATA_RUNS = [(c, i) for c in _first_success_per_operator()
                for i, a in enumerate(c["args"]) if a["kind"] == "tensor" and a["shape"]]


@pytest.mark.parametrize("case,index", NO_DATA_RUNS,
                         ids=["%s-%s-arg%d" % (c["operator"], c["id"], i) for c, i in NO_DATA_RUNS])
def test_a_tensor_owning_no_data_is_rejected_in_phase_1(acl, soc, case, index):
    """A call CANN's tests expect to succeed, with one tensor argument made as the harness makes
    Im2col case_error_tensor_size's: its first dim negated, storage dims = view dims, data NULL.
    aclCreateTensor accepts it; the operator must answer 161002 naming the negative dimension
    before it computes any size from it (the workspace, the executor's layout, strict mode)."""
    arg = dict(case["args"][index])
    arg["shape"] = [-2 - arg["shape"][0]] + arg["shape"][1:]
    arg["strides"], arg["offset"], arg["storage_shape"] = None, 0, None
    changed = dict(case, args=case["args"][:index] + [arg] + case["args"][index + 1:])
    status, message = replay(acl, soc, changed, case["soc"])
    assert status == 161002, "%s with argument %d %s: %d, %s" % (case["id"], index, describe(arg), status, message)
    assert "negative dimension" in message, message
