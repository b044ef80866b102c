#!/usr/bin/env python3
"""Builds and runs CANN's own runtime samples (hicann/runtime, example/) unchanged against this
tree, the way their READMEs say: `source example/set_sample_env.sh`, then `bash run.sh` in the
sample's directory (docs/runtime.md, "CANN's runtime samples").

    python3 tools/runtime_samples.py --runtime DIR [--lib build/lib64/libaclnn.so] [--only SUBSTR]
                                     [--check] [--keep] [--timeout S]

DIR is a checkout of hicann/runtime or a bare git mirror of one (its HEAD is exported).  The
example/ tree is copied to a temporary directory, next to a `make install`-style tree of this build
(tools/install_tree.py: lib64/ with CANN's library names, include/, bin/setenv.bash and the
ascendc.cmake stand-in), and nothing in it is edited.

A sample is *in scope* unless it needs something a CPU cannot run: it calls one of the AscendC
kernels of example/kernel_func (their host wrappers, or a `<<<...>>>` launch of its own) or an
aclnn operator this project does not implement.  In-scope samples pass when run.sh exits 0 and
prints no "[ERROR]" (but the error
1_error_handling provokes on purpose), "[FAILURE]" or "[WARN]" line; with --check they run under ACLNN_CHECK=1 and must also
leave no checking-mode report (failed calls aside: the sample judges those itself); a sample
that runs as documented but draws a report is listed as CHECK.  The table lists every sample with its verdict and, for failures,
the last lines it printed.

The samples are not part of this repository: they stay in CANN's repository.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# A sample that meets something it cannot do prints [ERROR]/[FAILURE]; some samples only print a
# [WARN] and skip the rest (the tdt channel samples when no channel is created): that is no pass.
# 0_quickstart/1_error_handling provokes an error on purpose and prints it as "[ERROR]  Diagnostics:".
FAILURE_LINE = re.compile(r"\[(FAILURE|WARN)\]|\[ERROR\](?!\s+Diagnostics:)")
# the checking mode's summary line when it reported anything (docs/checking.md)
CHECK_REPORT = re.compile(r"ACLNN_CHECK SUMMARY: ([1-9][0-9]* errors?|[0-9]+ errors?, [1-9][0-9]* warnings?)")
OUR_OPERATORS = ("ReplicationPad2d", "UpsampleNearestExact1d", "MaxPool2dWithMask", "MaxPool2dWithIndices",
                 "Im2col", "Prelu")


def export_examples(runtime: Path, dest: Path) -> Path:
    """example/ and pkg_inc/ (some samples include its headers) of a checkout, or of a bare
    mirror's HEAD, copied under dest."""
    if (runtime / "example").is_dir():
        for part in ("example", "pkg_inc"):
            shutil.copytree(runtime / part, dest / part)
    else:
        archive = subprocess.run(["git", f"--git-dir={runtime}", "archive", "HEAD", "example", "pkg_inc"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest / "example"


def kernel_wrappers(example: Path) -> list:
    """The host functions example/kernel_func's headers declare (each launches an AscendC kernel)."""
    names = []
    for header in (example / "kernel_func").glob("*.h"):
        names += re.findall(r"^\s*(?:extern\s+\"C\"\s+)?void\s+(\w+)\s*\(", header.read_text(), re.M)
    return names


def out_of_scope_reason(sample: Path, wrappers: list) -> str:
    """Why a sample cannot run on a CPU, or "" when it can."""
    for source in sorted(sample.glob("*.cpp")):
        text = source.read_text(errors="replace")
        if "<<<" in text:
            return f"launches an AscendC kernel ({source.name})"
        binary = re.search(r"\b(aclrtBinaryLoad\w*|aclrtLaunchKernel\w*)\s*\(", text)
        if binary:
            return f"loads or launches a kernel binary: {binary.group(1)} ({source.name})"
        called = [w for w in wrappers if re.search(rf"\b{w}\s*\(", text)]
        if called:
            return f"calls the AscendC kernel {called[0]} ({source.name})"
        for operator in re.findall(r"\baclnn(\w+?)GetWorkspaceSize\b", text):
            if not operator.startswith(OUR_OPERATORS):
                return f"calls aclnn{operator}, an operator outside this project"
    return ""


def samples_under(example: Path) -> list:
    return sorted(run_sh.parent for run_sh in example.rglob("run.sh"))


def sample_env(example: Path, prefix: Path, check: bool) -> dict:
    """The environment `source example/set_sample_env.sh` leaves (run in a shell, then read back)."""
    script = f'export ASCEND_HOME_PATH="{prefix}"; source "{example}/set_sample_env.sh" >/dev/null && env -0'
    done = subprocess.run(["bash", "-c", script], capture_output=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"set_sample_env.sh failed:\n{done.stdout.decode(errors='replace')}"
                         f"{done.stderr.decode(errors='replace')}")
    env = dict(item.split("=", 1) for item in done.stdout.decode().split("\0") if "=" in item)
    if check:
        # a call that fails is the sample's own verdict (1_error_handling provokes one on purpose):
        # the checker must find nothing else
        env["ACLNN_CHECK"] = "1"
        env["ACLNN_CHECK_API_ERRORS"] = "0"
    return env


def run_sample(sample: Path, env: dict, timeout: float) -> tuple:
    """(verdict, output) of `bash run.sh` in the sample's directory: "pass", "FAIL" (the sample
    failed) or "CHECK" (it ran as documented, but the checking mode reported something)."""
    try:
        done = subprocess.run(["bash", "run.sh"], cwd=sample, env=env, capture_output=True, timeout=timeout)
        output = done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")
        code = done.returncode
    except subprocess.TimeoutExpired as expired:
        output = (expired.stdout or b"").decode(errors="replace") + f"\n[timeout after {timeout:.0f} s]"
        code = -1
    run_lines = [line for line in output.splitlines() if not line.startswith(("--", "CMake Warning"))]
    if code != 0 or any(FAILURE_LINE.search(line) for line in run_lines):
        return ("FAIL", output)
    return ("CHECK" if CHECK_REPORT.search(output) else "pass", output)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runtime", required=True, type=Path)
    parser.add_argument("--lib", default=str(ROOT / "build" / "lib64" / "libaclnn.so"))
    parser.add_argument("--only", default="", help="run only samples whose path contains this")
    parser.add_argument("--check", action="store_true", help="run under ACLNN_CHECK=1")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--timeout", type=float, default=180.0)
    parser.add_argument("--verbose", action="store_true", help="print every sample's output")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="runtime-samples-"))
    prefix = work / "cann"
    subprocess.run([sys.executable, str(ROOT / "tools" / "install_tree.py"), "--prefix", str(prefix),
                    "--lib", args.lib], check=True, capture_output=True)
    example = export_examples(args.runtime.resolve(), work)
    env = sample_env(example, prefix, args.check)
    wrappers = kernel_wrappers(example)

    passed = failed = skipped = 0
    for sample in samples_under(example):
        name = str(sample.relative_to(example))
        if args.only not in name:
            continue
        reason = out_of_scope_reason(sample, wrappers)
        if reason:
            skipped += 1
            print(f"  n/a   {name}: {reason}")
            continue
        verdict, output = run_sample(sample, env, args.timeout)
        ok = verdict == "pass"
        passed += ok
        failed += not ok
        print(f"  {verdict:5s} {name}")
        if args.verbose or not ok:
            tail = output.strip().splitlines()[-12:]
            print("\n".join("        | " + line for line in tail))
    print(f"{passed} passed, {failed} failed, {skipped} need an AI Core kernel or another operator"
          f" (work directory {work})")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
