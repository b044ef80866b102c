"""Every function of CANN's public runtime headers exists here (docs/runtime.md).

tests/data/cann_runtime_functions.txt lists the 397 functions hicann/runtime's
include/external/acl/{acl_base_rt.h, acl_rt_allocator.h, acl_rt.h} declare (taken from CANN's
headers, not from ours).  A C and a C++ program that take the address of each one must compile
against `make install`'s tree with a CANN sample's flags and link with CANN's library names,
including -lruntime -lplatform -lc_sec -lprofapi; run, each not-implemented one must answer
ACL_ERROR_RT_FEATURE_NOT_SUPPORT with a message naming it.

tests/data/cann_tool_functions.txt lists the 114 functions of the package's other headers
(acl_rt_memory_soma.h, acl_prof.h, acl_dump.h, acl_tdt.h, acl_tdt_queue.h, acl_platform.h); they
link the same way with the library names CANN's samples give them (-lmsprofiler, -lascend_dump,
-lacl_tdt_channel, -lacl_tdt_queue, -lplatform, -lacl_rt_impl).
"""
import os
import re
import subprocess

import pytest

import support

ROOT = support.ROOT
DATA = ROOT / "tests" / "data" / "cann_runtime_functions.txt"
TOOL_DATA = ROOT / "tests" / "data" / "cann_tool_functions.txt"
CANN_FLAGS = ["-lascendcl", "-lacl_rt", "-lruntime", "-lplatform", "-lc_sec", "-lprofapi", "-lnnopbase", "-lopapi"]
TOOL_LIBS = ["libacl_rt_impl.so", "libmsprofiler.so", "libascend_dump.so", "libacl_tdt_channel.so",
             "libacl_tdt_queue.so", "libplatform.so"]
TOOL_FLAGS = ["-lascendcl", "-lacl_rt"] + ["-l" + lib[3:-3] for lib in TOOL_LIBS]
TOOL_HEADERS = ["acl_rt_memory_soma.h", "acl_prof.h", "acl_dump.h", "acl_tdt.h", "acl_tdt_queue.h",
                "acl_platform.h", "acl_rt_api.h"]


def cann_functions(path=DATA):
    rows = [line.split() for line in path.read_text().splitlines() if line and not line.startswith("#")]
    return [(header, name) for header, name in rows]


def declared_in(header):
    text = (support.INCLUDE / "acl" / header).read_text()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"^\s*#.*$", "", text, flags=re.M)
    return re.findall(r"(?:ACL_FUNC_VISIBILITY|MSVP_PROF_API|ACL_DUMP_API)[^;{}()]*?\b(acl\w+)\s*\(", text)


def test_the_list_is_cann_s_397():
    names = [name for _, name in cann_functions()]
    assert len(names) == 397 and len(set(names)) == 397


def test_the_tool_list_is_cann_s_114():
    names = [name for _, name in cann_functions(TOOL_DATA)]
    assert len(names) == 114 and len(set(names)) == 114


@pytest.mark.parametrize("data", [DATA, TOOL_DATA], ids=["runtime", "tools"])
def test_each_header_declares_cann_s_functions(data):
    by_header = {}
    for header, name in cann_functions(data):
        by_header.setdefault(header, []).append(name)
    for header, names in by_header.items():
        declared = declared_in(header)
        assert len(declared) == len(set(declared)) and set(declared) == set(names), header


def test_not_supported_file_is_current():
    result = subprocess.run(["python3", str(ROOT / "tools" / "gen_rt_not_supported.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture(scope="module")
def install_tree(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("cann")
    subprocess.run(["make", "-s", "install", f"PREFIX={prefix}"], cwd=ROOT, check=True, capture_output=True)
    return prefix


def _program(names):
    lines = ["#include <stdio.h>", "#include <string.h>", '#include "acl/acl.h"', '#include "securec.h"', "",
             "typedef void (*any_fn)(void);", "static const any_fn functions[] = {"]
    lines += ["    (any_fn)%s," % name for name in names]
    lines += ["};", "static const char *const names[] = {"]
    lines += ['    "%s",' % name for name in names]
    lines += ["};", "",
              "int main(void)",
              "{",
              "    char buf[8];",
              "    size_t n = sizeof functions / sizeof functions[0];",
              "    for (size_t i = 0; i < n; i++)",
              "        if (functions[i] == NULL) { printf(\"null %s\\n\", names[i]); return 1; }",
              "    if (strcpy_s(buf, sizeof buf, \"toolong!\") == 0 || buf[0] != 0) return 2;",
              "    if (aclrtLaunchKernel(NULL, 1, NULL, 0, NULL) != ACL_ERROR_RT_FEATURE_NOT_SUPPORT) return 3;",
              "    if (strstr(aclGetRecentErrMsg(), \"aclrtLaunchKernel\") == NULL) return 4;",
              "    printf(\"%zu functions\\n\", n);",
              "    return 0;",
              "}", ""]
    return "\n".join(lines)


def _link_and_run(tmp_path, install_tree, lang, text, flags, libs):
    """Builds `text` against the installed tree with `flags`, checks that the binary records each
    of `libs`, runs it there and returns what it printed."""
    source = tmp_path / ("all.c" if lang == "c" else "all.cpp")
    source.write_text(text)
    compiler = os.environ.get("CC", "cc") if lang == "c" else os.environ.get("CXX", "g++")
    std = "-std=c11" if lang == "c" else "-std=c++11"
    exe = tmp_path / "all"
    cmd = [compiler, std, "-O2", "-Wall", "-Wno-deprecated-declarations", f"-I{install_tree}/include",
           str(source), "-o", str(exe), f"-L{install_tree}/lib64", "-Wl,--no-as-needed", *flags]
    result = subprocess.run(cmd, capture_output=True, text=True)
    assert result.returncode == 0, " ".join(cmd) + "\n" + result.stderr[-4000:]
    needed = subprocess.run(["readelf", "-d", str(exe)], capture_output=True, text=True, check=True).stdout
    for lib in libs:
        assert f"[{lib}]" in needed, lib
    env = dict(os.environ, LD_LIBRARY_PATH=f"{install_tree}/lib64")
    run = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout.strip()


@pytest.mark.parametrize("lang", ["c", "c++"])
def test_every_function_links_with_cann_flags(tmp_path, install_tree, lang):
    names = [name for _, name in cann_functions()]
    libs = ["libruntime.so", "libplatform.so", "libc_sec.so", "libprofapi.so", "libacl_rt.so"]
    assert _link_and_run(tmp_path, install_tree, lang, _program(names), CANN_FLAGS, libs) == "397 functions"


def _tool_program(names):
    lines = ["#include <stdio.h>", "#include <string.h>", '#include "acl/acl.h"']
    lines += ['#include "acl/%s"' % header for header in TOOL_HEADERS]
    lines += ["", "typedef void (*any_fn)(void);", "static const any_fn functions[] = {"]
    lines += ["    (any_fn)%s," % name for name in names]
    lines += ["};", "",
              "int main(void)",
              "{",
              "    size_t n = sizeof functions / sizeof functions[0];",
              "    for (size_t i = 0; i < n; i++)",
              "        if (functions[i] == NULL) return 1;",
              "    if (aclprofModelSubscribe(12345, NULL) != ACL_ERROR_INVALID_MODEL_ID) return 2;",
              "    if (strstr(aclGetRecentErrMsg(), \"aclprofModelSubscribe\") == NULL) return 3;",
              "    if (acltdtCreateChannelWithCapacity(0, \"c\", 1) != NULL) return 4;",
              "    if (strstr(aclGetRecentErrMsg(), \"acltdtCreateChannelWithCapacity\") == NULL) return 5;",
              "    if (aclprofGetOpFlag(NULL, 0, 0) != ACL_SUBSCRIBE_NONE) return 6;",
              "    printf(\"%zu functions\\n\", n);",
              "    return 0;",
              "}", ""]
    return "\n".join(lines)


@pytest.mark.parametrize("lang", ["c", "c++"])
def test_every_tool_function_links_with_the_samples_library_names(tmp_path, install_tree, lang):
    names = [name for _, name in cann_functions(TOOL_DATA)]
    printed = _link_and_run(tmp_path, install_tree, lang, _tool_program(names), TOOL_FLAGS, TOOL_LIBS)
    assert printed == "114 functions"


def test_securec_header_and_library_are_installed(install_tree):
    assert (install_tree / "include" / "securec.h").is_file()
    assert (install_tree / "include" / "securectype.h").is_file()
    out = subprocess.run(["nm", "-D", "--defined-only", str(install_tree / "lib64" / "libc_sec.so")],
                         capture_output=True, text=True, check=True).stdout
    exported = {line.split()[-1] for line in out.splitlines() if line.strip()}
    assert {"memcpy_s", "memset_s", "strcpy_s", "strncpy_s", "strcat_s", "sprintf_s", "snprintf_s"} <= exported


def test_docs_table_lists_every_function_with_its_status():
    text = (ROOT / "docs" / "runtime.md").read_text()
    rows = dict(re.findall(r"^\| `(\w+)` \| \w+ \| (works|not supported) \|", text, re.M))
    names = [name for _, name in cann_functions() + cann_functions(TOOL_DATA)]
    assert sorted(rows) == sorted(names)
    generated = (ROOT / "libaclnn" / "src" / "runtime" / "rt_not_supported.c").read_text()
    not_supported = set(re.findall(r"^NN_NOT_SUPPORTED(?:_VOID)?\((\w+),", generated, re.M))
    not_supported |= set(re.findall(r"^NN_NOT_SUPPORTED_(?:PTR|VALUE)\([^,]+, (\w+),", generated, re.M))
    assert {n for n, status in rows.items() if status == "not supported"} == not_supported
    # the counts the text gives before the table
    runtime = [name for _, name in cann_functions()]
    tools = [name for _, name in cann_functions(TOOL_DATA)]
    works = sum(rows[name] == "works" for name in runtime)
    assert f"flags). {works} work, with the meaning\neach has on a CPU; {len(runtime) - works} return" in text
    tool_works = sum(rows[name] == "works" for name in tools)
    assert f"so those samples build; {tool_works} work, and\nthe {len(tools) - tool_works} others" in text
