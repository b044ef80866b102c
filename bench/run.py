#!/usr/bin/env python3
"""Run the benchmarks and write docs/performance.md and docs/performance.png.

    python bench/run.py [--out docs/performance.md] [--quick] [--threads 1,2] [--only prelu]

For each thread count (default: 1 and every core this process may use) a worker process is
started with ``ACLNN_NUM_THREADS`` set before libaclnn loads and ``torch.set_num_threads`` called;
it times every registered case (see bench/harness.py for how to add one) against PyTorch,
alternating the two, and measures STREAM copy bandwidth.  The workers take turns, one case each
(run_in_turns), so each case's thread counts are measured close together.  The parent collects the results and
writes a Markdown table and a bar chart of the speed-ups.
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import check_cost  # noqa: E402  (bench/check_cost.py)


def _cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


# The /proc/cpuinfo flags that decide or explain our kernels' speed, in the order printed.
_FEATURES = ("avx2", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_bf16", "avx512_fp16",
             "amx_bf16", "amx_tile", "amx_int8", "asimd", "fphp", "asimdhp", "bf16", "sve")


def _cpu_fields():
    """The first processor's fields of /proc/cpuinfo (empty where there is none)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        pass
    return fields


def _cache_size(index):
    try:
        with open("/sys/devices/system/cpu/cpu0/cache/index%d/size" % index) as f:
            return f.read().strip()
    except OSError:
        return None


def _cpu_description():
    """Model, vendor/family/model numbers, the caches Linux reports and the SIMD features that
    matter here: a generic model name ("Intel(R) Xeon(R) Processor" in a VM) says little."""
    fields = _cpu_fields()
    parts = [_cpu_model()]
    ident = " ".join(x for x in (fields.get("vendor_id"), fields.get("cpu family") and "family " + fields["cpu family"],
                                 fields.get("model") and "model " + fields["model"]) if x)
    if ident:
        parts.append("(%s)" % ident)
    caches = ", ".join("L%d %s" % (level, size) for level, size in ((2, _cache_size(2)), (3, _cache_size(3))) if size)
    flags = set((fields.get("flags") or fields.get("Features") or "").split())
    features = " ".join(f for f in _FEATURES if f in flags)
    text = " ".join(parts) + ", %s" % (platform.machine() or "unknown machine")
    if caches:
        text += "; caches (cpu0, as Linux reports them): " + caches
    if features:
        text += "; features: " + features
    return text


def _simd_tier():
    """The kernel tier libaclnn picks on this CPU (docs/architecture.md), as the library decides it."""
    flags = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    if os.environ.get("ACLNN_NO_SIMD") == "1":
        return "portable loops (ACLNN_NO_SIMD=1)"
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags and os.environ.get("ACLNN_NO_AVX512") != "1":
        extras = [name for flag, name in (("avx512_bf16", "AVX512-BF16"), ("avx512_fp16", "AVX512-FP16"))
                  if flag in flags and not (flag == "avx512_fp16" and os.environ.get("ACLNN_NO_AVX512FP16") == "1")]
        return "AVX-512" + (" with " + " and ".join(extras) if extras else "")
    if {"avx2", "f16c"} <= flags:
        return "AVX2 (no AVX-512)"
    return "portable loops"


# Per table, whether its workers run torch's OpenMP threads with OMP_WAIT_POLICY=PASSIVE. Kernel
# rows: PyTorch's threads otherwise spin after each call and take the core our next timed call
# needs, and passive waiting leaves torch's times for those calls (milliseconds) unchanged.
# Python one-call rows keep torch's default, as a user's script has: with passive threads a
# 2-thread 1x3x8x8 torch pad took 70 us instead of ~1.5 (each call woke a sleeping thread).
TABLES = (("kernels", True), ("python", False))


def _start_worker(threads, quick, only, log, table, passive):
    """A worker process for one thread count and one table, waiting for its first turn
    (run_in_turns)."""
    env = dict(os.environ)
    env["ACLNN_NUM_THREADS"] = str(threads)
    env["OMP_NUM_THREADS"] = str(threads)
    if passive:
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    else:
        env.pop("OMP_WAIT_POLICY", None)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--threads", str(threads),
           "--table", table]
    if quick:
        cmd.append("--quick")
    if only:
        cmd += ["--only", ",".join(only)]
    return subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                            universal_newlines=True)


def run_tables(thread_counts, quick, only):
    """run_in_turns for each table's cases (TABLES: each its own workers), their results
    joined per thread count."""
    results = None
    for table, passive in TABLES:
        part = run_in_turns(thread_counts, quick, only, table, passive)
        if results is None:
            results = part
            continue
        for joined, more in zip(results, part):
            joined["cases"] += more["cases"]
            joined["errors"] += [e for e in more["errors"] if e not in joined["errors"]]
    return results


def run_in_turns(thread_counts, quick, only, table, passive):
    """Every thread count's results, measured case by case in turns: one worker process per
    thread count, each measuring one case (or the start's STREAM copy) while the others wait,
    so a case's 1- and 2-thread rows are taken seconds apart rather than one whole run apart
    (their ratio is a table of its own, and the host's load drifts over minutes). The workers
    all list the same cases, so they end on the same turn, each with its results as a JSON line."""
    with tempfile.TemporaryFile("w+") as log:
        workers = [_start_worker(threads, quick, only, log, table, passive) for threads in thread_counts]

        def signal(i):
            """The worker's next "turn" (ready for a step: the previous one is done) or its
            results; exits with the workers' log if it died."""
            for line in workers[i].stdout:
                if line == "turn\n" or line.startswith("{"):
                    return line
            for other in workers:
                other.kill()
            log.seek(0)
            raise SystemExit("bench worker (%d threads) failed:\n%s" % (thread_counts[i], log.read()))

        for i in range(len(workers)):
            signal(i)  # imported and ready for the start's STREAM copy
        results = [None] * len(workers)
        while any(r is None for r in results):
            for i, worker in enumerate(workers):
                if results[i] is not None:
                    continue
                worker.stdin.write("go\n")
                worker.stdin.flush()
                line = signal(i)
                if line.startswith("{"):
                    results[i] = json.loads(line)
        for worker in workers:
            worker.stdin.close()
            worker.wait()
        log.seek(0)
        sys.stderr.write(log.read())
    return results


def _rows(results):
    rows = []
    for result in results:
        for case in result["cases"]:
            if "error" in case:
                continue
            stream = case.get("stream_gbps", result["stream_gbps"])
            best = case.get("stream_best_gbps", stream)
            gbps = case["bytes"] / (case["ours_ms"] * 1e-3) / 1e9
            rows.append(dict(case=case["name"], dtype=case["dtype"], threads=result["threads"],
                             table=case.get("table", "kernels"), bar=case.get("bar"),
                             stream_bar=case.get("stream_bar"),
                             ours=case["ours_ms"], torch=case["torch_ms"],
                             speedup=case["torch_ms"] / case["ours_ms"], gbps=gbps,
                             stream_gbps=stream,
                             stream=case.get("of_stream", gbps / stream if stream else float("nan")),
                             of_best=gbps / best if best else float("nan")))
    return rows


def _stream_bar_cell(row):
    """The row's STREAM bar and whether the paired fraction met it ("" when it has none)."""
    bar = row.get("stream_bar")
    if bar is None:
        return ""
    return "%.0f%% %s" % (100 * bar, "yes" if row["stream"] >= bar else "**no**")


def _scaling_lines(rows):
    """Our time on the fewest threads over our time on the most, per case (the col2im bar asks
    for it: PyTorch's col2im is single-threaded), next to the same ratio of the STREAM copy
    samples taken with those two rows - the host's own scaling at those moments."""
    threads = sorted({r["threads"] for r in rows})
    if len(threads) < 2:
        return []
    lo, hi = threads[0], threads[-1]
    by_key = {(r["case"], r["dtype"], r["threads"]): r for r in rows}
    lines = ["", "## Our %d-thread speed-up over our %d-thread time" % (hi, lo), "",
             "ours %dT ms / ours %dT ms, and the STREAM copy samples of the two rows in the same "
             "ratio (what the host's memory gave %d threads over %d at those moments)." % (
                 lo, hi, hi, lo), "",
             "| case | dtype | ours %dT / %dT | STREAM %dT / %dT |" % (lo, hi, hi, lo),
             "|---|---|---:|---:|"]
    for case, dtype in sorted({(r["case"], r["dtype"]) for r in rows}):
        a, b = by_key.get((case, dtype, lo)), by_key.get((case, dtype, hi))
        if a is None or b is None:
            continue
        lines.append("| %s | %s | %.2fx | %.2fx |" % (
            case, dtype, a["ours"] / b["ours"], b["stream_gbps"] / a["stream_gbps"]))
    return lines


def _python_lines(rows):
    """The "Python one-call" table: whole functional calls, results allocated on both sides."""
    if not rows:
        return []
    lines = ["", "## Python one-call", "",
             "A whole `pyaclnn.functional` call (argument handling, executor cache, result "
             "allocation, kernel) against the torch call a user would make instead "
             "(bench/cases_python_calls.py); nothing is preallocated on either side. `[numpy in]` "
             "rows pass numpy arrays to pyaclnn, `[torch in]` rows torch tensors; torch always "
             "gets torch tensors. `bar`: the speed-up promised for the row (backward 1.5x, "
             "forward and autograd 1.0x, small calls 0.33x on numpy and on torch inputs = at "
             "most 3x torch's per-call time). A `small:` row repeats one call, so from its second "
             "call on it takes its lane (docs/python.md, \"The numpy lane\" and \"The eager "
             "lane\"): the row measures the lane, and what is left of a 1x3x8x8 call is mostly "
             "the Python around it and phase 2's bookkeeping, not the kernel. Each of these calls "
             "moves under 2 MiB, so its kernel runs on the calling thread at any thread count "
             "(docs/python.md, \"Small calls and threads\"); the `train_cnn step` row's calls "
             "(0.1-1.1 MB each) do too.",
             "", "| call | threads | pyaclnn ms | torch ms | speed-up | bar | met |",
             "|---|---:|---:|---:|---:|---:|:---:|"]
    for r in sorted(rows, key=lambda r: (r["case"], r["threads"])):
        bar = r["bar"]
        lines.append("| %s | %d | %.4f | %.4f | %.2fx | %s | %s |" % (
            r["case"], r["threads"], r["ours"], r["torch"], r["speedup"],
            "" if bar is None else "%.2gx" % bar,
            "" if bar is None else ("yes" if r["speedup"] >= bar else "**no**")))
    return lines


def write_markdown(path, results, rows, png_name, quick, check_rows=None):
    import torch
    lines = ["# Performance", "",
             "Generated by `make bench` (`bench/run.py%s`) on %s." % (
                 " --quick" if quick else "", datetime.date.today().isoformat()), "",
             "* Machine: %s; %d cores visible; kernels: %s; Python %s, torch %s." % (
                 _cpu_description(), _cpu_count(), _simd_tier(), platform.python_version(), torch.__version__),
             "* Each row: median time per call over alternating repetitions of our kernel "
             "(phase 2 + synchronize, repeatable executor, outputs and workspace preallocated) and "
             "the PyTorch equivalent (outputs preallocated), in the same process with the same "
             "thread count (`ACLNN_NUM_THREADS` and `torch.set_num_threads`); one process per "
             "thread count, the processes taking turns case by case, so a case's 1- and 2-thread "
             "rows are measured seconds apart. Each side's sample "
             "is as many back-to-back calls as fill about 20 ms, counted per side: a ~1 ms "
             "memory-bound call timed alone right after torch's 10-30 ms call ran at up to half "
             "speed on the reference host, while the same call back to back ran at full speed (likely "
             "the memory clock winding up after a quiet spell). "
             "For these rows `OMP_WAIT_POLICY=PASSIVE` "
             "keeps torch's idle OpenMP threads from spinning on the core our next call needs; it "
             "does not change torch's own times of these calls. The Python one-call rows run in "
             "processes of their own with torch's default wait policy, as a user's script has "
             "(with passive threads each small 2-thread torch call woke a sleeping thread: a "
             "1x3x8x8 pad took 70 us instead of ~1.5).",
             "* Memory: our tensors come from `aclrtMalloc`, which under CANN's default policy puts "
             "blocks of 2 MiB and more on transparent huge pages (docs/runtime.md); torch runs with "
             "its default allocator, which does not (`THP_MEM_ALLOC_ENABLE=1` would: about 4 % "
             "off torch's 1-thread max-pool backward here, docs/kernels_max_pool.md).",
             "* speed-up = torch time / our time (> 1: we are faster). GB/s counts the bytes an "
             "ideal kernel must read and write, at our time. `STREAM GB/s` is the median of "
             "the STREAM copies timed once after each repetition's pair (one `copy_` and one "
             "`memmove`, the better of the two), in the same process; `of STREAM copy` is the "
             "median over the repetitions of our bandwidth in that repetition over the copy of "
             "the same repetition, so a neighbour's burst that slows a repetition slows both "
             "sides of its ratio. `of best STREAM before/after` divides our median bandwidth by "
             "the best of 8 copies timed just before and just after the case, the looser "
             "pairing used before (bench/harness.py). `STREAM bar`: the fraction of the STREAM "
             "copy a memory-bound row promises (`of STREAM copy` against it) at that thread count.",
             "* The machine is shared; bandwidth can drift by up to 2x over minutes, which is why "
             "both sides are interleaved and why the bandwidth is sampled next to each case "
             "rather than once per run.", "",
             "## STREAM copy", "",
             "At the start of each thread count's run (best of %d copies), and the range of the "
             "per-case samples." % (10 if quick else 20), "",
             "| threads | at start GB/s | per case: lowest | median | highest |",
             "|---:|---:|---:|---:|---:|"]
    for result in results:
        per_case = sorted(c["stream_gbps"] for c in result["cases"] if "stream_gbps" in c)
        if per_case:
            lines.append("| %d | %.1f | %.1f | %.1f | %.1f |" % (
                result["threads"], result["stream_gbps"], per_case[0],
                per_case[len(per_case) // 2], per_case[-1]))
        else:
            lines.append("| %d | %.1f | | | |" % (result["threads"], result["stream_gbps"]))
    lines += ["", "## Operators", "",
              "| case | dtype | threads | ours ms | torch ms | speed-up | GB/s | STREAM GB/s "
              "| of STREAM copy | of best STREAM before/after | STREAM bar |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    kernel_rows = [r for r in rows if r["table"] == "kernels"]
    for r in sorted(kernel_rows, key=lambda r: (r["case"], r["dtype"], r["threads"])):
        lines.append("| %s | %s | %d | %.3f | %.3f | %.2fx | %.1f | %.1f | %.0f%% | %.0f%% | %s |" % (
            r["case"], r["dtype"], r["threads"], r["ours"], r["torch"], r["speedup"], r["gbps"],
            r["stream_gbps"], 100 * r["stream"], 100 * r["of_best"], _stream_bar_cell(r)))
    lines += _scaling_lines(kernel_rows)
    lines += _python_lines([r for r in rows if r["table"] == "python"])
    lines += check_cost.lines(check_rows, _cpu_count()) if check_rows else []
    failures = [(res["threads"], c) for res in results for c in res["cases"] if "error" in c]
    errors = [e for res in results for e in res["errors"]]
    if failures or errors:
        lines += ["", "## Cases that failed", ""]
        for threads, case in failures:
            last = case["error"].strip().splitlines()[-1]
            lines.append("* %s (%s, %d threads): `%s`" % (case["name"], case["dtype"], threads, last))
        for error in sorted(set(errors)):
            lines.append("* `%s`" % error.strip().splitlines()[-1])
    lines += ["", "![speed-up over PyTorch](%s)" % png_name, ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def write_chart(path, rows):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = sorted({(r["case"], r["dtype"]) for r in rows})
    threads = sorted({r["threads"] for r in rows})
    by_key = {(r["case"], r["dtype"], r["threads"]): r["speedup"] for r in rows}
    fig_height = max(3.0, 0.45 * len(labels) * max(1, len(threads)) + 1.5)
    fig, ax = plt.subplots(figsize=(10, fig_height))
    bar = 0.8 / max(1, len(threads))
    for i, t in enumerate(threads):
        ys = [j + i * bar for j in range(len(labels))]
        values = [by_key.get((case, dtype, t), 0.0) for case, dtype in labels]
        bars = ax.barh(ys, values, height=bar, label="%d thread%s" % (t, "" if t == 1 else "s"))
        for rect, value in zip(bars, values):
            if value:
                ax.text(rect.get_width(), rect.get_y() + rect.get_height() / 2, " %.2fx" % value,
                        va="center", fontsize=8)
    ax.axvline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_yticks([j + bar * (len(threads) - 1) / 2 for j in range(len(labels))])
    ax.set_yticklabels(["%s [%s]" % label for label in labels], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("speed-up over PyTorch (torch time / libaclnn time; > 1 is faster)")
    ax.set_title("libaclnn vs PyTorch CPU, same process, same threads")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _wait_for_turn():
    """A worker's turn (run_in_turns): report the previous step done, then wait for "go"."""
    sys.stdout.write("turn\n")
    sys.stdout.flush()
    if not sys.stdin.readline():
        raise SystemExit("bench worker: the parent has gone")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "performance.md"))
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, smaller arrays")
    parser.add_argument("--threads", default=None, help="comma-separated thread counts")
    parser.add_argument("--only", default=None, help="comma-separated substrings of case names")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--table", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    only = [w for w in args.only.split(",") if w] if args.only else None

    if args.worker:
        import harness
        result = harness.run_worker(int(args.threads), args.quick, only, turn=_wait_for_turn,
                                    table=args.table)
        sys.stdout.write(json.dumps(result) + "\n")
        return 0

    thread_counts = ([int(t) for t in args.threads.split(",")] if args.threads
                     else sorted({1, _cpu_count()}))
    print("bench: %s thread(s), each case in turns..." % " and ".join(map(str, thread_counts)), flush=True)
    results = run_tables(thread_counts, args.quick, only)
    rows = _rows(results)
    print("bench: checking mode's cost...", flush=True)
    check_rows = check_cost.measure(rounds=3 if args.quick else 5)
    for r in rows:
        print("  %-50s %-9s %d thr  ours %8.3f ms  torch %8.3f ms  %5.2fx  %6.1f GB/s  %3.0f%% STREAM"
              % (r["case"][:50], r["dtype"], r["threads"], r["ours"], r["torch"], r["speedup"],
                 r["gbps"], 100 * r["stream"]))
    for result in results:
        for case in result["cases"]:
            if "error" in case:
                print("  FAILED %s (%d threads):\n%s" % (case["name"], result["threads"], case["error"]))
        for error in result["errors"]:
            print("  MODULE ERROR %s" % error)

    out = os.path.abspath(args.out)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    png = os.path.splitext(out)[0] + ".png"
    kernel_rows = [r for r in rows if r["table"] == "kernels"]
    write_chart(png, kernel_rows) if kernel_rows else None
    write_markdown(out, results, rows, os.path.basename(png), args.quick, check_rows)
    with open(os.path.splitext(out)[0] + ".json", "w") as f:
        json.dump(results, f, indent=1)
    print("bench: wrote %s and %s" % (out, png))
    return 0


if __name__ == "__main__":
    sys.exit(main())
