"""pyaclnn.mask helpers (mask_from_indices / indices_from_mask) against masks built by hand from
PyTorch's indices, plus the two C++ examples run and compared with torch."""
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import pyaclnn
from pyaclnn.functional import max_pool2d_with_mask
from pyaclnn.mask import indices_from_mask, mask_from_indices, mask_shape
from support import build_and_run_example

torch.set_num_threads(1)


def by_hand(indices, k):
    """The container built the way CANN's own test harness builds it: int32 stream + zeros."""
    ho, wo = indices.shape[-2:]
    width = (-(-(ho * wo) // 16) + 1) * 32
    shape = indices.shape[:-2] + (k[0] * k[1], width)
    raw = np.zeros(int(np.prod(shape)), np.uint8)
    stream = np.frombuffer(indices.astype("<i4").tobytes(), np.uint8)
    raw[:stream.size] = stream
    return raw.view(np.int8).reshape(shape)


@pytest.mark.parametrize("shape,k,s,p", [((2, 3, 9, 7), (3, 3), (2, 2), (1, 1)),
                                         ((4, 10, 10), (2, 3), (2, 1), (1, 1)),
                                         ((1, 2, 40, 40), (2, 2), (2, 2), (0, 0))])
def test_round_trip_with_torch_indices(shape, k, s, p):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0))
    _, index = F.max_pool2d(x, k, s, p, return_indices=True)
    index = index.numpy()
    mask = mask_from_indices(index, k, input_shape=shape)
    assert mask.dtype == np.int8 and mask.shape == mask_shape(index.shape, k)
    np.testing.assert_array_equal(mask, by_hand(index, k))
    np.testing.assert_array_equal(indices_from_mask(mask, index.shape), index)
    # and the library's own mask is the same bytes
    out, lib_mask = max_pool2d_with_mask(x.numpy(), k, s, p)
    np.testing.assert_array_equal(lib_mask, mask)


def test_one_by_one_kernel():
    x = np.random.default_rng(0).standard_normal((2, 20, 5, 7)).astype(np.float32)
    out, lib_mask = max_pool2d_with_mask(x, 1, 2, 0)
    _, index = F.max_pool2d(torch.from_numpy(x), 1, 2, 0, return_indices=True)
    np.testing.assert_array_equal(mask_from_indices(index.numpy(), 1), lib_mask)
    with pytest.raises(ValueError):
        indices_from_mask(lib_mask, out.shape)
    np.testing.assert_array_equal(indices_from_mask(lib_mask, out.shape, input_shape=x.shape, stride=2),
                                  index.numpy())


def test_helpers_reject_bad_input():
    with pytest.raises(ValueError):
        mask_from_indices(np.array([[[0, 16]]]), 2, input_shape=(1, 4, 4))
    with pytest.raises(ValueError):
        mask_from_indices(np.zeros((2, 2)), 2)
    with pytest.raises(ValueError):
        indices_from_mask(np.zeros((1, 4, 8), np.int8), (1, 4, 4))


def _values(text, key):
    return [float(v) for v in re.findall(r"^%s\[\d+\] is: (\S+)$" % key, text, re.M)]


def test_forward_example():
    text = build_and_run_example("examples/max_pool2d_with_mask.cpp")
    x = torch.tensor([0.0850, -0.5147, -0.0212, -0.5654, -0.3222, 0.5847,
                      1.7510, 0.9954, 0.1842, 0.8392, 0.4835, 0.9213]).reshape(1, 1, 4, 3)
    out, index = F.max_pool2d(x, 2, 2, return_indices=True)
    np.testing.assert_allclose(_values(text, "out"), out.reshape(-1).numpy(), rtol=1e-6)
    assert _values(text, "argmax") == index.reshape(-1).tolist()
    assert re.search(r"^mask_tail_nonzero is: 0$", text, re.M)


def test_backward_example():
    text = build_and_run_example("examples/max_pool2d_with_mask_backward.cpp")
    x = torch.tensor([1, 5, 2, 2, 3, 5, 0, 9, 4, 1, 6, 6, 7, 7, 8, 0], dtype=torch.float32).reshape(1, 1, 4, 4)
    _, index = F.max_pool2d(x, 3, 1, 1, return_indices=True)
    grad = torch.arange(1, 17, dtype=torch.float32).reshape(1, 1, 4, 4)
    want = torch.ops.aten.max_pool2d_with_indices_backward(grad, x, [3, 3], [1, 1], [1, 1], [1, 1], False, index)
    assert _values(text, "result") == want.reshape(-1).tolist()
