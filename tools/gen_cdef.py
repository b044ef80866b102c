#!/usr/bin/env python3
"""Generate pyaclnn's cffi declarations from libaclnn's public C headers.

pyaclnn talks to the library through cffi in *out-of-line ABI mode*: the declarations are parsed
once, here, at build time, and written as a pre-parsed ``ffi`` object to ``pyaclnn/_cdef.py`` of a
wheel (setup.py) or to ``build/pyaclnn/_cdef.py`` of a checkout (the Makefile, an editable install),
so importing pyaclnn needs neither a C compiler nor pycparser.  Because the declarations come from the
same headers a C program includes, the binding cannot drift from the ABI.

How the headers become a cdef:

1. A small translation unit includes ``acl/acl.h``, the package's other C headers (``acl_prof.h``,
   ``acl_dump.h``, ``acl_tdt.h``, ``acl_tdt_queue.h``, ``acl_platform.h``, ``acl_rt_memory_soma.h``;
   ``acl_rt_api.h`` is C++ only), ``aclnn/aclnn_base.h``,
   ``aclnn/opdev/op_errno.h`` and every ``aclnnop/*.h``.
2. ``cc -E -P -nostdinc`` preprocesses it against a directory of empty stand-ins for the system
   headers (cffi already knows ``int64_t``, ``size_t``, ``bool``...), with ``__attribute__``,
   ``__extension__`` and friends defined away.
3. The output is split into top-level declarations.  Function *definitions* (inline helpers),
   ``static`` declarations and anything cffi cannot parse are dropped (and listed in a comment);
   ``static const int NAME = V;`` becomes ``#define NAME V`` because ABI mode has no storage for it.
4. Object-like integer macros (``ACL_ERROR_RT_*``, ``ACLNN_*``, stream/event flags...) are collected
   with ``cc -dM -E`` and evaluated to plain decimal ``#define`` lines.

Usage::

    python tools/gen_cdef.py [--include libaclnn/include] [--out build/pyaclnn/_cdef.py] [--cc cc]

The module can also be imported (pyaclnn does so when a checkout has no current ``_cdef.py``):
``generate(include_dir)`` returns a :class:`CdefResult`.
"""

import argparse
import contextlib
import glob
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Stand-ins for the system headers the public headers include.  cffi knows the fixed-width
# integer types, size_t and bool natively, so the stand-ins only need what could appear in a
# declaration after preprocessing.
FAKE_SYSTEM_HEADERS = {
    "stdint.h": "",
    "stddef.h": "#define NULL ((void *)0)\n",
    "stdbool.h": "#define true 1\n#define false 0\n",
    "stdlib.h": "",
    "stdio.h": "",
    "string.h": "",
    "limits.h": "",
    "stdarg.h": "",
    "float.h": "",
    "math.h": "",
    "inttypes.h": "",
}

# GNU extensions that carry no ABI information for cffi.
PREPROCESSOR_DEFINES = [
    "-D__attribute__(x)=",
    "-D__extension__=",
    "-D__restrict=",
    "-D__restrict__=",
    "-D__asm__(x)=",
    "-D__asm(x)=",
    "-D__declspec(x)=",
    "-D__THROW=",
    "-D__inline=inline",
    "-D__inline__=inline",
]

# Deprecated aliases: when two constants share a value, the other name is the canonical one.
DEPRECATED_ALIASES = {"ACL_ERROR_NONE", "ACLNN_ERR_INNER_KEY_CONFILICT", "ACL_RT_SUCCESS", "OK"}


class CdefResult:
    """What :func:`generate` found in the headers."""

    def __init__(self, cdef, functions, constants, dropped):
        self.cdef = cdef                # the text handed to ffi.cdef()
        self.functions = functions      # function names, header order
        self.constants = constants      # {name: int}, enumerators and #defines, header order
        self.dropped = dropped          # [(declaration snippet, reason)] left out of the cdef


class GenerationError(RuntimeError):
    pass


def _umbrella_source(include_dir):
    """The translation unit: the runtime umbrella, the meta API, status codes and every op."""
    lines = []
    for rel in ("acl/acl.h", "acl/acl_rt_memory_soma.h", "acl/acl_prof.h", "acl/acl_dump.h", "acl/acl_tdt.h",
                "acl/acl_tdt_queue.h", "acl/acl_platform.h", "aclnn/aclnn_base.h", "aclnn/acl_meta.h",
                "aclnn/opdev/op_errno.h"):
        if os.path.exists(os.path.join(include_dir, rel)):
            lines.append('#include "%s"' % rel)
    for path in sorted(glob.glob(os.path.join(include_dir, "aclnnop", "*.h"))):
        lines.append('#include "aclnnop/%s"' % os.path.basename(path))
    if not lines:
        raise GenerationError("no public headers found under %s" % include_dir)
    return "\n".join(lines) + "\n"


def _find_cc(cc=None):
    for candidate in (cc, os.environ.get("CC"), "cc", "gcc", "clang"):
        if candidate and shutil.which(candidate.split()[0]):
            return candidate.split()
    raise GenerationError("no C compiler found to preprocess the headers (tried $CC, cc, gcc, clang)")


def _run_preprocessor(cc, include_dir, workdir, extra):
    """Run cc with the fake system headers; create more empty stand-ins on demand."""
    fake_dir = os.path.join(workdir, "sys")
    os.makedirs(fake_dir, exist_ok=True)
    for name, text in FAKE_SYSTEM_HEADERS.items():
        with open(os.path.join(fake_dir, name), "w") as f:
            f.write(text)
    source = os.path.join(workdir, "all_headers.c")
    cmd = (cc + ["-std=c11", "-nostdinc", "-I", fake_dir, "-I", include_dir,
                 "-I", os.path.join(include_dir, "aclnnop")]
           + PREPROCESSOR_DEFINES + extra + [source])
    for _ in range(32):
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True)
        if proc.returncode == 0:
            return proc.stdout
        missing = re.search(r"fatal error: ([\w/.+-]+): No such file", proc.stderr)
        if not missing or missing.group(1).startswith(("acl", "aclnn")):
            raise GenerationError("preprocessing the headers failed:\n%s\n%s"
                                  % (" ".join(cmd), proc.stderr))
        path = os.path.join(fake_dir, missing.group(1))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w").close()
    raise GenerationError("too many unknown system headers: %s" % proc.stderr)


def _split_declarations(text):
    """Split preprocessed C into top-level declarations.

    Returns a list of (declaration_text, is_function_definition).  A function definition is a
    chunk whose text before its first top-level '{' ends with ')'.
    """
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    chunks = []
    start = 0
    depth = 0
    i = 0
    n = len(text)
    in_function_body = False
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if c == "{":
            if depth == 0 and text[start:i].rstrip().endswith(")"):
                in_function_body = True
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0 and in_function_body:
                chunks.append((text[start:i + 1].strip(), True))
                start = i + 1
                in_function_body = False
        elif c == ";" and depth == 0:
            chunks.append((text[start:i].strip(), False))
            start = i + 1
        i += 1
    tail = text[start:].strip()
    if tail:
        chunks.append((tail, False))
    return [(chunk, is_def) for chunk, is_def in chunks if chunk]


_STATIC_CONST = re.compile(r"^static\s+const\s+[\w\s]+?\s+(\w+)\s*=\s*(.+)$", re.S)
_INT_SUFFIX = re.compile(r"\b((?:0[xX][0-9a-fA-F]+)|(?:\d+))[uUlL]+\b")
_CAST = re.compile(r"\(\s*(?:const\s+)?(?:unsigned\s+|signed\s+)?"
                   r"(?:int|long|short|char|u?int(?:8|16|32|64)_t|size_t|aclError|aclnnStatus)"
                   r"(?:\s+(?:int|long))*\s*\)")
_SAFE_EXPR = re.compile(r"^[0-9a-fA-FxX\s()+\-*/%<>|&^~]+$")


def _evaluate(expr, known, raw, seen=()):
    """Evaluate a C integer constant expression; None if it is not one."""
    expr = _CAST.sub("", expr)
    expr = _INT_SUFFIX.sub(r"\1", expr)

    def substitute(match):
        name = match.group(0)
        if name in known:
            return "(%d)" % known[name]
        if name in raw and name not in seen:
            value = _evaluate(raw[name], known, raw, seen + (name,))
            if value is not None:
                return "(%d)" % value
        raise ValueError(name)

    try:
        expr = re.sub(r"\b(?!0[xX])[A-Za-z_]\w*\b", substitute, expr)
    except ValueError:
        return None
    expr = expr.strip()
    if not expr or not _SAFE_EXPR.match(expr):
        return None
    expr = re.sub(r"\b0+(\d)", r"\1", expr)  # C octal literals are not used for these codes
    expr = expr.replace("/", "//")
    try:
        value = eval(expr, {"__builtins__": {}}, {})  # only digits and operators remain
    except Exception:
        return None
    return value if isinstance(value, int) else None


def _macro_definitions(cc, include_dir, workdir):
    """{name: raw value} of object-like macros the headers define (not the compiler's own)."""
    def dump(source_text):
        path = os.path.join(workdir, "all_headers.c")
        with open(path, "w") as f:
            f.write(source_text)
        out = _run_preprocessor(cc, include_dir, workdir, ["-dM", "-E"])
        macros = {}
        for line in out.splitlines():
            m = re.match(r"#define\s+([A-Za-z_]\w*)(\s+(.*))?$", line)
            if m:
                macros[m.group(1)] = (m.group(3) or "").strip()
        return macros

    baseline = dump("#include <stddef.h>\n#include <stdbool.h>\n")
    everything = dump(_umbrella_source(include_dir))
    return {k: v for k, v in everything.items()
            if k not in baseline and not k.startswith("_") and v}


def _keep_parseable(ffi_factory, chunks, dropped):
    """Return the chunks cffi accepts; try all at once, else one by one."""
    text = ";\n".join(chunks) + ";\n" if chunks else ""
    try:
        ffi = ffi_factory()
        ffi.cdef(text)
        return chunks
    except Exception:
        pass
    ffi = ffi_factory()
    kept = []
    for chunk in chunks:
        try:
            ffi.cdef(chunk + ";\n")
            kept.append(chunk)
        except Exception as exc:
            dropped.append((chunk, "cffi: %s" % str(exc).splitlines()[0]))
    return kept


def generate(include_dir, cc=None):
    """Preprocess the public headers under include_dir and return a CdefResult."""
    import cffi

    include_dir = os.path.abspath(include_dir)
    cc = _find_cc(cc)
    workdir = tempfile.mkdtemp(prefix="pyaclnn-cdef-")
    try:
        with open(os.path.join(workdir, "all_headers.c"), "w") as f:
            f.write(_umbrella_source(include_dir))
        preprocessed = _run_preprocessor(cc, include_dir, workdir, ["-E", "-P"])
        raw_macros = _macro_definitions(cc, include_dir, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    dropped = []
    declarations = []
    static_consts = []   # (name, raw expression), header order
    seen = set()
    for chunk, is_definition in _split_declarations(preprocessed):
        normalized = " ".join(chunk.split())
        if is_definition:
            dropped.append((normalized, "function definition"))
            continue
        m = _STATIC_CONST.match(normalized)
        if m:
            static_consts.append((m.group(1), m.group(2)))
            continue
        if normalized.startswith(("static ", "_Static_assert")) or re.search(r"\binline\b", normalized):
            dropped.append((normalized, "static or inline"))
            continue
        if normalized in seen:  # the same typedef reached through two include paths
            continue
        seen.add(normalized)
        declarations.append(normalized)

    declarations = _keep_parseable(cffi.FFI, declarations, dropped)
    parser_ffi = cffi.FFI()
    parser_ffi.cdef(";\n".join(declarations) + ";\n" if declarations else "")
    decls = parser_ffi._parser._declarations

    functions = []
    taken = set()
    constants = {}
    for key, value in decls.items():
        kind, _, name = key.partition(" ")
        if kind == "function":
            functions.append(name)
            taken.add(name)
        elif kind == "typedef":
            taken.add(name)
        elif kind in ("enum", "anonymous"):
            enum_type = value[0] if isinstance(value, tuple) else value
            names = getattr(enum_type, "enumerators", None)
            values = getattr(enum_type, "enumvalues", None)
            if names and values:
                for enumerator, number in zip(names, values):
                    constants[enumerator] = int(number)
                    taken.add(enumerator)

    known = dict(constants)
    define_lines = []
    raw = dict(raw_macros)
    raw.update({name: expr for name, expr in static_consts})
    for name, expr in static_consts + sorted(raw_macros.items()):
        if name in taken or name in known:
            continue
        value = _evaluate(expr, known, raw)
        if value is None:
            if any(name == static_name for static_name, _ in static_consts):
                dropped.append(("static const %s = %s" % (name, expr), "not an integer constant"))
            continue
        known[name] = value
        constants[name] = value
        define_lines.append("#define %s %d" % (name, value))

    lines = [d + ";" for d in declarations] + define_lines
    cdef = "\n".join(lines) + "\n"
    # Final check: the whole text must parse in one go.
    cffi.FFI().cdef(cdef)
    return CdefResult(cdef, functions, constants, dropped)


def render_module(result, module_name="pyaclnn._cdef"):
    """Python source of the generated module: a pre-parsed out-of-line ffi plus the tables."""
    import cffi

    builder = cffi.FFI()
    builder.cdef(result.cdef)
    builder.set_source(module_name, None)
    workdir = tempfile.mkdtemp(prefix="pyaclnn-ffi-")
    try:
        path = os.path.join(workdir, "ffi_module.py")
        with contextlib.redirect_stdout(io.StringIO()):  # cffi prints "generating ..."
            builder.emit_python_code(path)
        with open(path) as f:
            ffi_source = f.read()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    out = ['"""Generated by tools/gen_cdef.py from libaclnn/include - do not edit.',
           "",
           "ffi        pre-parsed cffi declarations (out-of-line ABI mode)",
           "CDEF       the cdef text ffi was built from",
           "FUNCTIONS  every function the headers declare",
           "CONSTANTS  every enumerator and integer constant, with its value",
           '"""', ""]
    out.append(ffi_source.replace("# auto-generated file\n", ""))
    out.append("CDEF = %r\n" % result.cdef)
    out.append("FUNCTIONS = (\n%s)\n" % "".join("    %r,\n" % f for f in result.functions))
    out.append("CONSTANTS = {\n%s}\n" % "".join("    %r: %d,\n" % kv for kv in result.constants.items()))
    out.append("# Left out of the cdef:\n")
    for snippet, reason in result.dropped:
        short = snippet if len(snippet) < 100 else snippet[:97] + "..."
        out.append("#   %s  [%s]\n" % (short.replace("\n", " "), reason))
    return "".join(line if line.endswith("\n") else line + "\n" for line in out)


def main(argv=None):
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--include", default=os.path.join(here, "libaclnn", "include"))
    parser.add_argument("--out", default=os.path.join(here, "build", "pyaclnn", "_cdef.py"))
    parser.add_argument("--cc", default=None, help="C compiler used as preprocessor")
    parser.add_argument("--print", action="store_true", help="print the cdef text and exit")
    args = parser.parse_args(argv)
    try:
        result = generate(args.include, args.cc)
    except GenerationError as exc:
        sys.exit("gen_cdef: %s" % exc)
    if args.print:
        sys.stdout.write(result.cdef)
        return 0
    text = render_module(result)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = "%s.%d.tmp" % (args.out, os.getpid())  # two builds may generate at once
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, args.out)
    print("gen_cdef: %d functions, %d constants, %d declarations dropped -> %s"
          % (len(result.functions), len(result.constants), len(result.dropped), args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
