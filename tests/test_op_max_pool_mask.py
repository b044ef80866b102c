"""pyaclnn.mask helpers (mask_from_indices / indices_from_mask) against masks built from PyTorch's
indices the way CANN's own test harness builds them (reference.max_pool_mask). (The two C++
examples are compared with torch in tests/test_compat.py.)"""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import pyaclnn
from pyaclnn.functional import max_pool2d_with_mask
from pyaclnn.mask import indices_from_mask, mask_from_indices, mask_shape
import reference as ref

torch.set_num_threads(1)


@pytest.mark.parametrize("shape,k,s,p", [((2, 3, 9, 7), (3, 3), (2, 2), (1, 1)),
                                         ((4, 10, 10), (2, 3), (2, 1), (1, 1)),
                                         ((1, 2, 40, 40), (2, 2), (2, 2), (0, 0))])
def test_round_trip_with_torch_indices(shape, k, s, p):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0))
    _, index = F.max_pool2d(x, k, s, p, return_indices=True)
    index = index.numpy()
    mask = mask_from_indices(index, k, input_shape=shape)
    assert mask.dtype == np.int8 and mask.shape == mask_shape(index.shape, k)
    np.testing.assert_array_equal(mask, ref.max_pool_mask(index, k))
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
