"""ACLNN_CHECK's memcheck and initcheck (docs/checking.md): a CANN-style Prelu program
(tests/check/prelu_mistakes.c) makes one mistake of the table at a time, in three layouts (one
stream; a second stream; a second thread), and runs as a subprocess in checking mode.  Each
mistake gets exactly one report of the right kind, naming the right allocation and call, every
time, and the exit status ACLNN_CHECK_EXITCODE asks for; the same program without the mistake
gets none and exits 0."""
import re
from pathlib import Path

import pytest

import support

SOURCE = Path(__file__).resolve().parent / "check" / "prelu_mistakes.c"
LAYOUTS = ["main", "stream", "thread"]
# (the suite may itself run in checking mode: the programs get their own settings, reports on stderr)
CHECK = {"ACLNN_CHECK": "memcheck,initcheck", "ACLNN_CHECK_EXITCODE": "42", "ACLNN_CHECK_LOG": ""}

# mistake -> (tool, title, allocation number or None, words of the report's first lines)
MISTAKES = {
    "memcpy_in": ("memcheck", "host access to device memory", 1, "host write at"),
    "memcpy_out": ("memcheck", "host access to device memory", 3, "host read at"),
    "uninit_input": ("initcheck", "operator reads device memory nobody wrote", 2,
                     "call:     aclnnPrelu: input 1 (weight)"),
    "free_output": ("memcheck", "use of freed device memory", 3, "call:     aclnnPrelu: output 0 (out)"),
    "small_workspace": ("memcheck", "range runs past the end of its allocation", 4,
                        "call:     aclnnPrelu: workspace"),
    "unaligned_async": ("memcheck", "unaligned asynchronous copy", None,
                        "call:     aclrtMemcpyAsync: dst"),
    "unpinned_async": ("memcheck", "asynchronous copy with pageable host memory", None,
                       "call:     aclrtMemcpyAsync: ACL_MEMCPY_HOST_TO_DEVICE, host side src"),
}


@pytest.fixture(scope="module")
def program():
    # -rdynamic: the reports' stacks name the program's own functions (run, thread_main)
    return support.compile_program(SOURCE, extra_flags=["-rdynamic"])


def reports(text):
    """The report blocks in text: lists of lines, each starting with the title line."""
    blocks, current = [], None
    for line in text.splitlines():
        if line.startswith("========= ACLNN_CHECK ERROR") or line.startswith("========= ACLNN_CHECK WARNING"):
            current = [line]
            blocks.append(current)
        elif line.startswith("=========   ") or line.startswith("=========             "):
            if current is not None:
                current.append(line)
        else:
            current = None
    return blocks


@pytest.mark.parametrize("layout", LAYOUTS)
def test_no_mistake_no_report(program, layout):
    result = support.run_program(program, env=CHECK, args=["none", layout])
    assert result.returncode == 0, result.stdout + result.stderr
    assert reports(result.stderr) == []
    assert "ACLNN_CHECK SUMMARY: 0 errors, 0 warnings" in result.stderr
    assert "out[0..3] -0.75 -0.25 1 3" in result.stdout


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_mistake_is_reported(program, mistake, layout):
    tool, title, alloc, words = MISTAKES[mistake]
    for _ in range(2):  # every time, not by chance
        result = support.run_program(program, env=CHECK, args=[mistake, layout])
        assert result.returncode == 42, result.stdout + result.stderr
        blocks = reports(result.stderr)
        assert len(blocks) == 1, result.stderr
        block = "\n".join(blocks[0])
        assert blocks[0][0] == f"========= ACLNN_CHECK ERROR ({tool}): {title}", block
        assert words in block, block
        if alloc is not None:
            assert f"allocation #{alloc}: " in block, block
            assert re.search(rf"allocation #{alloc}\b", blocks[0][1]) or f"allocation #{alloc}:" in block
        assert " run+0x" in block, block  # the program's call is named in the stack
        if layout == "thread":
            assert "thread_main+0x" in block, block
        assert "ACLNN_CHECK SUMMARY: 1 error, 0 warnings" in result.stderr


def test_launch_with_freed_output_fails_with_a_status(program):
    result = support.run_program(program, env=CHECK, args=["free_output"])
    assert "aclnnPrelu: 161002" in result.stdout


def test_uninitialised_input_still_runs(program):
    result = support.run_program(program, env=CHECK, args=["uninit_input"])
    # weight's bytes read as zero here; prelu(-3) with slope 0 is -0
    assert "out[0..3] -0 -0 1 3" in result.stdout


def test_host_access_aborts_without_exitcode(program):
    result = support.run_program(program, env=dict(CHECK, ACLNN_CHECK_EXITCODE=""), args=["memcpy_in"])
    assert result.returncode == -6, result.stdout + result.stderr  # SIGABRT
    assert len(reports(result.stderr)) == 1


def test_log_file_gets_the_reports(program, tmp_path):
    log = tmp_path / "check.log"
    env = dict(CHECK, ACLNN_CHECK_LOG=str(log))
    result = support.run_program(program, env=env, args=["uninit_input"])
    assert result.returncode == 42
    assert "ACLNN_CHECK" not in result.stderr
    text = log.read_text()
    assert len(reports(text)) == 1
    assert "ACLNN_CHECK SUMMARY: 1 error, 0 warnings" in text


def test_each_tool_alone(program):
    # initcheck alone does not see a host access (the memory is ordinary host memory then)
    result = support.run_program(program, env=dict(CHECK, ACLNN_CHECK="initcheck"), args=["uninit_input"])
    assert len(reports(result.stderr)) == 1
    result = support.run_program(program, env=dict(CHECK, ACLNN_CHECK="memcheck"), args=["uninit_input"])
    assert reports(result.stderr) == [] and result.returncode == 0


def test_checking_off_changes_nothing(program):
    result = support.run_program(program, env={"ACLNN_CHECK": "", "ACLNN_CHECK_LOG": ""}, args=["none"])
    assert result.returncode == 0 and "ACLNN_CHECK" not in result.stderr


# ---- pyaclnn in checking mode ------------------------------------------------------------------
PYTHON_PROGRAM = r"""
import numpy as np, torch, pyaclnn, pyaclnn.functional as F
assert pyaclnn.check_tools() == {"memcheck", "initcheck"}, pyaclnn.check_tools()
x = np.linspace(-3, 3, 4096, dtype=np.float32).reshape(4, 8, 128)
w = np.array([0.25, -0.5, 1.5, 2.0, 0.1, 0.2, 0.3, 0.4], np.float32)
want = np.where(x > 0, x, x * w[None, :, None])
assert np.array_equal(F.prelu(x, w), want)                       # functional, numpy
assert np.array_equal(F.prelu(torch.from_numpy(x), torch.from_numpy(w)).numpy(), want)
xt, wt = pyaclnn.Tensor.from_numpy(x), pyaclnn.Tensor.from_numpy(w)  # two-phase, device tensors
out = pyaclnn.Tensor.empty(x.shape, np.float32)
pyaclnn.run_op("Prelu", xt, wt, out)
assert np.array_equal(out.numpy(), want)
print("errors", pyaclnn.check_error_count())
unwritten = pyaclnn.Tensor.empty(w.shape, np.float32)             # nobody wrote it
pyaclnn.run_op("Prelu", xt, unwritten, out)
print("errors", pyaclnn.check_error_count())
"""


def test_pyaclnn_in_checking_mode():
    import os
    import subprocess
    import sys
    env = dict(os.environ, ACLNN_CHECK="memcheck,initcheck", ACLNN_CHECK_LOG="")
    result = subprocess.run([sys.executable, "-c", PYTHON_PROGRAM], capture_output=True, text=True,
                            env=env, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.split("\n")[:2] == ["errors 0", "errors 1"], result.stdout + result.stderr
    blocks = reports(result.stderr)
    assert len(blocks) == 1 and "aclnnPrelu: input 1 (weight)" in "\n".join(blocks[0]), result.stderr
