#!/usr/bin/env python3
"""`make demo`: install libaclnn into a temporary CANN-like prefix, build every example in
examples/ with the flags a CANN program uses, run them, and run the Python examples.

    g++ -std=c++11 x.cpp -I$P/include -I$P/include/aclnnop -Iexamples -L$P/lib64 -lascendcl -lnnopbase -lopapi
"""
import os
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
    compiler = ["g++", "-std=c++11"] if is_cpp else ["cc", "-std=c11"]
    sh([*compiler, "-Wall", "-Wextra", "-O2", str(source), "-o", str(exe),
        f"-I{prefix}/include", f"-I{prefix}/include/aclnnop", f"-I{EXAMPLES}",
        f"-L{prefix}/lib64", "-lascendcl", "-lnnopbase", "-lopapi", "-lm"])
    return exe


def main():
    lib = ROOT / "build" / "lib64" / "libaclnn.so"
    with tempfile.TemporaryDirectory(prefix="aclnn-demo-") as tmp:
        prefix = Path(tmp) / "cann"
        sh([sys.executable, str(ROOT / "tools" / "install_tree.py"), "--prefix", str(prefix), "--lib", str(lib)])
        env = dict(os.environ, LD_LIBRARY_PATH=f"{prefix}/lib64:" + os.environ.get("LD_LIBRARY_PATH", ""))
        sources = sorted(EXAMPLES.glob("*.c")) + sorted(EXAMPLES.glob("*.cpp"))
        for source in sources:
            print(f"\n=== {source.name} " + "=" * max(0, 60 - len(source.name)), flush=True)
            exe = build(source, prefix, Path(tmp))
            sh([str(exe)], env=env)
        for script in sorted(EXAMPLES.glob("*.py")):
            if script.name == Path(__file__).name:
                continue
            print(f"\n=== {script.name} " + "=" * max(0, 60 - len(script.name)), flush=True)
            sh([sys.executable, str(script)])
    print("\ndemo finished: every example ran")


if __name__ == "__main__":
    main()
