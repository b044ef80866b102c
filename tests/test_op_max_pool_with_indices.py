"""aclnnMaxPool2dWithIndices[Backward]: the variant with PyTorch-style indices, against
torch.ops.aten.max_pool2d_with_indices[_backward]."""
import numpy as np
import pytest
import torch

import pyaclnn
from pyaclnn import Tensor

CASES = [
    # shape, kernel, stride, padding, ceil_mode
    ((2, 3, 9, 8), (3, 3), (2, 2), (1, 1), False),
    ((3, 7, 7), (2, 3), (1, 2), (1, 0), True),
    ((1, 2, 5, 11), (2, 2), (2, 2), (0, 0), False),
]


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("shape,kernel,stride,padding,ceil_mode", CASES)
def test_forward_and_backward_match_torch(shape, kernel, stride, padding, ceil_mode, index_dtype):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape).astype(np.float32)
    attrs = (list(kernel), list(stride), list(padding), [1, 1])
    ref_out, ref_idx = torch.ops.aten.max_pool2d_with_indices(torch.from_numpy(x), *attrs, ceil_mode)
    grad = rng.standard_normal(tuple(ref_out.shape)).astype(np.float32)
    ref_grad = torch.ops.aten.max_pool2d_with_indices_backward(
        torch.from_numpy(grad), torch.from_numpy(x), *attrs, ceil_mode, ref_idx)
    out_shape = tuple(ref_out.shape)
    with Tensor.from_numpy(x) as x_t, Tensor.empty(out_shape, np.float32, fill=np.nan) as out_t, \
            Tensor.empty(out_shape, index_dtype, fill=-7) as idx_t:
        pyaclnn.run_op("MaxPool2dWithIndices", x_t, *attrs, ceil_mode, out_t, idx_t)
        np.testing.assert_array_equal(out_t.numpy(), ref_out.numpy())
        np.testing.assert_array_equal(idx_t.numpy(), ref_idx.numpy())
        with Tensor.from_numpy(grad) as grad_t, Tensor.empty(shape, np.float32, fill=np.nan) as grad_in_t:
            if index_dtype == np.int64:
                # A2/A3's backward takes INT32 (or INT8) indices only (CANN's op_api list).
                with pytest.raises(pyaclnn.AclnnError) as err:
                    pyaclnn.run_op("MaxPool2dWithIndicesBackward", grad_t, x_t, idx_t, *attrs, ceil_mode, grad_in_t)
                assert err.value.code == 161002 and "INT32, INT8" in err.value.message
                pyaclnn.set_soc_version("Ascend950")  # INT64 natively
            try:
                pyaclnn.run_op("MaxPool2dWithIndicesBackward", grad_t, x_t, idx_t, *attrs, ceil_mode, grad_in_t)
            finally:
                pyaclnn.set_soc_version(None)
            np.testing.assert_array_equal(grad_in_t.numpy(), ref_grad.numpy())


@pytest.mark.parametrize("bad_value", [20, -1])
def test_backward_names_the_indices_of_an_out_of_plane_index(bad_value):
    # The message names the indices and aclnnMaxPool2dWithIndices (not the mask variant's words).
    rng = np.random.default_rng(8)
    shape, attrs = (1, 2, 4, 4), ([2, 2], [2, 2], [0, 0], [1, 1])
    x = rng.standard_normal(shape).astype(np.float32)
    ref_out, ref_idx = torch.ops.aten.max_pool2d_with_indices(torch.from_numpy(x), *attrs, False)
    indices = ref_idx.numpy().astype(np.int32)
    indices.reshape(-1)[5] = bad_value                         # plane 1, output (0, 1)
    grad = np.ones(tuple(ref_out.shape), np.float32)
    with Tensor.from_numpy(grad) as grad_t, Tensor.from_numpy(x) as x_t, Tensor.from_numpy(indices) as idx_t, \
            Tensor.empty(shape, np.float32, fill=np.nan) as grad_in_t:
        with pytest.raises(pyaclnn.AclError) as err:
            pyaclnn.run_op("MaxPool2dWithIndicesBackward", grad_t, x_t, idx_t, *attrs, False, grad_in_t)
        message = err.value.message
        assert err.value.code == 507015 and str(bad_value) in message
        assert "the indices do not come from aclnnMaxPool2dWithIndices with these arguments" in message
        assert "mask" not in message
