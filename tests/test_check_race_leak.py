"""racecheck and leakcheck (docs/checking.md) on small CANN-style Prelu programs
(tests/check_programs/race_leak.c): each mistake gets a report of the right kind naming the right
allocation and calls, every time (20 runs: the verdict must not depend on timing), and exits with
ACLNN_CHECK_EXITCODE; the same program laid out correctly (a wait, an event, another thread)
gets none.  The program's own results are checked against a plain loop (race_leak.c) when the
layout is correct."""
import re

import pytest

import support

SOURCE = support.ROOT / "tests" / "check_programs" / "race_leak.c"
EXIT_CODE = 7
RUNS = 20


@pytest.fixture(scope="module")
def program():
    return support.compile_program(SOURCE)


def run(program, what, layout, tools="1"):
    env = {"ACLNN_CHECK": tools, "ACLNN_CHECK_EXITCODE": str(EXIT_CODE), "ACLNN_NUM_THREADS": "2"}
    result = support.run_program(program, env=env, args=(what, layout))
    return result, result.stdout + result.stderr


def allocations(output):
    """{'p.y': 3, ...}: the allocation numbers the program printed."""
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^alloc (\S+) #(\d+)$", output, re.M)}


def reports(output):
    """The report blocks, each a list of lines (without the leading mark)."""
    blocks = []
    for line in output.splitlines():
        if line.startswith("========= ACLNN_CHECK ERROR") or line.startswith("========= ACLNN_CHECK WARNING"):
            blocks.append([line])
        elif line.startswith("=========   ") or line.startswith("=========     "):
            if blocks:
                blocks[-1].append(line)
    return blocks


def field(block, label):
    return next(line for line in block if line.startswith(f"=========   {label}"))


def expect_clean(program, what, layout, tools="1"):
    result, output = run(program, what, layout, tools)
    assert "ACLNN_CHECK ERROR" not in output, output
    assert "SUMMARY: 0 errors" in output, output
    assert result.returncode == 0, output
    assert "results ok" in output


RACES = [
    # (scenario, layout, title, call line, other line, allocation name)
    ("d2h", "stream", "aclrtMemcpy reads bytes an unfinished task writes",
     r"aclrtMemcpy reads bytes \[0, 1024\) of allocation #{y} \(src\), on the host",
     r"aclnnPrelu output 0 writes bytes \[0, 1024\) of allocation #{y}, on stream 0x[0-9a-f]+ \(stream #\d+\)", "p.y"),
    ("d2h", "default", "aclrtMemcpy reads bytes an unfinished task writes",
     r"aclrtMemcpy reads bytes \[0, 1024\) of allocation #{y} \(src\), on the host",
     r"aclnnPrelu output 0 writes bytes \[0, 1024\) of allocation #{y}, on the default stream of device 0", "p.y"),
    ("d2h", "thread", "aclrtMemcpy reads bytes an unfinished task writes",
     r"aclrtMemcpy reads bytes \[0, 1024\) of allocation #{y} \(src\), on the host",
     r"aclnnPrelu output 0 writes bytes \[0, 1024\) of allocation #{y}, on stream", "p.y"),
    ("free", "stream", "aclrtFree frees memory an unfinished task writes",
     r"aclrtFree frees allocation #{y} \(bytes \[0, 1056\)\), on the host",
     r"aclnnPrelu output 0 writes bytes \[0, 1024\) of allocation #{y}, on stream", "p.y"),
    ("free", "other_stream", "aclrtFree frees memory an unfinished task writes",
     r"aclrtFree frees allocation #{y} \(bytes \[0, 1056\)\), on the host",
     r"aclnnPrelu output 0 writes bytes \[0, 1024\) of allocation #{y}, on stream", "p.y"),
    ("two_streams", "none", "aclnnPrelu and aclnnPrelu on different streams touch the same bytes with no event ordering them",
     r"aclnnPrelu input 0 reads bytes \[0, 1024\) of allocation #{y}, on stream",
     r"aclnnPrelu output 0 writes bytes \[0, 1024\) of allocation #{y}, on stream", "a.y"),
    ("two_streams", "threads", "aclnnPrelu and aclnnPrelu on different streams touch the same bytes with no event ordering them",
     r"aclnnPrelu input 0 reads bytes \[0, 1024\) of allocation #{y}, on stream",
     r"aclnnPrelu output 0 writes bytes \[0, 1024\) of allocation #{y}, on stream", "a.y"),
    ("async_copy", "none", "aclnnPrelu and aclrtMemcpyAsync on different streams touch the same bytes with no event ordering them",
     r"aclnnPrelu input 0 reads bytes \[0, 1024\) of allocation #{y}, on stream",
     r"aclrtMemcpyAsync dst writes bytes \[0, 1024\) of allocation #{y}, on stream", "p.x"),
    ("copy2d", "none", "aclrtMemcpy2d reads bytes an unfinished task writes",
     r"aclrtMemcpy2d reads bytes \[0, 1024\) of allocation #{y} \(src\), on the host",
     r"aclnnPrelu output 0 writes bytes \[0, 1024\) of allocation #{y}, on stream", "p.y"),
    ("fill32", "none", "aclnnPrelu and aclrtMemsetD32Async on different streams touch the same bytes with no event ordering them",
     r"aclnnPrelu input 0 reads bytes \[0, 1024\) of allocation #{y}, on stream",
     r"aclrtMemsetD32Async ptr writes bytes \[0, 1024\) of allocation #{y}, on stream", "p.x"),
    ("workspace", "none", "aclnnPrelu and aclnnPrelu on different streams touch the same bytes with no event ordering them",
     r"aclnnPrelu workspace writes bytes \[0, \d+\) of allocation #{y}, on stream",
     r"aclnnPrelu workspace writes bytes \[0, \d+\) of allocation #{y}, on stream", "a.ws"),
    ("workspace", "threads", "aclnnPrelu and aclnnPrelu on different streams touch the same bytes with no event ordering them",
     r"aclnnPrelu workspace writes bytes \[0, \d+\) of allocation #{y}, on stream",
     r"aclnnPrelu workspace writes bytes \[0, \d+\) of allocation #{y}, on stream", "a.ws"),
]


@pytest.mark.parametrize("what,layout,title,call,other,alloc", RACES,
                         ids=[f"{r[0]}-{r[1]}" for r in RACES])
def test_race_reported_every_time(program, what, layout, title, call, other, alloc):
    for _ in range(RUNS):
        result, output = run(program, what, layout)
        assert result.returncode == EXIT_CODE, output
        blocks = [b for b in reports(output) if "(racecheck)" in b[0]]
        assert len(blocks) == 1, output
        block = blocks[0]
        assert block[0] == f"========= ACLNN_CHECK ERROR (racecheck): {title}", output
        number = allocations(output)[alloc]
        assert re.search(call.format(y=number), field(block, "call:")), output
        assert re.search(other.format(y=number), field(block, "other:")), output
        assert re.search(rf"allocation #{number}: \d+ bytes at 0x[0-9a-f]+, from aclrtMalloc at:",
                         field(block, "object:")), output
        assert field(block, "advice:")
        assert "SUMMARY: 1 error," in output


CORRECT = [("d2h", "sync"), ("d2h", "event"), ("d2h", "thread_event"), ("d2h", "query"),
           ("d2h", "device"), ("free", "sync"), ("two_streams", "event"),
           ("two_streams", "threads_event"), ("async_copy", "event"), ("copy2d", "ordered"), ("fill32", "ordered"), ("workspace", "event"), ("workspace", "own"),
           ("leak", "none")]


@pytest.mark.parametrize("what,layout", CORRECT, ids=[f"{w}-{l}" for w, l in CORRECT])
def test_correct_layout_is_clean_every_time(program, what, layout):
    for _ in range(RUNS):
        expect_clean(program, what, layout)


def test_race_not_reported_when_racecheck_is_off(program):
    result, output = run(program, "two_streams", "none", tools="leakcheck")
    assert "ACLNN_CHECK ERROR" not in output and result.returncode == 0, output


LEAK_ERRORS = ["device memory not freed", "aclrtStream not destroyed", "aclrtEvent not destroyed",
               "aclrtContext not destroyed"]
LEAK_WARNINGS = ["aclTensor not destroyed", "aclIntArray not destroyed",
                 "aclScalar not destroyed", "aclOpExecutor not destroyed"]


@pytest.mark.parametrize("layout,when", [("finalize", "at aclFinalize"), ("thread", "at aclFinalize"),
                                         ("exit", "at exit (no aclFinalize after it was made)")])
def test_leaks_listed_with_where_they_were_made(program, layout, when):
    for _ in range(RUNS):
        result, output = run(program, "leak", layout, tools="leakcheck")
        assert result.returncode == EXIT_CODE, output
        blocks = reports(output)
        titles = [b[0] for b in blocks]
        # the program's three buffers, two streams (its own and the main one), event, context
        memory = [b for b in blocks if "device memory not freed" in b[0]]
        assert sorted(int(re.search(r"allocation #(\d+)", field(b, "object:")).group(1))
                      for b in memory) == sorted(allocations(output).values()), output
        counts = {kind: sum(kind in t for t in titles) for kind in LEAK_ERRORS + LEAK_WARNINGS}
        assert counts == {"device memory not freed": 3, "aclrtStream not destroyed": 2,
                          "aclrtEvent not destroyed": 1, "aclrtContext not destroyed": 1,
                          "aclTensor not destroyed": 3, "aclIntArray not destroyed": 1,
                          "aclScalar not destroyed": 1, "aclOpExecutor not destroyed": 1}, output
        for block in blocks:
            severity = "ERROR" if any(k in block[0] for k in LEAK_ERRORS) else "WARNING"
            assert block[0].startswith(f"========= ACLNN_CHECK {severity} (leakcheck): "), output
            assert block[0].endswith(when), output
            assert re.search(r"from acl\w+ at:$", field(block, "object:")), block
            assert block[2].startswith("=========             #0 "), block  # a stack
        leaked = re.search(r"leaked stream (0x[0-9a-f]+) event (0x[0-9a-f]+) context (0x[0-9a-f]+)",
                           output)
        for kind, handle in zip(("aclrtStream", "aclrtEvent", "aclrtContext"), leaked.groups()):
            assert any(f"{kind} {handle}, from" in field(b, "object:") for b in blocks), output
        assert any(re.search(r"aclOpExecutor 0x[0-9a-f]+, from aclnnPreluGetWorkspaceSize at:$",
                             field(b, "object:")) for b in blocks), output
        assert "SUMMARY: 7 errors, 6 warnings" in output


def test_objects_reported_at_finalize_are_not_reported_again_at_exit(program):
    result, output = run(program, "leak", "finalize", tools="leakcheck")
    assert output.count("ACLNN_CHECK ERROR") == 7 and "at exit" not in output, output


def test_host_handles_alone_are_warnings(program):
    """Host-side handles left at aclFinalize are warnings: the exit status stays the program's
    (CANN's own examples leave their aclIntArrays)."""
    result, output = run(program, "leak", "host", tools="leakcheck")
    assert result.returncode == 0 and "SUMMARY: 0 errors, 6 warnings" in output, output
    titles = [b[0] for b in reports(output)]
    assert all(t.startswith("========= ACLNN_CHECK WARNING (leakcheck): ") for t in titles), output
    assert sorted(t.split(": ", 1)[1] for t in titles) == sorted(
        [f"{k} at aclFinalize" for k in LEAK_WARNINGS] + ["aclTensor not destroyed at aclFinalize"] * 2)


PYTHON_PROGRAM = """
import numpy as np
import pyaclnn.functional as F
x = np.random.rand(4, 64, 64, 64).astype(np.float32)   # results of 4 MiB: the result cache's blocks
w = np.array([0.25], dtype=np.float32)
kept = F.prelu(x, w)                                    # still alive at exit
for _ in range(3):
    y = F.prelu(x, w)                                   # back to the cache each time
np.testing.assert_array_equal(kept, np.where(x < 0, x * np.float32(0.25), x))
print("results ok")
"""


def test_pyaclnn_leaves_no_device_memory_at_exit():
    """pyaclnn's result cache gives its blocks back at interpreter exit, and the blocks arrays
    still hold as they are collected: a Python program exits clean under leakcheck."""
    import subprocess
    import sys
    env = dict(__import__("os").environ, ACLNN_CHECK="1", ACLNN_CHECK_EXITCODE=str(EXIT_CODE))
    result = subprocess.run([sys.executable, "-c", PYTHON_PROGRAM], capture_output=True, text=True,
                            env=env, timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0 and "results ok" in output, output
    assert "ACLNN_CHECK SUMMARY: 0 errors, 0 warnings" in output, output
