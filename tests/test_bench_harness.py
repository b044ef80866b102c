"""bench/harness.py's time_pair gives each side its own call count, so a fast kernel of ours is
timed over several back-to-back calls instead of one call right after each slow torch call, and
both sides are still sampled alternately."""
import sys
import time

import support

sys.path.insert(0, str(support.ROOT / "bench"))
import harness  # noqa: E402  (bench/harness.py)


def test_each_side_gets_its_own_call_count_and_the_calls_alternate():
    order = []

    def fast():
        order.append("ours")

    def slow():
        order.append("theirs")
        time.sleep(0.004)

    ours_s, theirs_s, (ours_calls, theirs_calls) = harness.time_pair(fast, slow, repetitions=4,
                                                                     target_seconds=0.004)
    assert theirs_calls == 1
    assert ours_calls > 1
    assert theirs_s >= 0.004 > ours_s
    timed = order[2 * 2 + 2:]        # after two warm-up pairs and one calibration call each
    # Repetitions alternate who goes first: ours|theirs, theirs|ours, ours|theirs, theirs|ours.
    runs = []
    for name in timed:
        if runs and runs[-1][0] == name:
            runs[-1][1] += 1
        else:
            runs.append([name, 1])
    assert runs == [["ours", ours_calls], ["theirs", 2], ["ours", 2 * ours_calls], ["theirs", 2],
                    ["ours", ours_calls]]
    assert timed.count("ours") == 4 * ours_calls and timed.count("theirs") == 4


def test_between_runs_once_per_repetition_right_after_the_pair():
    order = []

    def between():
        order.append("between")
        return len(order)

    ours_t, theirs_t, values, calls = harness.time_samples(lambda: order.append("ours"),
                                                           lambda: order.append("theirs"),
                                                           repetitions=3, target_seconds=0.0,
                                                           between=between)
    assert calls == (1, 1) and len(ours_t) == len(theirs_t) == 3
    timed = order[2 * 2 + 2:]
    assert timed == ["ours", "theirs", "between", "theirs", "ours", "between",
                     "ours", "theirs", "between"]
    assert values == [9, 12, 15]      # len(order) when each ran: 6 before the timed part


def test_paired_fraction_divides_each_repetition_by_its_own_stream_copy():
    # 1 GB moved: 1 s -> 1 GB/s, 0.5 s -> 2 GB/s, 0.25 s -> 4 GB/s; the copies of the same
    # repetitions were 2, 2 and 8 GB/s: ratios 0.5, 1.0, 0.5, median 0.5.
    assert harness.paired_fraction(1e9, [1.0, 0.5, 0.25], [2.0, 2.0, 8.0]) == 0.5
    # Against one figure for the whole case (the best copy, 8 GB/s) the median bandwidth of
    # 2 GB/s would give 0.25: the slow repetitions judged against a fast moment.
    assert harness.paired_fraction(1e9, [1.0], [1.0]) == 1.0


def test_the_thread_counts_workers_measure_in_turns():
    # bench/run.py's workers (1 and 2 threads) take turns case by case: each case of the
    # 2-thread worker starts after the 1-thread worker's same case has ended, and before the
    # 1-thread worker's next case starts.
    import run  # bench/run.py
    one, two = run.run_in_turns([1, 2], quick=True, only=["memcpy", "replication_pad2d N8"], table="kernels",
                                passive=True)
    assert one["threads"] == 1 and two["threads"] == 2
    names = [c["name"] for c in one["cases"]]
    assert len(names) >= 2 and names == [c["name"] for c in two["cases"]]
    for i, (a, b) in enumerate(zip(one["cases"], two["cases"])):
        assert "error" not in a and "error" not in b, (a.get("error"), b.get("error"))
        assert a["ended"] <= b["started"]
        if i + 1 < len(names):
            assert b["ended"] <= one["cases"][i + 1]["started"]


def test_python_rows_keep_torchs_default_wait_policy():
    # Kernel rows run with OMP_WAIT_POLICY=PASSIVE; the Python one-call rows in workers of their
    # own with torch's default, as a user's script (passive threads made each small 2-thread
    # torch call wake a sleeping thread: 70 us for a 1x3x8x8 pad instead of ~1.5).
    import run  # bench/run.py
    one, = run.run_tables([1], quick=True, only=["memcpy", "small: prelu 1x3x8x8"])
    policies = {(c["table"], c["omp_wait_policy"]) for c in one["cases"]}
    assert policies == {("kernels", "PASSIVE"), ("python", None)}, policies


def test_stream_bars_apply_at_their_thread_counts_and_are_judged_on_the_paired_fraction():
    # The memory-bound rows promise a fraction of the same-moment STREAM copy (BenchCase's
    # stream_bar) at some thread counts: the k3s1p1 Im2col at 1 and 2 threads, the fp32 col2im
    # at 1 thread only; the table's cell reads the paired fraction against it.
    import run  # bench/run.py
    import cases_im2col_prelu
    bars = {(c.name, c.dtype): (c.stream_bar, c.stream_bar_threads) for c in cases_im2col_prelu.CASES}
    assert bars[("im2col N8 C64 56x56 k3s1p1", "float16")] == (0.7, (1, 2))
    assert bars[("im2col N8 C64 56x56 k3s1p1", "float32")] == (0.9, (1, 2))
    assert bars[("col2im N8 C64 56x56 k3s1p1", "float32")] == (0.9, (1,))
    assert bars[("im2col N8 C256 28x28 k3s2p1", "float16")][0] is None
    assert run._stream_bar_cell({"stream_bar": 0.7, "stream": 0.69}) == "70% **no**"
    assert run._stream_bar_cell({"stream_bar": 0.9, "stream": 0.95}) == "90% yes"
    assert run._stream_bar_cell({"stream_bar": None, "stream": 0.5}) == ""
