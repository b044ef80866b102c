"""Helpers shared by the tests: building C/C++ programs against the library and running them.

The library under test is found in ACLNN_TEST_LIBDIR (default: build/lib64 of this checkout).
A cross build (`make cross-test`) sets CC/CXX to the cross compilers and ACLNN_TEST_EMULATOR to
the command that runs the target's binaries (qemu-aarch64; QEMU_LD_PREFIX names the target's
root for its loader and libc).
Programs are compiled with the flags a CANN user would use: the public headers on the include
path (both include/ and include/aclnnop, as the official build recipes do) and -laclnn.
"""
import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INCLUDE = ROOT / "libaclnn" / "include"
C_TESTS = ROOT / "tests" / "c"
EXAMPLES = ROOT / "examples"
BIN_DIR = Path(os.environ.get("ACLNN_TEST_BINDIR", ROOT / "build" / "tests"))


def lib_dir() -> Path:
    return Path(os.environ.get("ACLNN_TEST_LIBDIR", ROOT / "build" / "lib64")).resolve()


def sanitizing() -> bool:
    return os.environ.get("ACLNN_TEST_SANITIZE") == "1"


def compile_program(source, out_dir=None, extra_flags=()):
    """Compiles one C (C11) or C++ (C++11) source file against the library; returns the binary path."""
    source = Path(source)
    out_dir = Path(out_dir or BIN_DIR)
    out_dir.mkdir(parents=True, exist_ok=True)
    is_cpp = source.suffix in (".cpp", ".cc", ".cxx")
    compiler = os.environ.get("CXX", "g++") if is_cpp else os.environ.get("CC", "cc")
    std = "-std=c++11" if is_cpp else "-std=c11"
    exe = out_dir / (source.stem + (".cpp" if is_cpp else "") + ".bin")
    flags = [std, "-g", "-O1", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE",
             f"-I{INCLUDE}", f"-I{INCLUDE / 'aclnnop'}"]
    if source.resolve().parent == EXAMPLES:
        flags.append(f"-I{EXAMPLES}")  # the examples share examples/sample_common.h
    if source.resolve().parent == C_TESTS:
        flags.append(f"-I{C_TESTS}")  # the test programs share tests/c/test_util.h
    if sanitizing():
        flags += ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"]
    cmd = [compiler, *flags, *extra_flags, str(source), "-o", str(exe),
           f"-L{lib_dir()}", "-laclnn", f"-Wl,-rpath,{lib_dir()}", "-lm", "-pthread"]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"compile failed: {shlex.join(cmd)}\n{result.stdout}{result.stderr}")
    return exe


def run_program(exe, env=None, timeout=300, valgrind=False, args=()):
    """Runs a built program; returns CompletedProcess (text)."""
    full_env = dict(os.environ)
    full_env["LD_LIBRARY_PATH"] = str(lib_dir()) + os.pathsep + full_env.get("LD_LIBRARY_PATH", "")
    if env:
        full_env.update(env)
    cmd = [*shlex.split(os.environ.get("ACLNN_TEST_EMULATOR", "")), str(exe), *args]
    if valgrind:
        cmd = ["valgrind", "-q", "--leak-check=full", "--show-leak-kinds=definite,indirect,possible",
               "--errors-for-leak-kinds=definite,indirect,possible", "--error-exitcode=99", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=timeout)


def build_and_run_example(path, env=None):
    """Builds examples/<name>.cpp (or .c) and runs it; returns its stdout. Fails loudly."""
    path = ROOT / path
    exe = compile_program(path, out_dir=BIN_DIR / "examples")
    result = run_program(exe, env=env)
    if result.returncode != 0:
        raise AssertionError(f"{path.name} exited {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result.stdout


def c_test_sources():
    """Every standalone C/C++ test program under tests/c."""
    return sorted(p for p in C_TESTS.glob("test_*.c*"))


def report_results(results, label=""):
    """Prints 'PASS name<label>' / 'FAIL name<label>' (and the failure's detail) for each
    (source, ok, detail) as it comes, then 'N passed, N failed'; returns the exit status."""
    passed = failed = 0
    for source, ok, detail in results:
        print(f"{'PASS' if ok else 'FAIL'} {source.name}{label}", flush=True)
        if not ok:
            print(detail)
        passed += ok
        failed += not ok
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0
