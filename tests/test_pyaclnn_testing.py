"""pyaclnn.testing: the comparison helpers catch what they must and the layouts are valid."""

import itertools

import ml_dtypes
import numpy as np
import pytest

from pyaclnn import testing


def test_bitwise_equal_sees_signed_zero_and_nan_payloads():
    testing.assert_bitwise_equal(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))
    with pytest.raises(AssertionError, match="1 of 2 elements differ"):
        testing.assert_bitwise_equal(np.array([0.0, 1.0]), np.array([-0.0, 1.0]))
    with pytest.raises(AssertionError, match="dtype"):
        testing.assert_bitwise_equal(np.zeros(2, np.float32), np.zeros(2, np.float64))
    with pytest.raises(AssertionError, match="shape"):
        testing.assert_bitwise_equal(np.zeros(2), np.zeros(3))
    a = np.array([1 + 2j], np.complex128)
    with pytest.raises(AssertionError):
        testing.assert_bitwise_equal(a, a + 1e-300j + 1e-15)


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 1.3e-6), (np.float16, 1e-3),
                                         (ml_dtypes.bfloat16, 1.6e-2), (np.float64, 1e-7)])
def test_assert_close_uses_the_dtype_tolerance(dtype, rtol):
    assert testing.tolerance(dtype) == (rtol, testing.TOLERANCES[np.dtype(dtype).name][1])
    expected = np.array([100.0, -3.0, np.inf, np.nan])
    inside = expected * (1 + rtol / 2)
    testing.assert_close(inside, expected, dtype=dtype)
    outside = expected.copy()
    outside[0] = 100.0 * (1 + rtol * 4)
    with pytest.raises(AssertionError, match="not close"):
        testing.assert_close(outside, expected, dtype=dtype)


def test_assert_close_is_exact_for_integers_and_checks_infinities():
    testing.assert_close(np.array([1, 2], np.int32), np.array([1, 2], np.int32))
    with pytest.raises(AssertionError):
        testing.assert_close(np.array([1, 3], np.int32), np.array([1, 2], np.int32))
    with pytest.raises(AssertionError):
        testing.assert_close(np.array([np.inf]), np.array([-np.inf]))
    with pytest.raises(AssertionError):
        testing.assert_close(np.array([np.nan]), np.array([1.0]))
    with pytest.raises(AssertionError):
        testing.assert_close(np.array([np.nan]), np.array([np.nan]), equal_nan=False)


@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 3, 4), (2, 3, 4, 5), (1, 1, 3), (0, 4)],
                         ids=str)
def test_layouts_are_valid_and_distinct(shape):
    found = list(testing.layouts(shape))
    assert found[0].name == "contiguous" and found[0].offset == 0
    if len(shape) >= 3 and 0 not in shape:
        assert {"transposed", "stepped", "padded", "channels_last"} <= {lay.name for lay in found}
    for layout in found:
        strides, offset, storage_numel = layout
        assert len(strides) == len(shape) and offset >= 0
        positions = [offset + sum(i * s for i, s in zip(index, strides))
                     for index in itertools.product(*[range(d) for d in shape])]
        assert len(set(positions)) == len(positions), layout   # no two elements overlap
        assert all(0 <= p < storage_numel for p in positions), layout
        if positions:
            assert max(positions) + 1 <= storage_numel
