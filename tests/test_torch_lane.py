"""The eager lane (pyaclnn._lane): a repeated pyaclnn.functional call on
torch tensors goes straight to the executor its first call launched.  Each test opens a lane
with a first call, then checks that the calls taking it - or that must not take it - give
torch's values."""

import threading

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import pyaclnn
import pyaclnn.functional as F
from pyaclnn import _dispatch, _lane

PAD = (1, 2, 1, 0)


def _pad_ref(x):
    return TF.pad(x, PAD, mode="replicate")


def _lane_count():
    return len(_lane.lanes())


def test_a_repeated_call_opens_a_lane_and_follows_new_data():
    x = torch.randn(2, 3, 5, 6)
    before = _lane_count()
    first = F.replication_pad2d(x, PAD)
    assert _lane_count() == before + 1
    for seed in range(5):
        y = torch.randn(2, 3, 5, 6, generator=torch.Generator().manual_seed(seed))
        torch.testing.assert_close(F.replication_pad2d(y, PAD), _pad_ref(y), rtol=0, atol=0)
    torch.testing.assert_close(first, _pad_ref(x), rtol=0, atol=0)


def test_each_call_gets_its_own_result():
    x = torch.randn(1, 3, 8, 8)
    a = F.replication_pad2d(x, PAD)
    b = F.replication_pad2d(x, PAD)
    assert a.data_ptr() != b.data_ptr()
    a.zero_()
    torch.testing.assert_close(b, _pad_ref(x), rtol=0, atol=0)
    b.resize_(0)          # a normal torch result: resizable


def test_in_place_change_of_an_input_is_seen():
    x = torch.randn(1, 3, 8, 8)
    w = torch.full((3,), 0.25)
    F.prelu(x, w)
    x.mul_(-2)
    w.fill_(0.5)
    torch.testing.assert_close(F.prelu(x, w), TF.prelu(x, w), rtol=0, atol=0)


def test_weight_and_input_moving_between_calls():
    w = torch.full((3,), 0.25)
    for _ in range(4):
        x = torch.randn(1, 3, 8, 8)
        w = torch.rand(3)
        torch.testing.assert_close(F.prelu(x, w), TF.prelu(x, w), rtol=0, atol=0)


def test_two_results():
    g, x, w = torch.randn(1, 3, 8, 8), torch.randn(1, 3, 8, 8), torch.rand(3)
    for _ in range(3):
        gx, gw = F.prelu_backward(g, x, w)
        x = torch.randn(1, 3, 8, 8)
    gx, gw = F.prelu_backward(g, x, w)
    xr = x.clone().requires_grad_()
    wr = w.clone().requires_grad_()
    TF.prelu(xr, wr).backward(g)
    torch.testing.assert_close(gx, xr.grad, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(gw, wr.grad, rtol=1e-5, atol=1e-5)


def test_views_that_must_not_take_the_lane():
    x = torch.randn(1, 3, 8, 8)
    F.replication_pad2d(x, PAD)
    F.replication_pad2d(x, PAD)
    # non-contiguous, same shape and dtype
    t = torch.randn(1, 3, 8, 8).transpose(2, 3)
    torch.testing.assert_close(F.replication_pad2d(t, PAD), _pad_ref(t), rtol=0, atol=0)
    # a negative view of a real tensor (the imaginary part of a conjugate)
    z = torch.randn(1, 3, 8, 8, dtype=torch.complex64)
    neg = z.conj().imag
    assert neg.is_neg() and neg.shape == x.shape and neg.dtype == x.dtype
    if neg.is_contiguous():
        torch.testing.assert_close(F.replication_pad2d(neg, PAD),
                                   _pad_ref(neg.resolve_neg()), rtol=0, atol=0)


def test_a_conjugate_view_does_not_take_the_lane():
    z = torch.randn(1, 2, 4, 4, dtype=torch.complex64)
    before = _lane_count()
    F.replication_pad2d(z, PAD)
    F.replication_pad2d(z, PAD)
    assert _lane_count() == before          # complex calls open no lane: a conjugate view has
                                            # the same shape and dtype as the tensor it views
    c = torch.randn(1, 2, 4, 4, dtype=torch.complex64).conj()
    assert c.is_conj() and c.is_contiguous()
    torch.testing.assert_close(F.replication_pad2d(c, PAD), _pad_ref(c.resolve_conj()),
                               rtol=0, atol=0)


def test_argument_types_are_part_of_the_signature():
    x = torch.randn(1, 3, 8, 8)
    F.replication_pad2d(x, PAD)
    F.replication_pad2d(x, PAD)
    with pytest.raises(TypeError):
        F.replication_pad2d(x, (1.0, 2, 1, 0))      # equal to PAD, but not ints
    torch.testing.assert_close(F.replication_pad2d(x, list(PAD)), _pad_ref(x), rtol=0, atol=0)


def test_requires_grad_after_a_lane_still_records_autograd():
    x = torch.randn(1, 3, 8, 8)
    F.replication_pad2d(x, PAD)
    F.replication_pad2d(x, PAD)
    xr = x.clone().requires_grad_()
    out = F.replication_pad2d(xr, PAD)
    assert out.requires_grad
    out.sum().backward()
    xt = x.clone().requires_grad_()
    _pad_ref(xt).sum().backward()
    torch.testing.assert_close(xr.grad, xt.grad, rtol=0, atol=0)
    with torch.no_grad():
        assert not F.replication_pad2d(xr, PAD).requires_grad


def test_product_selection_is_part_of_the_signature():
    x = torch.randn(1, 2, 6, 6)
    a2 = F.max_pool2d_with_mask(x, 3, 2, 1)
    F.max_pool2d_with_mask(x, 3, 2, 1)
    with pyaclnn.soc("Ascend910"):
        v1 = F.max_pool2d_with_mask(x, 3, 2, 1)
        v1_numpy = F.max_pool2d_with_mask(x.numpy(), 3, 2, 1)      # numpy: no lanes
    again = F.max_pool2d_with_mask(x, 3, 2, 1)
    a2_numpy = F.max_pool2d_with_mask(x.numpy(), 3, 2, 1)
    for ours, numpy_result in zip(v1 + again, v1_numpy + a2_numpy):
        np.testing.assert_array_equal(ours.numpy(), numpy_result)
    assert v1[1].shape != a2[1].shape or not torch.equal(v1[1], a2[1])   # V1's bit mask


def test_an_evicted_executor_falls_back():
    x = torch.randn(1, 3, 8, 8)
    F.replication_pad2d(x, PAD)
    F.replication_pad2d(x, PAD)
    pyaclnn.empty_cache()
    assert _lane_count() == 0
    torch.testing.assert_close(F.replication_pad2d(x, PAD), _pad_ref(x), rtol=0, atol=0)
    # the executor evicted from the cache (as its LRU does) under a lane that is still listed
    F.replication_pad2d(x, PAD)
    executors = _dispatch._state().executors
    assert _lane_count() == 1
    while executors:
        executors.popitem(last=False)[1].destroy()
    torch.testing.assert_close(F.replication_pad2d(x, PAD), _pad_ref(x), rtol=0, atol=0)


def test_lanes_are_per_thread():
    results, errors = {}, []

    def work(seed):
        try:
            g = torch.Generator().manual_seed(seed)
            for _ in range(50):
                y = torch.randn(1, 3, 8, 8, generator=g)
                torch.testing.assert_close(F.replication_pad2d(y, PAD), _pad_ref(y), rtol=0,
                                           atol=0)
            results[seed] = _lane_count()
        except Exception as exc:      # reported below
            errors.append(exc)
    threads = [threading.Thread(target=work, args=(s,)) for s in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert all(count >= 1 for count in results.values())


def test_numpy_arguments_keep_their_path():
    x = np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32)
    before = _lane_count()
    for _ in range(3):
        out = F.replication_pad2d(x, PAD)
    assert isinstance(out, np.ndarray) and _lane_count() == before
    np.testing.assert_array_equal(out, _pad_ref(torch.from_numpy(x)).numpy())


def test_large_results_and_a_workspace():
    x = torch.randn(4, 64, 64, 64)        # 4 MiB results: the allocator's blocks
    for _ in range(3):
        x = torch.randn(4, 64, 64, 64)
        torch.testing.assert_close(F.replication_pad2d(x, PAD), _pad_ref(x), rtol=0, atol=0)
    g = torch.randn(2, 8, 32, 32)
    xi = torch.randn(2, 8, 32, 32)
    w = torch.rand(8)
    for _ in range(3):
        gx, gw = F.prelu_backward(g, xi, w)
    xr, wr = xi.clone().requires_grad_(), w.clone().requires_grad_()
    TF.prelu(xr, wr).backward(g)
    torch.testing.assert_close(gx, xr.grad, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(gw, wr.grad, rtol=1e-4, atol=1e-4)


def test_the_entry_keeps_numpy_and_subclass_calls_on_their_paths():
    x = torch.randn(1, 3, 8, 8)
    F.replication_pad2d(x, PAD)                 # the functional entry is torch_ops' from here
    before = _lane_count()
    a = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)
    out = F.replication_pad2d(a, list(PAD))     # only numpy and ints: the numpy path
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, _pad_ref(torch.from_numpy(a)).numpy())
    scalar = F.prelu(a, 0.25)                   # a numpy array and a float: the numpy path
    assert isinstance(scalar, np.ndarray)
    np.testing.assert_array_equal(scalar, TF.prelu(torch.from_numpy(a), torch.tensor([0.25])).numpy())
    p = torch.nn.Parameter(x.clone())           # a Tensor subclass: the route, with autograd
    for _ in range(2):
        y = F.replication_pad2d(p, PAD)
    assert isinstance(y, torch.Tensor) and y.requires_grad and _lane_count() == before
    y.sum().backward()
    xt = x.clone().requires_grad_()
    _pad_ref(xt).sum().backward()
    torch.testing.assert_close(p.grad, xt.grad, rtol=0, atol=0)


def test_keyword_arguments_are_part_of_the_signature():
    g = torch.Generator().manual_seed(3)
    for _ in range(3):
        x = torch.randn(2, 3, 9, 9, generator=g)
        ref_out, ref_idx = TF.max_pool2d(x, 3, 2, 1, return_indices=True)
        out, mask = F.max_pool2d_with_mask(x, kernel_size=3, stride=2, padding=1)
        torch.testing.assert_close(out, ref_out, rtol=0, atol=0)
        swapped, _ = F.max_pool2d_with_mask(x, padding=1, stride=2, kernel_size=3)
        torch.testing.assert_close(swapped, ref_out, rtol=0, atol=0)
        other, _ = F.max_pool2d_with_mask(x, kernel_size=3, stride=3, padding=1)
        torch.testing.assert_close(other, TF.max_pool2d(x, 3, 3, 1), rtol=0, atol=0)
    indices = pyaclnn.indices_from_mask(mask, out.shape)
    torch.testing.assert_close(torch.as_tensor(np.asarray(indices)).long(), ref_idx,
                               rtol=0, atol=0)


def test_tracers_see_the_operator_of_a_call_that_has_a_lane():
    x = torch.randn(1, 3, 8, 8)
    F.replication_pad2d(x, PAD)
    F.replication_pad2d(x, PAD)                 # the lane is open
    graphs = []

    def backend(graph_module, example_inputs):
        graphs.append(graph_module.graph)
        return graph_module.forward

    compiled = torch.compile(lambda t: F.replication_pad2d(t, PAD), fullgraph=True,
                             backend=backend)  # a graph break (a data_ptr read) would raise
    torch.testing.assert_close(compiled(x), _pad_ref(x), rtol=0, atol=0)
    assert any("aclnn.replication_pad2d" in str(node.target)
               for graph in graphs for node in graph.nodes)
    traced = torch.jit.trace(lambda t: F.replication_pad2d(t, PAD), (x,))
    assert "aclnn::replication_pad2d" in str(traced.graph)
    y = torch.randn(1, 3, 8, 8)
    torch.testing.assert_close(traced(y), _pad_ref(y), rtol=0, atol=0)


def test_a_kernel_error_reported_by_the_wait_raises_through_the_lane():
    # phase 2 and the wait are one C call on a lane (aclnnCpuLaunchAndSynchronize): an error the
    # kernel reports at the wait must come out as the wait's, as it does off the lane
    x = torch.randn(1, 2, 4, 4)
    out, idx = torch.ops.aten.max_pool2d_with_indices(x, [2, 2], [2, 2], [0, 0], [1, 1], False)
    idx = idx.to(torch.int32)
    grad = torch.ones(out.shape)
    ref = torch.ops.aten.max_pool2d_with_indices_backward(grad, x, [2, 2], [2, 2], [0, 0], [1, 1],
                                                          False, idx.long())
    before = _lane_count()
    for _ in range(2):
        got = F.max_pool2d_with_indices_backward(grad, x, idx, 2, 2, 0, 1)
        torch.testing.assert_close(got, ref, rtol=0, atol=0)
    assert _lane_count() == before + 1
    bad = idx.clone()
    bad.view(-1)[5] = 99                        # outside the 4x4 plane
    with pytest.raises(pyaclnn.AclError) as err:
        F.max_pool2d_with_indices_backward(grad, x, bad, 2, 2, 0, 1)
    assert err.value.code == 507015 and "99" in err.value.message
    torch.testing.assert_close(F.max_pool2d_with_indices_backward(grad, x, idx, 2, 2, 0, 1), ref,
                               rtol=0, atol=0)
