"""CANN's library names are real shared libraries with their own SONAMEs (docs/libraries.md).

A program linked with CANN's flags (-lascendcl -lnnopbase -lopapi, older samples also
-lacl_op_compiler) against our tree must record CANN's names in its NEEDED entries, never
libaclnn.so, so the same binary runs against a real CANN install by changing LD_LIBRARY_PATH; and
against our tree it must run unchanged and print what the same program linked with -laclnn prints.
Each name is a filter library (DT_FILTER libaclnn.so) that exports the symbols CANN puts in that
library; these tests check the split, the dynamic sections, and real links and runs.
"""
import os
import re
import subprocess

import pytest

import support

ROOT = support.ROOT
RUNTIME_LIBS = ["libascendcl.so", "libacl_rt.so"]
META_LIBS = ["libnnopbase.so"]
OP_LIBS = ["libopapi.so", "libopapi_nn.so", "libopapi_math.so", "libopapi_cv.so"]
# the libraries of the runtime package's other headers, and a function CANN puts in each
TOOL_LIBS = {"libmsprofiler.so": "aclprofInit", "libascend_dump.so": "acldumpGetPath",
             "libacl_tdt_channel.so": "acltdtCreateChannel", "libacl_tdt_queue.so": "acltdtCreateQueue",
             "libplatform.so": "aclplatformGetDeviceInfo"}
EMPTY_LIBS = ["libacl_op_compiler.so", "libruntime.so", "libacl_rt_impl.so"]
PROFAPI = "libprofapi.so"  # only the Msprof* of profiling/aprof_pub.h we have
CANN_LIBS = RUNTIME_LIBS + META_LIBS + OP_LIBS + ["libc_sec.so"] + list(TOOL_LIBS) + EMPTY_LIBS + [PROFAPI]
TOOL_DATA = ROOT / "tests" / "data" / "cann_tool_functions.txt"


def _dynamic(path):
    return subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True,
                          check=True).stdout


def _needed(path):
    return re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", _dynamic(path))


def _exports(path):
    out = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True, text=True,
                         check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


@pytest.fixture(scope="module")
def libdir():
    return support.lib_dir()


@pytest.mark.parametrize("name", CANN_LIBS)
def test_each_name_is_a_filter_library_with_its_own_soname(libdir, name):
    lib = libdir / name
    assert lib.is_file() and not lib.is_symlink(), f"{name} must be a real file"
    dynamic = _dynamic(lib)
    assert f"Library soname: [{name}]" in dynamic
    assert "Filter library: [libaclnn.so]" in dynamic
    assert "Library runpath: [$ORIGIN]" in dynamic  # finds libaclnn.so beside it
    assert "libaclnn.so" not in _needed(lib)


def test_exports_are_split_as_cann_splits_them(libdir):
    everything = _exports(libdir / "libaclnn.so")
    runtime = _exports(libdir / "libascendcl.so")
    meta = _exports(libdir / "libnnopbase.so")
    ops = _exports(libdir / "libopapi.so")
    sec = _exports(libdir / "libc_sec.so")
    tools = [_exports(libdir / name) for name in TOOL_LIBS]
    # each of libaclnn.so's exports comes from exactly one group, and nothing else is exported
    profapi = _exports(libdir / PROFAPI)
    assert profapi == {"MsprofSetDeviceIdByGeModelIdx"}
    groups = [runtime, meta, ops, sec, profapi] + tools
    assert set().union(*groups) == everything
    assert all(not (a & b) for i, a in enumerate(groups) for b in groups[i + 1:])
    assert sec == {"memset_s", "memmove_s", "memcpy_s", "strcpy_s", "strncpy_s", "strcat_s", "strncat_s",
                   "strtok_s", "sprintf_s", "vsprintf_s", "snprintf_s", "vsnprintf_s", "snprintf_truncated_s",
                   "vsnprintf_truncated_s"}
    # the other names carry the same set as the library they stand beside
    assert _exports(libdir / "libacl_rt.so") == runtime
    for name in OP_LIBS:
        assert _exports(libdir / name) == ops, name
    for name in EMPTY_LIBS:
        assert _exports(libdir / name) == set(), name
    # the other headers' functions, each in the library CANN gives its header
    by_header = {}
    for line in TOOL_DATA.read_text().splitlines():
        if line and not line.startswith("#"):
            header, function = line.split()
            by_header.setdefault(header, set()).add(function)
    assert by_header["acl_rt_memory_soma.h"] <= runtime
    for (lib, function), header in zip(TOOL_LIBS.items(), ["acl_prof.h", "acl_dump.h", "acl_tdt.h",
                                                            "acl_tdt_queue.h", "acl_platform.h"]):
        assert _exports(libdir / lib) == by_header[header], lib
        assert function in by_header[header], function
    # where CANN puts them
    for name in ["aclInit", "aclFinalize", "aclrtSetDevice", "aclrtMalloc", "aclrtMemcpy",
                 "aclrtSynchronizeStream", "aclGetRecentErrMsg", "aclsysGetVersionStr", "aclCreateDataBuffer",
                 "aclGetDataBufferAddr", "aclGetCannAttribute", "aclGetDeviceCapability", "aclInitCallbackRegister",
                 "aclmdlRICaptureBegin", "aclrtAllocatorRegister", "aclrtMapMem"]:
        assert name in runtime, name
    for name in ["aclCreateTensor", "aclDestroyTensor", "aclCreateIntArray", "aclSetInputTensorAddr",
                 "AclSetInputTensorAddr", "aclDestroyAclOpExecutor", "aclSetAclOpExecutorRepeatable",
                 "aclGetViewShape", "aclInitTensor", "aclnnInit", "aclnnFinalize"]:
        assert name in meta, name
    assert {n for n in everything if n.startswith("aclnnCpu")} <= meta
    assert all(re.match(r"^aclnn[A-Z]\w*$", n) for n in ops)
    for name in ["aclnnPreluGetWorkspaceSize", "aclnnPrelu", "aclnnMaxPool2dWithMaskBackward",
                 "aclnnReplicationPad2d", "aclnnIm2col", "aclnnUpsampleNearestExact1d"]:
        assert name in ops, name


def test_every_export_has_a_library(libdir):
    """tools/cann_filter.sh must place each export; a new one falls into libascendcl.so until then."""
    out = subprocess.run(["sh", str(ROOT / "tools" / "cann_filter.sh"), "--unclassified",
                          str(libdir / "libaclnn.so")], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", "exports with no CANN library: " + out.stdout


def _build(tmp_path, source, libdir, libs, as_needed, tag):
    is_cpp = source.suffix == ".cpp"
    compiler = os.environ.get("CXX", "g++") if is_cpp else os.environ.get("CC", "cc")
    exe = tmp_path / f"{source.stem}-{tag}"
    include = support.INCLUDE
    cmd = [compiler, "-std=c++11" if is_cpp else "-std=c11", "-O1", f"-I{include}",
           f"-I{include / 'aclnnop'}", f"-I{support.EXAMPLES}", str(source), "-o", str(exe),
           f"-L{libdir}", "-Wl,--as-needed" if as_needed else "-Wl,--no-as-needed",
           *[f"-l{lib}" for lib in libs], "-lm"]
    result = subprocess.run(cmd, capture_output=True, text=True)
    assert result.returncode == 0, " ".join(cmd) + "\n" + result.stderr
    return exe


def _run(exe, libdir):
    env = dict(os.environ, LD_LIBRARY_PATH=str(libdir), ACLNN_NUM_THREADS="2")
    result = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return result.stdout


CASES = [
    # (example, CANN's -l flags)
    ("quickstart.c", ["ascendcl", "nnopbase", "opapi"]),
    ("prelu.cpp", ["ascendcl", "nnopbase", "opapi", "acl_op_compiler"]),
    ("quickstart.c", ["acl_rt", "nnopbase", "opapi_nn"]),
    ("replication_pad2d.cpp", ["ascendcl", "nnopbase", "opapi_math"]),
    ("upsample_nearest_exact1d.cpp", ["ascendcl", "nnopbase", "opapi_cv"]),
]


@pytest.mark.parametrize("as_needed", [False, True], ids=["no-as-needed", "as-needed"])
@pytest.mark.parametrize("example,libs", CASES, ids=[f"{e}:{'+'.join(l)}" for e, l in CASES])
def test_program_linked_with_cann_flags_records_cann_names_and_runs(tmp_path, libdir, example, libs,
                                                                    as_needed):
    source = support.EXAMPLES / example
    exe = _build(tmp_path, source, libdir, libs, as_needed, "cann")
    needed = _needed(exe)
    assert "libaclnn.so" not in needed, needed
    dynamic = _dynamic(exe)
    assert "RPATH" not in dynamic and "RUNPATH" not in dynamic
    expected = [f"lib{lib}.so" for lib in libs]
    if as_needed:
        # each library the program takes a symbol from is recorded: the runtime, the meta API and
        # the operator library all are; libacl_op_compiler.so (nothing used from it) is dropped,
        # as it is against CANN
        expected = [name for name in expected if name != "libacl_op_compiler.so"]
    assert [n for n in needed if n in {f"lib{lib}.so" for lib in libs}] == expected
    out = _run(exe, libdir)
    # the same program linked with -laclnn prints the same
    reference = _build(tmp_path, source, libdir, ["aclnn"], as_needed, "aclnn")
    assert _needed(reference)[0] == "libaclnn.so"
    assert out == _run(reference, libdir)
    if example == "quickstart.c":
        assert "quickstart: all values correct" in out


def test_symbols_resolve_in_libaclnn(tmp_path, libdir):
    """The loader binds the program's references to libaclnn.so (the filtee), not to the stubs."""
    exe = _build(tmp_path, support.EXAMPLES / "quickstart.c", libdir, ["ascendcl", "nnopbase", "opapi"],
                 False, "bind")
    env = dict(os.environ, LD_LIBRARY_PATH=str(libdir), LD_DEBUG="bindings")
    result = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0
    bindings = re.findall(r"binding file \S+ \[0\] to (\S+) \[0\]: normal symbol `(\w+)'", result.stderr)
    ours = {sym: target for target, sym in bindings if sym.startswith(("acl", "Acl"))}
    assert {"aclInit", "aclCreateTensor", "aclnnPreluGetWorkspaceSize", "aclnnPrelu"} <= set(ours)
    assert all(os.path.basename(target) == "libaclnn.so" for target in ours.values()), ours


def test_missing_meta_library_fails_to_link_as_on_cann(tmp_path, libdir):
    """aclCreateTensor is libnnopbase.so's: a program linked without -lnnopbase does not link,
    as it does not against CANN (rather than linking here and failing there)."""
    source = support.EXAMPLES / "quickstart.c"
    cmd = [os.environ.get("CC", "cc"), "-std=c11", f"-I{support.INCLUDE}",
           f"-I{support.INCLUDE / 'aclnnop'}", str(source), "-o", str(tmp_path / "q"), f"-L{libdir}",
           "-lascendcl", "-lopapi"]
    result = subprocess.run(cmd, capture_output=True, text=True)
    assert result.returncode != 0
    assert "aclCreateTensor" in result.stderr
