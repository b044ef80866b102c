"""Profiling's files (docs/runtime.md, "Profiling"), parsed: tests/c/test_runtime_prof.c profiles
three Prelu launches on two streams with a copy, a memset, an event and every kind of msproftx
stamp and a training step; the trace must hold one row per stream with the launches in it, nested as the calls were,
and op_summary.csv one row per launch with its shapes and dtypes.  ACLNN_PROFILE=DIR must do the
same for the program's --plain run, which makes no aclprof call."""
import csv
import json

import pytest

import support

SOURCE = support.C_TESTS / "test_runtime_prof.c"
# The launches test_runtime_prof.c makes, in order: (stream order, input shapes, input dtypes).
LAUNCHES = [("a", "[2,3,4];[3]", "FLOAT;FLOAT"), ("b", "[5,3];[1]", "FLOAT16;FLOAT16"),
            ("a", "[2,3,4];[3]", "FLOAT;FLOAT")]


@pytest.fixture(scope="module")
def program():
    return support.compile_program(SOURCE)


def _run(program, args=(), env=None):
    result = support.run_program(program, args=args, env=env)
    assert result.returncode == 0, result.stdout + result.stderr


def _sessions(directory):
    return sorted(directory.glob("aclnn_prof_*"), key=lambda p: int(p.name.rsplit("_", 1)[1]))


def _load(session):
    trace = json.loads((session / "trace.json").read_text())
    assert list(trace) == ["traceEvents"]  # no displayTimeUnit: Perfetto ignores it with a note
    with open(session / "op_summary.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return trace["traceEvents"], rows


def _row_names(events):
    """{(pid, tid): name} from the "M" thread_name events, and {pid: name} from process_name."""
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
    processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    return threads, processes


def _check_launches(events, rows):
    """The operator events and CSV rows match LAUNCHES: names, streams, shapes, dtypes, times."""
    ops = sorted((e for e in events if e.get("cat") == "operator"), key=lambda e: e["ts"])
    assert [e["name"] for e in ops] == ["aclnnPrelu"] * 3
    assert [(e["args"]["input_shapes"], e["args"]["input_dtypes"]) for e in ops] == [l[1:] for l in LAUNCHES]
    # two streams: the first and third launch on one row, the second on another
    assert ops[0]["tid"] == ops[2]["tid"] != ops[1]["tid"]
    assert all(e["ph"] == "X" and e["dur"] >= 0 and e["args"]["product"].startswith("Ascend") for e in ops)
    assert ops[0]["ts"] + ops[0]["dur"] <= ops[1]["ts"] and ops[1]["ts"] + ops[1]["dur"] <= ops[2]["ts"]
    threads, processes = _row_names(events)
    assert all(threads[(e["pid"], e["tid"])] == "stream %d" % e["tid"] for e in ops)
    assert all(processes[e["pid"]] == "device 0" for e in ops)
    assert [(r["operator"], r["input_shapes"], r["input_dtypes"]) for r in rows] == \
        [("aclnnPrelu",) + l[1:] for l in LAUNCHES]
    for row, event in zip(rows, ops):
        assert float(row["start_us"]) == pytest.approx(event["ts"], abs=1e-3)
        assert float(row["duration_us"]) == pytest.approx(event["dur"], abs=1e-3)
        assert int(row["stream"]) == event["tid"] and int(row["thread"]) == event["args"]["thread"]
        assert row["product"] == event["args"]["product"]
    return ops


def test_collection_files(program, tmp_path):
    _run(program, [str(tmp_path)])
    sessions = _sessions(tmp_path)
    # test_bad_calls' empty collection, the auto-initialized one, then the main one
    assert len(sessions) == 3
    events, rows = _load(sessions[2])
    ops = _check_launches(events, rows)
    by_cat = {}
    for e in events:
        by_cat.setdefault(e.get("cat"), []).append(e)
    # the copy, memset and event record ran on the second launch's stream, after it
    other = [e for e in events if e.get("cat") in ("copy", "memset", "event")]
    assert [e["name"] for e in other] == ["aclrtMemcpyAsync", "aclrtMemsetAsync", "aclrtRecordEvent"]
    assert all(e["tid"] == ops[1]["tid"] and e["ts"] >= ops[1]["ts"] + ops[1]["dur"] for e in other)
    # aclprofMarkEx: an instant on the host and one on stream a, before the first launch
    marks = [e for e in events if e["name"] == "before launches"]
    assert sorted(e["cat"] for e in marks) == ["mark", "msproftx"]
    device_mark = next(e for e in marks if e["cat"] == "mark")
    assert device_mark["ph"] == "i" and device_mark["tid"] == ops[0]["tid"] and device_mark["ts"] <= ops[0]["ts"]
    host_mark = next(e for e in marks if e["cat"] == "msproftx")
    assert host_mark["pid"] == 1 and host_mark["args"]["stream"] == ops[0]["tid"]
    # ranges: push "outer" > RangeStart "outer" (async) > RangePushEx "inner" > the launches
    tx = by_cat["msproftx"]

    def ts(name, phase):
        return next(e["ts"] for e in tx if e["name"] == name and e["ph"] == phase)

    assert ts("outer", "B") <= ts("outer", "b") <= ts("inner", "B") <= ops[0]["ts"]
    assert ops[2]["ts"] + ops[2]["dur"] <= ts("inner", "E") <= ts("outer", "e") <= ts("outer", "E")
    # the start/stop pair shares a process-local id2 (a plain "id" is global: Perfetto drew the range
    # on a row outside every process), so viewers draw it in the host process
    begin, end = next(e for e in tx if e["ph"] == "b"), next(e for e in tx if e["ph"] == "e")
    assert "id" not in begin and "id" not in end
    assert isinstance(begin["id2"]["local"], int) and begin["id2"] == end["id2"]
    # the training step (the second step info the program made) brackets the launches on stream a
    steps = {e["name"]: e for e in by_cat["step"]}
    assert sorted(steps) == ["step 1 end", "step 1 start"]
    assert all(e["ph"] == "i" and e["tid"] == ops[0]["tid"] for e in steps.values())
    assert steps["step 1 start"]["ts"] <= ops[0]["ts"] and ops[2]["ts"] + ops[2]["dur"] <= steps["step 1 end"]["ts"]
    after = next(e for e in tx if e["name"] == "after")
    assert after["ph"] == "i" and ts("inner", "E") <= after["ts"] <= ts("outer", "E")
    threads, processes = _row_names(events)
    assert processes[1] == "host" and threads[(1, host_mark["tid"])] == "host thread %d" % host_mark["tid"]
    # device 0's pid is one past the highest stream row (a tid), so no row is taken for its process's
    # main thread (tid == pid); each process sorts by its pid: the host above the device
    device_pid = ops[0]["pid"]
    assert device_pid == 1 + max(tid for pid, tid in threads if pid == device_pid)
    sort_index = {e["pid"]: e["args"]["sort_index"] for e in events if e["name"] == "process_sort_index"}
    assert sort_index == {1: 1, device_pid: device_pid}


def test_auto_initialized_collection_writes_in_the_current_directory(program, tmp_path):
    _run(program, [str(tmp_path)])
    events, rows = _load(_sessions(tmp_path)[1])
    assert [(r["operator"], r["input_shapes"], r["input_dtypes"]) for r in rows] == \
        [("aclnnPrelu", "[4];[1]", "FLOAT;FLOAT")]
    assert not [e for e in events if e.get("cat") == "msproftx"]  # ACL_PROF_TASK_TIME only


def test_collection_without_launches(program, tmp_path):
    """test_bad_calls' collection: no operator, only the step its checks started and ended."""
    _run(program, [str(tmp_path)])
    events, rows = _load(_sessions(tmp_path)[0])
    assert rows == []
    assert [(e["ph"], e["name"]) for e in events if e["ph"] != "M"] == [("i", "step 0 start"), ("i", "step 0 end")]


def test_aclnn_profile_env_without_aclprof_calls(program, tmp_path):
    target = tmp_path / "made" / "here"
    _run(program, ["--plain"], env={"ACLNN_PROFILE": str(target)})
    sessions = _sessions(target)
    assert len(sessions) == 1
    events, rows = _load(sessions[0])
    _check_launches(events, rows)
    assert [e["name"] for e in events if e.get("cat") == "copy"] == ["aclrtMemcpyAsync"]



def test_timeline_program_of_the_docs_picture(tmp_path):
    """tools/profile_timeline.c, the program docs/profiling_timeline.png shows, still makes that
    timeline under ACLNN_PROFILE (the picture itself needs a browser; this does not): per iteration,
    stream a copies, marks, pads, records and pools; stream b copies, upsamples, applies Prelu, waits
    for a's event, runs Im2col and copies out; the host pushes "queue", marks, and starts and
    stops an "iteration n" range."""
    exe = support.compile_program(support.ROOT / "tools" / "profile_timeline.c")
    _run(exe, env={"ACLNN_PROFILE": str(tmp_path)})
    (session,) = _sessions(tmp_path)
    events, rows = _load(session)
    device = [e for e in events if e["ph"] in ("X", "i") and e["pid"] != 1]
    a, b = sorted({e["tid"] for e in device})
    per_iteration = {
        a: ["aclrtMemcpyAsync", "image queued", "aclnnReplicationPad2d", "aclrtRecordEvent",
            "aclnnMaxPool2dWithMask"],
        b: ["aclrtMemcpyAsync", "aclnnUpsampleNearestExact1d", "aclnnPrelu", "aclrtStreamWaitEvent",
            "aclnnIm2col", "aclrtMemcpyAsync"],
    }
    for tid, names in per_iteration.items():
        on_stream = sorted((e for e in device if e["tid"] == tid), key=lambda e: e["ts"])
        assert [e["name"] for e in on_stream] == names * 3
    # Im2col reads what stream a padded: it starts after the pad it waited for ended
    pads = sorted((e for e in device if e["name"] == "aclnnReplicationPad2d"), key=lambda e: e["ts"])
    im2cols = sorted((e for e in device if e["name"] == "aclnnIm2col"), key=lambda e: e["ts"])
    assert all(i["ts"] >= p["ts"] + p["dur"] for p, i in zip(pads, im2cols))
    host = [e for e in events if e["pid"] == 1 and e["ph"] != "M"]
    assert [e["name"] for e in host if e["ph"] == "b"] == ["iteration 0", "iteration 1", "iteration 2"]
    assert sorted(e["name"] for e in host if e["ph"] == "i") == ["image queued"] * 3 + ["synchronized"] * 3
    assert [e["name"] for e in host if e["ph"] == "B"] == ["queue"] * 3
    assert [r["operator"] for r in rows].count("aclnnIm2col") == 3 and len(rows) == 15
