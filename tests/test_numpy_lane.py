"""The numpy lane (pyaclnn._numpy_lane): a repeated pyaclnn.functional call on numpy arrays goes
straight to the executor its first call launched.  Each test opens a lane with a first call and
tells the path a call took by the thread's lane-hit counter, then checks the values against
PyTorch CPU (or NumPy where the test runs without torch).

Also the small-call threading rule (base/parallel.c: a launch that moves less than
NN_SMALL_WORK_BYTES runs its kernel on the calling thread): with two library threads, small
launches never start the pool's worker, a large one does, and results do not depend on it."""

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import torch
import torch.nn.functional as TF

import pyaclnn.functional as F
from pyaclnn import _dispatch, _numpy_lane

PAD = (1, 2, 1, 0)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _data(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _pad_ref(x, pad=PAD):
    return TF.pad(torch.from_numpy(x), pad, mode="replicate").numpy()


def test_a_repeated_call_takes_the_lane_and_follows_new_data():
    x = _data((2, 3, 5, 6), 0)
    lanes = len(_numpy_lane.lanes())
    first = F.replication_pad2d(x, PAD)
    assert len(_numpy_lane.lanes()) == lanes + 1
    hits = _numpy_lane.hits()
    for seed in range(1, 6):
        y = _data((2, 3, 5, 6), seed)
        np.testing.assert_array_equal(F.replication_pad2d(y, PAD), _pad_ref(y))
    assert _numpy_lane.hits() == hits + 5
    np.testing.assert_array_equal(first, _pad_ref(x))


def test_each_call_gets_its_own_result():
    x = _data((1, 3, 8, 8), 1)
    F.replication_pad2d(x, PAD)
    a = F.replication_pad2d(x, PAD)
    b = F.replication_pad2d(x, PAD)
    assert isinstance(a, np.ndarray) and a.ctypes.data != b.ctypes.data
    a[...] = 0
    np.testing.assert_array_equal(b, _pad_ref(x))


def test_in_place_change_of_an_input_is_seen():
    x, w = _data((1, 3, 8, 8), 2), np.full(3, 0.25, np.float32)
    F.prelu(x, w)
    hits = _numpy_lane.hits()
    x *= -2
    w[...] = 0.5
    expected = TF.prelu(torch.from_numpy(x), torch.from_numpy(w)).numpy()
    np.testing.assert_array_equal(F.prelu(x, w), expected)
    assert _numpy_lane.hits() == hits + 1


def test_two_results_against_autograd():
    g, x, w = _data((2, 4, 6, 6), 3), _data((2, 4, 6, 6), 4), np.linspace(0.1, 0.4, 4, dtype=np.float32)
    F.prelu_backward(g, x, w)
    hits = _numpy_lane.hits()
    for seed in range(2):
        x = _data((2, 4, 6, 6), 10 + seed)
        grad_x, grad_w = F.prelu_backward(g, x, w)
        xr = torch.from_numpy(x).requires_grad_()
        wr = torch.from_numpy(w).requires_grad_()
        TF.prelu(xr, wr).backward(torch.from_numpy(g))
        np.testing.assert_allclose(grad_x, xr.grad.numpy(), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(grad_w, wr.grad.numpy(), rtol=1e-5, atol=1e-5)
    assert _numpy_lane.hits() == hits + 2


def test_views_and_converted_arrays_keep_their_path():
    base = _data((1, 3, 8, 16), 5)
    strided = base[..., ::2]                       # not contiguous: the usual path
    swapped = _data((1, 3, 8, 8), 6).astype(">f4")  # converted to native order: no lane
    hits = _numpy_lane.hits()
    for _ in range(3):
        np.testing.assert_array_equal(F.replication_pad2d(strided, PAD), _pad_ref(strided.copy()))
        np.testing.assert_array_equal(F.replication_pad2d(swapped, PAD),
                                      _pad_ref(swapped.astype(np.float32)))
    assert _numpy_lane.hits() == hits


def test_argument_kinds_are_part_of_the_signature():
    x = _data((1, 2, 4, 4), 7)
    for pad in ((1, 1, 1, 1), [1, 1, 1, 1], (0, 1, 2, 0)):
        for _ in range(2):
            np.testing.assert_array_equal(F.replication_pad2d(x, pad), _pad_ref(x, tuple(pad)))
    out = F.replication_pad2d(x, padding=(2, 0, 0, 1))        # a keyword
    np.testing.assert_array_equal(F.replication_pad2d(x, padding=(2, 0, 0, 1)), out)
    np.testing.assert_array_equal(out, _pad_ref(x, (2, 0, 0, 1)))


def test_a_torch_argument_after_an_array_takes_the_torch_path():
    x, w = _data((1, 3, 8, 8), 8), torch.full((3,), 0.25)
    F.prelu(x, w.numpy())
    for _ in range(2):
        out = F.prelu(x, w)
        assert isinstance(out, torch.Tensor)
        torch.testing.assert_close(out, TF.prelu(torch.from_numpy(x), w), rtol=0, atol=0)


def test_large_results_come_from_the_result_cache():
    for seed in range(3):
        x = _data((4, 64, 64, 64), seed)     # 4 MiB results: the allocator's blocks
        np.testing.assert_array_equal(F.replication_pad2d(x, PAD), _pad_ref(x))


def test_an_evicted_executor_falls_back():
    x = _data((1, 3, 7, 7), 9)
    F.replication_pad2d(x, PAD)
    state = _dispatch._state()
    while state.executors:                   # as the LRU cache evicts them
        state.executors.popitem(last=False)[1].destroy()
    hits = _numpy_lane.hits()
    np.testing.assert_array_equal(F.replication_pad2d(x, PAD), _pad_ref(x))
    assert _numpy_lane.hits() == hits        # the lane's executor was gone: the usual path
    np.testing.assert_array_equal(F.replication_pad2d(x, PAD), _pad_ref(x))
    assert _numpy_lane.hits() == hits + 1    # the new executor's lane


def test_lanes_are_per_thread():
    x = _data((1, 3, 8, 8), 11)
    expected = _pad_ref(x)
    errors, counts = [], {}

    def work(index):
        try:
            before = _numpy_lane.hits()
            for _ in range(20):
                np.testing.assert_array_equal(F.replication_pad2d(x, PAD), expected)
            counts[index] = _numpy_lane.hits() - before
        except Exception as exc:        # reported below
            errors.append(exc)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert counts == {0: 19, 1: 19, 2: 19}


def _run(code, **env):
    environment = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    environment.update(env)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=environment,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_lane_without_torch():
    _run("""
        import sys
        import numpy as np
        import pyaclnn.functional as F
        from pyaclnn import _numpy_lane
        for seed in range(4):
            x = np.random.default_rng(seed).standard_normal((2, 3, 5, 4)).astype(np.float32)
            expected = np.pad(x, ((0, 0), (0, 0), (1, 0), (1, 2)), mode="edge")
            assert (F.replication_pad2d(x, (1, 2, 1, 0)) == expected).all()
        assert _numpy_lane.hits() == 3, _numpy_lane.hits()
        assert "torch" not in sys.modules
    """)


_THREADS_PROBE = """
    import os
    import numpy as np
    import pyaclnn.functional as F

    def threads():
        return len(os.listdir("/proc/self/task"))

    def check(shape):
        rng = np.random.default_rng(shape[0])
        g, x = rng.standard_normal(shape, np.float32), rng.standard_normal(shape, np.float32)
        w = np.linspace(0.1, 0.3, shape[1], dtype=np.float32)
        grad_x, grad_w = F.prelu_backward(g, x, w)
        slope = w.reshape(1, -1, 1, 1)
        assert (grad_x == np.where(x > 0, g, slope * g)).all()
        expected = np.where(x > 0, 0, x * g).sum(axis=(0, 2, 3), dtype=np.float64)
        assert np.allclose(grad_w, expected, rtol=1e-5, atol=1e-4)

    # plane mode (inner >= 2048, prelu_backward.c): one block per (n, c) plane, so 4 blocks for
    # the pool to share out; g, x, grad_x: 3 x 36 KiB
    check((1, 4, 48, 48))
    before = threads()
    for _ in range(5):
        check((1, 4, 48, 48))
    after_small = threads()
    check((16, 8, 128, 128))       # 3 x 8 MiB
    print(before, after_small, threads())
"""


def test_small_launches_stay_on_the_calling_thread():
    """Two library threads: small PreluBackward launches never start the pool's worker (the process
    keeps its thread count), the large one does (its blocks are shared out over the pool); with ACLNN_SMALL_WORK_BYTES=0 the first
    launch already does."""
    before, after_small, after_big = map(int, _run(_THREADS_PROBE, ACLNN_NUM_THREADS="2").split())
    assert after_small == before and after_big == before + 1
    before, after_small, after_big = map(int, _run(_THREADS_PROBE, ACLNN_NUM_THREADS="2",
                                                   ACLNN_SMALL_WORK_BYTES="0").split())
    assert after_small == before == after_big        # the pool started at the first call


_TRAINING_PROBE = """
    import os
    import sys
    import torch
    sys.path.insert(0, os.path.join(%r, "examples"))
    import train_cnn

    torch.set_num_threads(2)
    reference, converted = train_cnn.make_models()
    images, labels = train_cnn.make_data(64)
    theirs, ours = train_cnn.trainer(reference), train_cnn.trainer(converted)
    expected = theirs(images, labels)         # torch's threads exist from here
    before = len(os.listdir("/proc/self/task"))
    for step in range(3):                     # train_cnn.py's own tolerance
        got = ours(images, labels)
        assert abs(got - expected) <= 1e-5 * abs(expected), (step, got, expected)
        expected = theirs(images, labels)
    print(len(os.listdir("/proc/self/task")) - before)
""" % ROOT


def test_a_converted_training_step_keeps_its_kernels_on_the_calling_thread():
    """examples/train_cnn.py's converted model at 2 threads: every launch of its step moves
    under 2 MiB, so the step starts one thread fewer (the pool's worker) than with
    ACLNN_SMALL_WORK_BYTES=0; the losses match torch.nn's either way."""
    started = int(_run(_TRAINING_PROBE, ACLNN_NUM_THREADS="2"))
    started_with_pool = int(_run(_TRAINING_PROBE, ACLNN_NUM_THREADS="2",
                                 ACLNN_SMALL_WORK_BYTES="0"))
    assert started_with_pool == started + 1
