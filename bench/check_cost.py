"""What the checking mode costs (docs/checking.md): bench/drivers/check_cost.c, a CANN-style
Prelu program (phase 1 + launch + synchronize per call), on a large operator (16 Mi floats: 64 MiB
in, 64 MiB out) and a small call (64 floats), run alternately without and with
``ACLNN_CHECK=memcheck,initcheck`` - each side in its own process, since the library reads the
variable once.  The bar: the checked large operator takes at most 2x the normal time."""
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))

CASES = [("Prelu fp32 16 Mi elements (large operator)", 1 << 24, 15, 2.0),
         ("Prelu fp32 64 elements (small call)", 64, 3000, None)]
TOOLS = "memcheck,initcheck"


def _time(exe, elements, calls, checked):
    env = dict(os.environ)
    env.pop("ACLNN_CHECK", None)
    if checked:
        env["ACLNN_CHECK"] = TOOLS
    out = subprocess.run([str(exe), str(elements), str(calls)], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True, check=True).stdout
    return float(out.split()[-1]) / 1000.0  # ms


def measure(rounds=5):
    """[(case, normal ms, checked ms, bar)]: medians over `rounds` alternating runs."""
    import support
    exe = support.compile_program(os.path.join(ROOT, "bench", "drivers", "check_cost.c"),
                                  out_dir=support.BIN_DIR.parent / "bench", extra_flags=["-O2"])
    rows = []
    for name, elements, calls, bar in CASES:
        normal, checked = [], []
        for _ in range(rounds):
            normal.append(_time(exe, elements, calls, False))
            checked.append(_time(exe, elements, calls, True))
        rows.append((name, statistics.median(normal), statistics.median(checked), bar))
    return rows


def lines(rows, threads):
    out = ["", "## Checking mode", "",
           "The cost of `ACLNN_CHECK=%s` (docs/checking.md) on a CANN-style program "
           "(bench/check_cost.py, bench/drivers/check_cost.c: phase 1 + launch + synchronize per "
           "call, median of the calls, median of 5 alternating processes per side, %d thread%s). "
           "`bar`: the checked time may be at most this multiple of the normal time." % (
               TOOLS, threads, "" if threads == 1 else "s"),
           "", "| call | normal ms | checked ms | checked / normal | bar | met |",
           "|---|---:|---:|---:|---:|:---:|"]
    for name, normal, checked, bar in rows:
        ratio = checked / normal
        out.append("| %s | %.4f | %.4f | %.2fx | %s | %s |" % (
            name, normal, checked, ratio, "" if bar is None else "%.1fx" % bar,
            "" if bar is None else ("yes" if ratio <= bar else "**no**")))
    return out


if __name__ == "__main__":
    for row in measure():
        print("%-45s normal %9.4f ms  checked %9.4f ms  %.2fx" % (row[0], row[1], row[2], row[2] / row[1]))
