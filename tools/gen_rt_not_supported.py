#!/usr/bin/env python3
"""Write libaclnn/src/runtime/rt_not_supported.c: the functions of the public runtime headers
(acl/acl_base_rt.h, acl/acl_rt_allocator.h, acl/acl_rt.h, acl/acl_rt_memory_soma.h) and of the
package's tool headers (acl/acl_prof.h, acl/acl_dump.h, acl/acl_tdt.h, acl/acl_tdt_queue.h,
acl/acl_platform.h) that no other source file defines.

Each one gets the header's prototype and returns ACL_ERROR_RT_FEATURE_NOT_SUPPORT with an
aclGetRecentErrMsg text that names it and says why it has no meaning on libaclnn's CPU device;
the few that return a pointer return NULL after recording the same message, those that return
a count or a kind return its "nothing" value (0, ACL_SUBSCRIBE_NONE, ...), void ones only record it.  Rerun after
implementing a function (its definition elsewhere removes it from the generated file):

    python3 tools/gen_rt_not_supported.py [--check]

--check exits 1 if the file on disk differs from what would be generated (the tests run it).
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADERS = ["acl_base_rt.h", "acl_rt_allocator.h", "acl_rt.h", "acl_rt_memory_soma.h", "acl_prof.h", "acl_dump.h",
           "acl_tdt.h", "acl_tdt_queue.h", "acl_platform.h"]
# The macros CANN's headers put before an exported function.
EXPORT_MACROS = r"(?:ACL_FUNC_VISIBILITY|MSVP_PROF_API|ACL_DUMP_API)"
OUT = os.path.join(ROOT, "libaclnn", "src", "runtime", "rt_not_supported.c")

# Why a function has no CPU meaning, by the first pattern its name matches (in this order).
REASONS = [
    ("NN_WHY_DUMP", r"^acldump|DumpArgs|^aclmdl(Init|Set|Finalize)Dump"),
    ("NN_WHY_MEMPOOL", r"^aclrtMemPool"),
    ("NN_WHY_KERNEL", r"Binary|Kernel|Function|FuncBy|FuncHandle|Symbol|SIMT|RegisterCpuFunc|ArgsFrom"),
    ("NN_WHY_NOTIFY", r"Notify"),
    ("NN_WHY_MANAGED", r"Managed"),
    ("NN_WHY_SNAPSHOT", r"SnapShot"),
    ("NN_WHY_PERSISTENT", r"PersistentTaskClean"),
    ("NN_WHY_TASK_INFO", r"CacheLastTask"),
]
DEFAULT_REASON = "NN_WHY_DEVICE"
# What a function returning a count or a kind answers when it is not supported.
NOTHING = {
    "uint64_t": "0",
    "size_t": "0",
    "aclprofSubscribeOpFlag": "ACL_SUBSCRIBE_NONE",
    "acltdtTensorType": "ACL_TENSOR_DATA_UNDEFINED",
    "aclDataType": "ACL_DT_UNDEFINED",
}
WHY_TEXT = {
    "NN_WHY_DUMP": "a CPU raises no AI Core exceptions to dump",
    "NN_WHY_MEMPOOL": "libaclnn has no stream-ordered memory pools yet",
    "NN_WHY_KERNEL": "libaclnn runs no device kernels of its own: only the aclnn operators",
    "NN_WHY_NOTIFY": "libaclnn shares notifies between the processes of one host only (no servers)",
    "NN_WHY_MANAGED": "libaclnn has no managed (unified) memory",
    "NN_WHY_SNAPSHOT": "libaclnn has no process snapshots",
    "NN_WHY_PERSISTENT": "it clears the tasks a persistent stream bound to a loaded model holds, and libaclnn's "
                         "bound streams keep no tasks of their own (a model replays them as one list)",
    "NN_WHY_TASK_INFO": "it attaches operator information to the last task captured into an ACL graph for "
                        "CANN's profiler and exception dumps, and libaclnn's captured tasks keep no such records",
    "NN_WHY_DEVICE": "the feature belongs to the NPU hardware and has no meaning on libaclnn's CPU device",
}


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def declarations():
    """[(name, return type, parameter text)] in header order."""
    out = []
    for header in HEADERS:
        text = strip_comments(open(os.path.join(ROOT, "libaclnn", "include", "acl", header)).read())
        text = re.sub(r"^\s*#.*$", "", text, flags=re.M)
        text = re.sub(r'ACL_DEPRECATED_MESSAGE\("[^"]*"\)', "", text)
        text = re.sub(r"ACL_DUMP_WEAK\s+", "", text)
        for m in re.finditer(EXPORT_MACROS + r"\s+(?:ACL_FUNC_VISIBILITY\s+)?([^;{}()]*?)\b(\w+)\s*\(([^;]*?)\)\s*;",
                             text, re.S):
            ret = " ".join(m.group(1).split())
            params = " ".join(m.group(3).split()) or "void"
            out.append((m.group(2), ret, params))
    return out


def defined_elsewhere():
    names = set()
    src = os.path.join(ROOT, "libaclnn", "src")
    for root, _, files in os.walk(src):
        for f in files:
            path = os.path.join(root, f)
            if not f.endswith(".c") or path == OUT:
                continue
            text = strip_comments(open(path).read())
            names.update(re.findall(r"(?:%s|NN_EXPORT)[^;{]*?\b(acl\w+)\s*\([^;]*?\)\s*\{" % EXPORT_MACROS, text, re.S))
            names.update(re.findall(r"^NN_\w+\((acl\w+)", text, re.M))
    return names


def reason(name):
    for macro, pattern in REASONS:
        if re.search(pattern, name):
            return macro
    return DEFAULT_REASON


def generate():
    done = defined_elsewhere()
    lines = [
        "/*",
        " * rt_not_supported.c - the functions of CANN's runtime headers that have no meaning on libaclnn's",
        " * CPU device.  Generated by tools/gen_rt_not_supported.py from the public headers: do not edit;",
        " * implement a function in another file and rerun the tool.",
        " *",
        " * Each returns ACL_ERROR_RT_FEATURE_NOT_SUPPORT (the pointer-returning ones NULL) and leaves an",
        " * aclGetRecentErrMsg text that names it and says why, so that a CANN program links and runs up",
        " * to the call and learns what is missing.  docs/runtime.md lists them.",
        " */",
        "#include \"runtime/nn_rt_internal.h\"",
        "#include \"runtime/rt_ext.h\"",
    ]
    lines += ["#include \"acl/%s\"" % h for h in HEADERS if h not in ("acl_base_rt.h", "acl_rt.h")]
    lines += [""]
    for macro in sorted(WHY_TEXT):
        lines.append('#define %s "%s"' % (macro, WHY_TEXT[macro]))
    lines += [
        "",
        "aclError nn_rt_not_supported(const char *api, const char *reason)",
        "{",
        "    return nn_rt_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, \"%s is not supported by libaclnn: %s.\", api,",
        "                       reason);",
        "}",
        "",
        "#define NN_NOT_SUPPORTED(name, params, why)                                                       \\",
        "    ACL_FUNC_VISIBILITY aclError name params { return nn_rt_not_supported(#name, why); }",
        "#define NN_NOT_SUPPORTED_PTR(type, name, params, why)                                             \\",
        "    ACL_FUNC_VISIBILITY type name params                                                           \\",
        "    {                                                                                              \\",
        "        nn_rt_not_supported(#name, why);                                                           \\",
        "        return NULL;                                                                               \\",
        "    }",
        "#define NN_NOT_SUPPORTED_VALUE(type, name, params, why, nothing)                                  \\",
        "    ACL_FUNC_VISIBILITY type name params                                                           \\",
        "    {                                                                                              \\",
        "        nn_rt_not_supported(#name, why);                                                           \\",
        "        return nothing;                                                                            \\",
        "    }",
        "#define NN_NOT_SUPPORTED_VOID(name, params, why)                                                  \\",
        "    ACL_FUNC_VISIBILITY void name params { nn_rt_not_supported(#name, why); }",
        "",
    ]
    count = 0
    for name, ret, params in declarations():
        if name in done:
            continue
        count += 1
        why = reason(name)
        if ret == "aclError":
            lines.append("NN_NOT_SUPPORTED(%s, (%s), %s)" % (name, params, why))
        elif ret.endswith("*") or ret in ("aclrtBinary",):
            lines.append("NN_NOT_SUPPORTED_PTR(%s, %s, (%s), %s)" % (ret, name, params, why))
        elif ret == "void":
            lines.append("NN_NOT_SUPPORTED_VOID(%s, (%s), %s)" % (name, params, why))
        elif ret in NOTHING:
            lines.append("NN_NOT_SUPPORTED_VALUE(%s, %s, (%s), %s, %s)" % (ret, name, params, why, NOTHING[ret]))
        else:
            raise SystemExit("%s returns %s: write it by hand" % (name, ret))
    lines.append("")
    return "\n".join(lines), count


def main():
    text, count = generate()
    if "--check" in sys.argv[1:]:
        current = open(OUT).read() if os.path.exists(OUT) else ""
        if current != text:
            print("%s is out of date: run tools/gen_rt_not_supported.py" % os.path.relpath(OUT, ROOT))
            return 1
        return 0
    with open(OUT, "w") as f:
        f.write(text)
    print("gen_rt_not_supported: %d functions -> %s" % (count, os.path.relpath(OUT, ROOT)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
