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
