"""Dumps (docs/runtime.md, "Dumps"): aclmdlInitDump / aclmdlSetDump / aclmdlFinalizeDump, the
"dump" section of aclInit's configuration, acldumpGetPath, aclopStartDumpArgs / aclopStopDumpArgs.

The dumped inputs are compared with the arrays given, the dumped outputs with NumPy references
written from the operators' definitions (not with what the call returned); the configuration
checks are compared with the statuses of CANN's runtime (runtime:src/acl/aclrt_impl/toolchain/
dump.cpp, runtime:src/dfx/adump/adump/impl/dump_config_converter.cpp).  aclInit takes one
configuration per process, so its cases run in a child process.
"""
import json
import os
import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import pytest

import pyaclnn
import pyaclnn.functional as F
from pyaclnn import ffi, lib

ACL_SUCCESS = 0
ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_UNINITIALIZE = 100001
ACL_ERROR_REPEAT_INITIALIZE = 100002
ACL_ERROR_INVALID_FILE = 100003
ACL_ERROR_PARSE_FILE = 100006
ACL_ERROR_INVALID_DUMP_CONFIG = 100009
ACL_ERROR_DUMP_NOT_RUN = 100045
ACL_ERROR_FAILURE = 500001
DATA_DUMP, OVERFLOW_DUMP, AIC_ERR_BRIEF_DUMP = 4, 5, 1


def recent_message():
    text = lib.aclGetRecentErrMsg()
    return "" if text == ffi.NULL else ffi.string(text).decode()


@pytest.fixture
def dumping(tmp_path):
    """aclmdlInitDump done; yields a function that writes a config and calls aclmdlSetDump."""
    pyaclnn.init()
    assert lib.aclmdlInitDump() == ACL_SUCCESS

    def set_dump(section, name="dump.json"):
        cfg = tmp_path / name
        cfg.write_text(json.dumps({"dump": section}) if not isinstance(section, str) else section)
        return lib.aclmdlSetDump(str(cfg).encode())

    yield set_dump
    lib.aclmdlFinalizeDump()
    recent_message()


def launch_dir(root):
    dirs = [os.path.join(root, "Ascend910B", d) for d in os.listdir(os.path.join(root, "Ascend910B"))]
    assert dirs == [os.path.join(root, "Ascend910B", str(os.getpid()))]
    return dirs[0]


def read_index(folder):
    with open(os.path.join(folder, "index.jsonl")) as f:
        return [json.loads(line) for line in f]


def load(folder, entry, kind, index):
    """The array a launch's index entry names for its input/output `index`."""
    return np.load(os.path.join(folder, entry[kind][index]["file"]))


def prelu_reference(x, w):
    shape = [1] * x.ndim
    if x.ndim > 1:
        shape[1] = w.size
    return np.where(x > 0, x, w.reshape(shape) * x)


def test_dump_mode_all_writes_what_prelu_read_and_wrote(tmp_path, dumping):
    root = tmp_path / "out"
    root.mkdir()
    assert dumping({"dump_path": str(root), "dump_op_switch": "on", "dump_mode": "all"}) == ACL_SUCCESS
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    w = np.array([0.25, -0.5, 2.0], dtype=np.float32)
    F.prelu(x, w)
    folder = launch_dir(str(root))
    [entry] = read_index(folder)
    n = entry["launch"]
    assert n >= 1 and entry["op"] == "aclnnPrelu" and entry["status"] == 0
    assert entry["product"] == "Ascend910B" and entry["device"] == 0 and entry["stream"].startswith("0x")
    assert [i["file"] for i in entry["inputs"]] == [f"{n:06d}_aclnnPrelu_input_0.npy", f"{n:06d}_aclnnPrelu_input_1.npy"]
    assert [i["shape"] for i in entry["inputs"]] == [[2, 3, 4], [3]]
    assert entry["outputs"] == [{"index": 0, "file": f"{n:06d}_aclnnPrelu_output_0.npy", "dtype": "float32",
                                 "acl_dtype": "FLOAT", "format": "ND", "shape": [2, 3, 4]}]
    np.testing.assert_array_equal(load(folder, entry, "inputs", 0), x)
    np.testing.assert_array_equal(load(folder, entry, "inputs", 1), w)
    out = load(folder, entry, "outputs", 0)
    assert out.dtype == np.float32 and out.shape == (2, 3, 4)
    np.testing.assert_allclose(out, prelu_reference(x, w), rtol=1e-6, atol=0)


def test_strided_input_is_dumped_in_its_logical_order(tmp_path, dumping):
    root = tmp_path / "out"
    root.mkdir()
    assert dumping({"dump_path": str(root), "dump_op_switch": "on", "dump_mode": "all"}) == ACL_SUCCESS
    base = np.arange(2 * 5 * 4, dtype=np.float32).reshape(2, 4, 5)
    x = base.transpose(0, 2, 1)[None]  # [1, 2, 5, 4], not contiguous
    padding = (1, 2, 0, 1)
    F.replication_pad2d(x, padding)
    folder = launch_dir(str(root))
    [entry] = read_index(folder)
    dumped = load(folder, entry, "inputs", 0)
    assert dumped.flags.c_contiguous
    np.testing.assert_array_equal(dumped, x)
    expected = np.pad(x, ((0, 0), (0, 0), (0, 1), (1, 2)), mode="edge")
    np.testing.assert_array_equal(load(folder, entry, "outputs", 0), expected)


def test_two_outputs_and_launch_numbers(tmp_path, dumping):
    root = tmp_path / "out"
    root.mkdir()
    assert dumping({"dump_path": str(root), "dump_op_switch": "on"}) == ACL_SUCCESS  # mode: output
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 5)).astype(np.float32)
    g = rng.standard_normal((2, 3, 5)).astype(np.float32)
    w = np.array([0.1, 0.2, 0.3], dtype=np.float32)
    F.prelu(x, w)
    F.prelu_backward(g, x, w)
    folder = launch_dir(str(root))
    entries = read_index(folder)
    n = entries[0]["launch"]
    assert [(e["launch"], e["op"]) for e in entries] == [(n, "aclnnPrelu"), (n + 1, "aclnnPreluBackward")]
    assert all(i["file"] is None for e in entries for i in e["inputs"])
    assert not any("input" in name for name in os.listdir(folder))
    assert entries[1]["outputs"][1]["file"] == f"{n + 1:06d}_aclnnPreluBackward_output_1.npy"
    grad_x = load(folder, entries[1], "outputs", 0)
    grad_w = load(folder, entries[1], "outputs", 1)
    np.testing.assert_allclose(grad_x, np.where(x > 0, g, w[None, :, None] * g), rtol=1e-6)
    ref_w = np.where(x > 0, 0.0, x.astype(np.float64) * g).sum(axis=(0, 2))
    np.testing.assert_allclose(grad_w, ref_w, rtol=1e-5, atol=1e-6)


def test_dump_mode_input_and_bf16(tmp_path, dumping):
    root = tmp_path / "out"
    root.mkdir()
    assert dumping({"dump_path": str(root), "dump_op_switch": "on", "dump_mode": "input"}) == ACL_SUCCESS
    x = np.array([[-1.5, 2.0, -0.25], [3.0, -4.0, 0.5]], dtype=ml_dtypes.bfloat16)
    w = np.array([0.5, 0.5, 0.75], dtype=ml_dtypes.bfloat16)
    F.prelu(x, w)
    folder = launch_dir(str(root))
    [entry] = read_index(folder)
    raw = load(folder, entry, "inputs", 0)
    assert raw.dtype == np.dtype("V2") and raw.shape == (2, 3)
    np.testing.assert_array_equal(raw.view(ml_dtypes.bfloat16), x)
    assert entry["inputs"][0]["dtype"] == "bfloat16" and entry["inputs"][0]["acl_dtype"] == "BFLOAT16"
    assert entry["outputs"][0]["file"] is None
    assert not any("output" in name for name in os.listdir(folder))


def test_switch_off_and_finalize_dump_nothing(tmp_path, dumping):
    root = tmp_path / "out"
    root.mkdir()
    x = np.ones((1, 2, 2), dtype=np.float32)
    w = np.ones(2, dtype=np.float32)
    # dump_list names model layers: no aclnn launch is one of them.
    assert dumping({"dump_path": str(root), "dump_list": [{"model_name": "ResNet-50", "layer": ["conv1"]}],
                    "dump_mode": "all"}) == ACL_SUCCESS
    F.prelu(x, w)
    assert os.listdir(root) == []
    assert dumping({"dump_path": str(root), "dump_op_switch": "on"}) == ACL_SUCCESS
    assert lib.aclmdlFinalizeDump() == ACL_SUCCESS
    F.prelu(x, w)
    assert os.listdir(root) == []
    assert lib.aclmdlInitDump() == ACL_SUCCESS  # for the fixture's FinalizeDump


def test_get_path(tmp_path, dumping, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert lib.acldumpGetPath(DATA_DUMP) == ffi.NULL
    assert dumping({"dump_path": str(tmp_path), "dump_op_switch": "on"}) == ACL_SUCCESS
    assert ffi.string(lib.acldumpGetPath(DATA_DUMP)).decode() == str(tmp_path)
    assert ffi.string(lib.acldumpGetPath(OVERFLOW_DUMP)).decode() == str(tmp_path)
    # The exception dumps' directory for a program's own data: made under "./" without an
    # exception scene (CANN's CreateExtraDumpPath), under the scene's dump_path with one.
    extra = ffi.string(lib.acldumpGetPath(AIC_ERR_BRIEF_DUMP)).decode()
    assert extra == os.path.realpath(tmp_path / "extra-info" / "data-dump") and os.path.isdir(extra)
    scene_root = tmp_path / "scene"
    assert dumping({"dump_path": str(scene_root), "dump_scene": "aic_err_norm_dump"}, "scene.json") == ACL_SUCCESS
    extra = ffi.string(lib.acldumpGetPath(3)).decode()
    assert extra == os.path.realpath(scene_root / "extra-info" / "data-dump") and os.path.isdir(extra)
    assert lib.acldumpGetPath(DATA_DUMP) == ffi.NULL  # an exception scene is no data dump
    assert lib.acldumpGetPath(9) == ffi.NULL
    assert lib.aclmdlFinalizeDump() == ACL_SUCCESS
    assert lib.acldumpGetPath(DATA_DUMP) == ffi.NULL
    assert lib.aclmdlInitDump() == ACL_SUCCESS


def test_call_order_statuses(tmp_path):
    pyaclnn.init()
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"dump": {"dump_path": str(tmp_path), "dump_op_switch": "on"}}))
    assert lib.aclmdlSetDump(str(cfg).encode()) == ACL_ERROR_DUMP_NOT_RUN
    assert "aclmdlInitDump must be executed" in recent_message()
    assert lib.aclmdlFinalizeDump() == ACL_ERROR_DUMP_NOT_RUN
    assert lib.aclmdlInitDump() == ACL_SUCCESS
    assert lib.aclmdlInitDump() == ACL_ERROR_REPEAT_INITIALIZE
    assert lib.aclmdlSetDump(ffi.NULL) == ACL_ERROR_INVALID_PARAM
    assert "dumpCfgPath" in recent_message()
    assert lib.aclmdlSetDump(str(tmp_path / "missing.json").encode()) == ACL_ERROR_INVALID_FILE
    assert lib.aclmdlFinalizeDump() == ACL_SUCCESS
    assert lib.aclmdlFinalizeDump() == ACL_ERROR_DUMP_NOT_RUN
    recent_message()


BAD_CONFIGS = [
    ('{"dump": {"dump_path": "X", "dump_op_switch": "on",}}', ACL_ERROR_INVALID_DUMP_CONFIG, "not valid JSON"),
    ('{"dump": [1]}', ACL_ERROR_INVALID_DUMP_CONFIG, "dump must be an object"),
    ('{"dump": {"dump_op_switch": "on"}}', ACL_ERROR_INVALID_DUMP_CONFIG, "dump_path is required"),
    ('{"dump": {"dump_path": "", "dump_op_switch": "on"}}', ACL_ERROR_INVALID_DUMP_CONFIG, "dump_path must not be empty"),
    ('{"dump": {"dump_path": "X/none", "dump_op_switch": "on"}}', ACL_ERROR_INVALID_DUMP_CONFIG, "dump_path does not exist"),
    ('{"dump": {"dump_path": "X/file", "dump_op_switch": "on"}}', ACL_ERROR_INVALID_DUMP_CONFIG, "not a directory"),
    ('{"dump": {"dump_path": 5, "dump_op_switch": "on"}}', ACL_ERROR_INVALID_DUMP_CONFIG, "dump_path must be a string"),
    ('{"dump": {"dump_path": "X", "dump_op_switch": "yes"}}', ACL_ERROR_INVALID_DUMP_CONFIG, "dump_op_switch has an invalid value"),
    ('{"dump": {"dump_path": "X", "dump_op_switch": "on", "dump_mode": "both"}}', ACL_ERROR_INVALID_DUMP_CONFIG, "dump_mode has an invalid value"),
    ('{"dump": {"dump_path": "X", "dump_list": {}}}', ACL_ERROR_INVALID_DUMP_CONFIG, "dump_list must be an array"),
    ('{"dump": {"dump_path": "X", "dump_list": [3]}}', ACL_ERROR_INVALID_DUMP_CONFIG, "dump_list[0] must be an object"),
    ('{"dump": {"dump_path": "X", "dump_list": [{"model_name": ""}]}}', ACL_ERROR_INVALID_DUMP_CONFIG, "dump_list[0].model_name must not be empty"),
    ('{"dump": {"dump_path": "X", "dump_list": [{"layer": []}]}}', ACL_ERROR_INVALID_DUMP_CONFIG, "dump_list[0].layer must not be empty"),
    ('{"dump": {"dump_scene": "aic_err_brief_dump", "dump_op_switch": "on"}}', ACL_ERROR_INVALID_DUMP_CONFIG, "dump_op_switch cannot be"),
    ('{"dump": {"dump_path": "X", "dump_debug": "on", "dump_op_switch": "on"}}', ACL_ERROR_INVALID_DUMP_CONFIG, 'dump_debug is "on"'),
    ('{"dump": {"dump_path": "X", "dump_op_switch": "on", "dump_path": "X/none"}}', ACL_ERROR_INVALID_DUMP_CONFIG, "dump_path does not exist"),
    ('[[[[[[[[[[[1]]]]]]]]]]]', ACL_ERROR_PARSE_FILE, "nests"),
]


@pytest.mark.parametrize("text, status, words", BAD_CONFIGS)
def test_bad_configs_are_refused_with_the_field_named(tmp_path, dumping, text, status, words):
    (tmp_path / "file").write_text("")
    text = text.replace('"X', '"' + str(tmp_path))
    assert dumping(text) == status
    message = recent_message()
    assert "aclmdlSetDump" in message and words in message, message
    assert lib.acldumpGetPath(DATA_DUMP) == ffi.NULL  # nothing was configured


def test_configs_that_ask_for_nothing_change_nothing(tmp_path, dumping):
    root = tmp_path / "out"
    root.mkdir()
    assert dumping({"dump_path": str(root), "dump_op_switch": "on"}) == ACL_SUCCESS
    for text in ["", "{}", '{"other": 1}', '{"dump": {}}', json.dumps({"dump": {"dump_path": str(tmp_path)}}),
                 json.dumps({"dump": {"dump_path": str(tmp_path), "dump_op_switch": "off"}})]:
        assert dumping(text, "nothing.json") == ACL_SUCCESS, text
    assert ffi.string(lib.acldumpGetPath(DATA_DUMP)).decode() == str(root)


def test_start_dump_args_describes_each_signature_once(tmp_path):
    pyaclnn.init()
    args = tmp_path / "args" / "deeper"
    assert lib.aclopStartDumpArgs(0, str(args).encode()) == ACL_ERROR_FAILURE
    assert "dumpType" in recent_message()
    assert lib.aclopStartDumpArgs(1, ffi.NULL) == ACL_ERROR_FAILURE
    assert lib.aclopStartDumpArgs(1, b"") == ACL_ERROR_FAILURE
    assert lib.aclopStartDumpArgs(1, str(args).encode()) == ACL_SUCCESS
    try:
        assert lib.aclopStartDumpArgs(1, str(args).encode()) == ACL_ERROR_FAILURE
        assert "already started" in recent_message()
        w = np.ones(2, dtype=np.float32)
        F.prelu(np.ones((1, 2, 3), dtype=np.float32), w)
        F.prelu(np.zeros((1, 2, 3), dtype=np.float32), w)  # same signature: no second file
        F.prelu(np.ones((4, 2), dtype=np.float32), w)
    finally:
        assert lib.aclopStopDumpArgs(1) == ACL_SUCCESS
    F.prelu(np.ones((5, 2), dtype=np.float32), w)  # stopped
    files = sorted(os.listdir(args))
    assert len(files) == 2 and all(f.startswith("aclnnPrelu_") and f.endswith(".json") for f in files)
    shapes = sorted(json.load(open(args / f))["inputs"][0]["shape"] for f in files)
    assert shapes == [[1, 2, 3], [4, 2]]
    described = json.load(open(args / files[0]))
    assert described["op"] == "aclnnPrelu" and described["inputs"][1] == {
        "index": 1, "dtype": "float32", "acl_dtype": "FLOAT", "format": "ND", "shape": [2]}
    assert lib.aclopStopDumpArgs(1) == ACL_SUCCESS  # stopping twice is fine
    assert lib.aclopStopDumpArgs(2) == ACL_SUCCESS


CHILD = """
import json, os, sys
import numpy as np
import pyaclnn
import pyaclnn.functional as F
from pyaclnn import ffi, lib
code = lib.{first}
msg = lib.aclGetRecentErrMsg()
print(json.dumps({{"code": code, "msg": "" if msg == ffi.NULL else ffi.string(msg).decode()}}))
{after}
"""


def run_child(first, after=""):
    env = dict(os.environ)
    done = subprocess.run([sys.executable, "-c", CHILD.format(first=first, after=textwrap.dedent(after))],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[0]), done.stdout.splitlines()[1:]


def test_acl_init_reads_the_dump_section(tmp_path):
    root = tmp_path / "out"
    root.mkdir()
    cfg = tmp_path / "acl.json"
    cfg.write_text(json.dumps({"dump": {"dump_path": str(root), "dump_op_switch": "on", "dump_mode": "all",
                                        "dump_data": "tensor"}}))
    first, printed = run_child(f"aclInit({str(cfg)!r}.encode())", """
        x = np.array([[-2.0, 1.0], [3.0, -4.0]], dtype=np.float32)
        F.prelu(x, np.array([0.5, 0.25], dtype=np.float32))
        print(ffi.string(lib.acldumpGetPath(4)).decode())
        print(os.getpid())
        """)
    assert first["code"] == ACL_SUCCESS
    assert printed[0] == str(root)
    folder = root / "Ascend910B" / printed[1]
    np.testing.assert_array_equal(np.load(folder / "000001_aclnnPrelu_output_0.npy"),  # a new process: launch 1
                                  np.array([[-1.0, 1.0], [3.0, -1.0]], dtype=np.float32))
    assert read_index(str(folder))[0]["op"] == "aclnnPrelu"


def test_acl_init_refuses_a_bad_dump_section(tmp_path):
    cfg = tmp_path / "acl.json"
    cfg.write_text(json.dumps({"dump": {"dump_op_switch": "on"}}))
    first, printed = run_child(f"aclInit({str(cfg)!r}.encode())", "print(lib.aclFinalize())")
    assert first["code"] == ACL_ERROR_INVALID_DUMP_CONFIG and "dump_path is required" in first["msg"]
    assert printed == ["100037"]  # ACL_ERROR_REPEAT_FINALIZE: aclInit did not initialize
    cfg.write_text('{"dump": ')
    first, _ = run_child(f"aclInit({str(cfg)!r}.encode())")
    assert first["code"] == ACL_ERROR_PARSE_FILE and "not valid JSON" in first["msg"]


def test_dump_calls_before_acl_init(tmp_path):
    first, printed = run_child("aclmdlInitDump()", "print(lib.aclmdlFinalizeDump())")
    assert first["code"] == ACL_ERROR_UNINITIALIZE and "aclInit must be executed" in first["msg"]
    assert printed == [str(ACL_ERROR_UNINITIALIZE)]


def test_launches_from_several_threads_each_get_a_number_and_a_line(tmp_path, dumping):
    import threading
    root = tmp_path / "out"
    root.mkdir()
    assert dumping({"dump_path": str(root), "dump_op_switch": "on", "dump_mode": "all"}) == ACL_SUCCESS
    w = np.array([0.5, 2.0], dtype=np.float32)
    inputs = {}

    def work(k):
        pyaclnn.init()
        for j in range(5):
            x = np.full((1, 2, 3), -(k * 10 + j + 1), dtype=np.float32)
            F.prelu(x, w)
            inputs[float(x.flat[0])] = x

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    folder = launch_dir(str(root))
    entries = read_index(folder)
    numbers = sorted(e["launch"] for e in entries)
    assert len(entries) == 20 and numbers == list(range(numbers[0], numbers[0] + 20))
    for entry in entries:
        x = load(folder, entry, "inputs", 0)
        np.testing.assert_array_equal(x, inputs[float(x.flat[0])])
        np.testing.assert_array_equal(load(folder, entry, "outputs", 0), prelu_reference(x, w))


def stats_reference(a):
    """CANN's default statistics of one tensor, NaN left out of Max/Min/Avg (docs/runtime.md)."""
    v = a.astype(np.float64).ravel()
    finite_or_inf = v[~np.isnan(v)]
    with np.errstate(invalid="ignore"):  # inf + -inf: the average is NaN, as the C sum gives
        return {"Max Value": finite_or_inf.max(), "Min Value": finite_or_inf.min(),
                "Avg Value": finite_or_inf.mean(), "Count": v.size, "Nan Count": int(np.isnan(v).sum()),
                "Negative Inf Count": int((v == -np.inf).sum()), "Positive Inf Count": int((v == np.inf).sum()),
                "l2norm": float(np.sqrt((finite_or_inf ** 2).sum()))}


def read_stats(path):
    import csv
    with open(path) as f:
        return list(csv.DictReader(f))


def test_dump_data_stats_writes_cann_statistics_rows(tmp_path, dumping):
    root = tmp_path / "out"
    root.mkdir()
    assert dumping({"dump_path": str(root), "dump_op_switch": "on", "dump_mode": "all",
                    "dump_data": "stats"}) == ACL_SUCCESS
    w = np.array([0.5, 0.25], dtype=np.float32)
    special = np.array([[[-2.0, np.nan, 3.5], [np.inf, -np.inf, 0.25]]], dtype=np.float32)
    plain = np.random.default_rng(7).standard_normal((3, 2, 4)).astype(np.float32)
    for x in (special, plain):
        F.prelu(x, w)
    folder = launch_dir(str(root))
    entries = read_index(folder)
    assert len(entries) == 2
    assert not any(name.endswith(".npy") for name in os.listdir(folder))
    for entry, x in zip(entries, (special, plain)):
        assert all(i["file"] is None for i in entry["inputs"] + entry["outputs"])
        with open(os.path.join(folder, entry["stats"])) as f:
            header = f.readline().strip()
        assert header == ("Input/Output,Index,Data Size,Data Type,Format,Shape,Max Value,Min Value,Avg Value,"
                          "Count,Nan Count,Negative Inf Count,Positive Inf Count")
        rows = read_stats(os.path.join(folder, entry["stats"]))
        shape = "x".join(str(d) for d in x.shape)
        assert [(r["Input/Output"], r["Index"], r["Shape"], r["Data Type"], r["Data Size"]) for r in rows] == [
            ("Input", "0", shape, "DT_FLOAT", str(x.nbytes)), ("Input", "1", "2", "DT_FLOAT", "8"),
            ("Output", "0", shape, "DT_FLOAT", str(x.nbytes))]
        for row, tensor in zip(rows, [x, w, prelu_reference(x, w)]):
            want = stats_reference(tensor)
            for column in ("Count", "Nan Count", "Negative Inf Count", "Positive Inf Count"):
                assert int(row[column]) == want[column], (column, row)
            for column in ("Max Value", "Min Value", "Avg Value"):
                got = float(row[column])  # 6 significant digits, as C++'s default stream format
                assert (np.isnan(got) and np.isnan(want[column])) or got == pytest.approx(want[column], rel=1e-5,
                                                                                          abs=1e-6), (column, row)


def test_dump_stats_selection_and_checks(tmp_path, dumping):
    root = tmp_path / "out"
    root.mkdir()
    assert dumping({"dump_path": str(root), "dump_op_switch": "on", "dump_data": "stats",
                    "dump_stats": ["L2norm", "Max"]}) == ACL_SUCCESS
    x = np.arange(-3, 3, dtype=np.float32).reshape(1, 2, 3)
    w = np.array([0.5, 2.0], dtype=np.float32)
    F.prelu(x, w)
    folder = launch_dir(str(root))
    [entry] = read_index(folder)
    with open(os.path.join(folder, entry["stats"])) as f:
        assert f.readline().strip() == "Input/Output,Index,Data Size,Data Type,Format,Shape,Count,Max Value,l2norm"
    [row] = read_stats(os.path.join(folder, entry["stats"]))  # dump_mode output
    want = stats_reference(prelu_reference(x, w))
    assert row["Input/Output"] == "Output" and int(row["Count"]) == 6
    assert float(row["Max Value"]) == pytest.approx(want["Max Value"], rel=1e-5)
    assert float(row["l2norm"]) == pytest.approx(want["l2norm"], rel=1e-5)
    base = {"dump_path": str(root), "dump_op_switch": "on"}
    for extra, words in [({"dump_stats": ["Max"]}, 'dump_stats cannot be set when dump_data is "tensor"'),
                         ({"dump_data": "stats", "dump_stats": []}, "dump_stats must not be empty"),
                         ({"dump_data": "stats", "dump_stats": ["Median"]}, "dump_stats items must be"),
                         ({"dump_data": "stats", "dump_stats": "Max"}, "dump_stats must be an array")]:
        assert dumping(dict(base, **extra), "bad.json") == ACL_ERROR_INVALID_DUMP_CONFIG
        assert words in recent_message()


def test_callback_receives_the_files_instead_of_the_disk(tmp_path, dumping):
    import io
    chunks = []

    @ffi.callback("int32_t(*)(const acldumpChunk *, int32_t)")
    def receive(chunk, length):
        assert length == ffi.sizeof("acldumpChunk") + chunk.bufLen
        chunks.append((ffi.string(chunk.fileName).decode(), int(chunk.offset), int(chunk.isLastChunk),
                       int(chunk.flag), bytes(ffi.buffer(chunk.dataBuf, chunk.bufLen))))
        return 0

    assert lib.acldumpRegCallback(ffi.NULL, 0) == ACL_ERROR_FAILURE
    assert "messageCallback" in recent_message()
    assert lib.acldumpRegCallback(receive, 1) == ACL_ERROR_FAILURE
    assert "flag" in recent_message()
    assert lib.acldumpRegCallback(receive, 0) == ACL_SUCCESS
    try:
        root = tmp_path / "out"
        root.mkdir()
        assert dumping({"dump_path": str(root), "dump_op_switch": "on", "dump_mode": "all"}) == ACL_SUCCESS
        rng = np.random.default_rng(11)
        x = rng.standard_normal((64, 8, 700)).astype(np.float32)  # 1.4 MiB: two chunks
        w = rng.standard_normal(8).astype(np.float32)
        F.prelu(x, w)
    finally:
        lib.acldumpUnregCallback()
    assert os.listdir(root) == []  # nothing on the disk
    files = {}
    for name, offset, last, flag, data in chunks:
        assert os.path.isabs(name) and flag == 0
        assert name.startswith(os.path.join(str(root), "Ascend910B", str(os.getpid())) + "/")
        content = files.setdefault(os.path.basename(name), bytearray())
        assert offset in (len(content), -1)
        content += data
    index_name = "index.jsonl"
    [entry] = [json.loads(line) for line in files[index_name].decode().splitlines()]
    got_x = np.load(io.BytesIO(bytes(files[entry["inputs"][0]["file"]])))
    np.testing.assert_array_equal(got_x, x)
    got_y = np.load(io.BytesIO(bytes(files[entry["outputs"][0]["file"]])))
    np.testing.assert_allclose(got_y, prelu_reference(x, w), rtol=1e-6, atol=0)
    pieces = [c for c in chunks if os.path.basename(c[0]) == entry["inputs"][0]["file"]]
    assert [(c[1], c[2]) for c in pieces] == [(0, 0), (1 << 20, 1)]
    # Unregistered: files again.
    F.prelu(x[:1], w)
    assert len(read_index(launch_dir(str(root)))) == 1
