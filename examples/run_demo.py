#!/usr/bin/env python3
"""`make demo`: install libaclnn into a temporary CANN-like prefix, build every example in
examples/ with the flags a CANN program uses, run them, and run the Python examples.

    g++ -std=c++11 x.cpp -I$P/include -I$P/include/aclnnop -Iexamples -L$P/lib64 -lascendcl -lnnopbase -lopapi

A cross build (`make cross-test`) passes its library with --lib, its compilers in CC/CXX and the
command that runs the target's binaries in ACLNN_TEST_EMULATOR (qemu-aarch64); --c-only skips
the Python examples, which need this machine's own build.
"""
import argparse
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def build(source: Path, prefix: Path, out_dir: Path) -> Path:
    is_cpp = source.suffix == ".cpp"
    exe = out_dir / source.stem
    compiler = ([os.environ.get("CXX", "g++"), "-std=c++11"] if is_cpp
                else [os.environ.get("CC", "cc"), "-std=c11"])
    sh([*compiler, "-Wall", "-Wextra", "-O2", str(source), "-o", str(exe),
        f"-I{prefix}/include", f"-I{prefix}/include/aclnnop", f"-I{EXAMPLES}",
        f"-L{prefix}/lib64", "-lascendcl", "-lnnopbase", "-lopapi", "-lm"])
    return exe


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", default=str(ROOT / "build" / "lib64" / "libaclnn.so"))
    parser.add_argument("--c-only", action="store_true", help="build and run the C/C++ examples only")
    opts = parser.parse_args()
    lib = Path(opts.lib)
    emulator = shlex.split(os.environ.get("ACLNN_TEST_EMULATOR", ""))
    with tempfile.TemporaryDirectory(prefix="aclnn-demo-") as tmp:
        prefix = Path(tmp) / "cann"
        sh([sys.executable, str(ROOT / "tools" / "install_tree.py"), "--prefix", str(prefix), "--lib", str(lib)])
        env = dict(os.environ, LD_LIBRARY_PATH=f"{prefix}/lib64:" + os.environ.get("LD_LIBRARY_PATH", ""))
        sources = sorted(EXAMPLES.glob("*.c")) + sorted(EXAMPLES.glob("*.cpp"))
        for source in sources:
            print(f"\n=== {source.name} " + "=" * max(0, 60 - len(source.name)), flush=True)
            exe = build(source, prefix, Path(tmp))
            sh([*emulator, str(exe)], env=env)
        for script in [] if opts.c_only else sorted(EXAMPLES.glob("*.py")):
            if script.name == Path(__file__).name:
                continue
            print(f"\n=== {script.name} " + "=" * max(0, 60 - len(script.name)), flush=True)
            sh([sys.executable, str(script)])
    print("\ndemo finished: every example ran")


if __name__ == "__main__":
    main()
