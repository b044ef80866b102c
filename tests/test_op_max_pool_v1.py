"""The max-pool mask pair on Ascend910 and Ascend310P (docs/compatibility.md, "MaxPool2dWithMask
on Ascend910 and Ascend310P"): the V1 uint16 bit mask, its decoding by the Ascend910 backward, Ascend910's
FLOAT computed as FLOAT16, and pyaclnn.mask on these products.  Values are checked against
PyTorch; masks against a plain loop over PyTorch's indices written here."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import pyaclnn
from pyaclnn.functional import max_pool2d_with_mask, max_pool2d_with_mask_backward
from pyaclnn.mask import indices_from_mask, mask_from_indices, mask_shape, product_layout
from reference import pair

torch.set_num_threads(1)
INVALID = 161002


def v1_reference(index, x_shape, k, s, p):
    """The V1 mask from PyTorch's indices, one bit at a time: row (n*C1 + c//16)*kH*kW + k,
    word oh*Wo + ow, bit c % 16; every other byte zero."""
    (kh, kw), (sh, sw), (ph, pw) = pair(k), pair(s), pair(p)
    index = index.reshape((-1,) + index.shape[-3:])
    n_, c_, ho, wo = index.shape
    width = x_shape[-1]
    c1 = -(-c_ // 16)
    row = (-(-(ho * wo) // 16) + 1) * 16
    words = np.zeros(int(np.prod(mask_shape(index.shape, (kh, kw)))) // 2, np.uint16)
    for n in range(n_):
        for c in range(c_):
            for oh in range(ho):
                for ow in range(wo):
                    at = int(index[n, c, oh, ow])
                    i, j = at // width - (oh * sh - ph), at % width - (ow * sw - pw)
                    assert 0 <= i < kh and 0 <= j < kw
                    r = (n * c1 + c // 16) * kh * kw + i * kw + j
                    words[r * row + oh * wo + ow] |= 1 << (c % 16)
    return words


def words_of(mask):
    return np.ascontiguousarray(mask).reshape(-1).view("<u2")


GEOMETRIES = [((2, 20, 9, 7), 3, 2, 1, False),        # C1 = 2, the second group partial
              ((3, 10, 11), (2, 3), (2, 1), 1, False),  # 3-D, rectangular kernel
              ((1, 33, 8, 8), 2, 2, 0, False),          # C1 = 3
              ((2, 16, 7, 7), 3, 2, 1, True),           # ceil mode, last window in the padding
              ((1, 4, 5, 6), (3, 1), (1, 2), (1, 0), False)]


def pooled_input(shape, soc_name, dtype, seed=0, ties=False):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(-3, 4, shape, generator=g).float() if ties else torch.randn(shape, generator=g) * 100
    x = x.to(dtype)
    # Ascend910 pools FLOAT as FLOAT16: PyTorch sees the rounded input
    ref = x.half().float() if soc_name == "Ascend910" and dtype == torch.float32 else x
    return x, ref


@pytest.mark.parametrize("soc_name,dtype", [("Ascend910", torch.float32), ("Ascend910", torch.float16),
                                            ("Ascend310P", torch.float32)])
@pytest.mark.parametrize("shape,k,s,p,ceil", GEOMETRIES)
@pytest.mark.parametrize("ties", [False, True])
def test_forward_v1_mask(soc, soc_name, dtype, shape, k, s, p, ceil, ties):
    soc(soc_name)
    x, ref = pooled_input(shape, soc_name, dtype, ties=ties)
    out, mask = max_pool2d_with_mask(x.numpy(), k, s, p, ceil_mode=ceil)
    want, index = F.max_pool2d(ref.float(), k, s, p, ceil_mode=ceil, return_indices=True)
    assert out.dtype == x.numpy().dtype
    np.testing.assert_array_equal(out, want.to(dtype).numpy())
    assert mask.shape == mask_shape(index.shape, pair(k))
    np.testing.assert_array_equal(words_of(mask), v1_reference(index.numpy(), shape, k, s, p))


def test_forward_fp32_as_fp16_only_on_910(soc):
    """2049 and 1e-8 are not fp16 values; 70000 is beyond fp16's range, and Ascend910's cast runs
    in saturation mode (its only mode): 65504, not inf (docs/precision.md, "Overflow mode")."""
    x = np.array([[[[2049.0, 1e-8], [70000.0, -3.0]]]], np.float32)
    for name, want in (("Ascend910", [2048.0, 0.0, 65504.0]), ("Ascend310P", [2049.0, 1e-8, 70000.0]),
                       ("Ascend910B", [2049.0, 1e-8, 70000.0])):
        soc(name)
        out, _ = max_pool2d_with_mask(x, 1, 1, 0)
        np.testing.assert_array_equal(out.reshape(-1)[:3], np.float32(want), err_msg=name)


def test_one_by_one_kernel_keeps_the_ffff_pattern(soc):
    """A 1x1 kernel writes 0xFFFF over words [0, 16*ceil(P/16)) of each (n, c1) row under the
    V1 layout too; the backward copies (rounded to fp16 on Ascend910)."""
    x = torch.randn((2, 20, 5, 7), generator=torch.Generator().manual_seed(3)) * 1000
    for name in ("Ascend910", "Ascend310P", "Ascend910B"):
        soc(name)
        out, mask = max_pool2d_with_mask(x.numpy(), 1, 2, 0)
        words = words_of(mask).reshape(-1, 32)  # P = 12: rows of (1 + 1) * 16 words
        assert (words[:4, :16] == 0xFFFF).all() and (words[:4, 16:] == 0).all() and (words[4:] == 0).all()
        ref = x.half().float() if name == "Ascend910" else x
        np.testing.assert_array_equal(out, F.max_pool2d(ref, 1, 2, 0).numpy())
    soc("Ascend910")
    g = torch.randn(out.shape, generator=torch.Generator().manual_seed(4))
    gi = max_pool2d_with_mask_backward(g.numpy(), x.numpy(), mask, 1, 2, 0)
    want = torch.zeros_like(x)
    want[:, :, ::2, ::2] = g.half().float()
    np.testing.assert_array_equal(gi, want.numpy())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("shape,k,s,p,ceil", GEOMETRIES)
def test_backward_910_decodes_the_mask(soc, dtype, shape, k, s, p, ceil):
    """Against PyTorch's fp32 backward (the same summation order) on the fp16-rounded gradient,
    rounded once to fp16; FLOAT comes back as that fp16 value widened."""
    soc("Ascend910")
    x, ref = pooled_input(shape, "Ascend910", dtype, seed=5, ties=True)
    out, mask = max_pool2d_with_mask(x.numpy(), k, s, p, ceil_mode=ceil)
    g = torch.randn(out.shape, generator=torch.Generator().manual_seed(6)).to(dtype)
    gi = max_pool2d_with_mask_backward(g.numpy(), x.numpy(), mask, k, s, p, ceil_mode=ceil)
    leaf = ref.float().requires_grad_()
    F.max_pool2d(leaf, k, s, p, ceil_mode=ceil).backward(g.half().float())
    want = leaf.grad.half().to(dtype)
    assert gi.dtype == x.numpy().dtype
    np.testing.assert_array_equal(gi, want.numpy())


def scatter_reference(grad, words, x_shape, k, s, p):
    """Every set bit of channel c < C on an in-range cell gets its output's gradient, summed in
    fp32 in increasing output position (a plain loop)."""
    (kh, kw), (sh, sw), (ph, pw) = pair(k), pair(s), pair(p)
    n_, c_, ho, wo = grad.shape
    h, w = x_shape[-2:]
    c1, row = -(-c_ // 16), (-(-(ho * wo) // 16) + 1) * 16
    out = np.zeros((n_, c_, h, w), np.float32)
    for n in range(n_):
        for c in range(c_):
            for o in range(ho * wo):
                oh, ow = divmod(o, wo)
                for kk in range(kh * kw):
                    ih, iw = oh * sh - ph + kk // kw, ow * sw - pw + kk % kw
                    word = words[((n * c1 + c // 16) * kh * kw + kk) * row + o]
                    if (word >> (c % 16)) & 1 and 0 <= ih < h and 0 <= iw < w:
                        out[n, c, ih, iw] = np.float32(out[n, c, ih, iw] + grad[n, c, oh, ow])
    return out


def test_backward_910_hand_made_mask(soc):
    """Several bits per output scatter to each cell; bits on padding cells, of channels past C,
    in words past Ho*Wo and in rows past N*C1*kH*kW are dropped; nothing fails."""
    soc("Ascend910")
    shape, k, s, p = (2, 18, 5, 6), 3, 2, 1
    x = np.zeros(shape, np.float32)
    grad = np.random.default_rng(7).integers(-8, 9, (2, 18, 3, 3)).astype(np.float32) / 4
    mask = np.random.default_rng(8).integers(-128, 128, mask_shape(grad.shape, k), dtype=np.int8)
    gi = max_pool2d_with_mask_backward(grad, x, mask, k, s, p)
    np.testing.assert_array_equal(gi, scatter_reference(grad, words_of(mask), shape, k, s, p))
    assert np.count_nonzero(gi) > 0


def test_backward_910_container_too_small(soc):
    soc("Ascend910")
    x = np.zeros((1, 17, 4, 4), np.float32)
    grad = np.zeros((1, 17, 2, 2), np.float32)
    # 2 groups * 4 rows * 64 bytes = 512 bytes are read; 511 are refused
    with pytest.raises(pyaclnn.ParamInvalidError) as err:
        max_pool2d_with_mask_backward(grad, x, np.zeros((1, 1, 1, 511), np.int8), 2, 2, 0)
    assert err.value.code == INVALID and "V1 bit mask" in err.value.message
    gi = max_pool2d_with_mask_backward(grad, x, np.zeros((1, 1, 1, 512), np.int8), 2, 2, 0)
    assert not gi.any()


def test_backward_310p_rejected(soc):
    """310P writes the mask but has no aclnn backward (an empty dtype list)."""
    soc("Ascend310P")
    x = np.zeros((1, 2, 4, 4), np.float32)
    _, mask = max_pool2d_with_mask(x, 2)
    with pytest.raises(pyaclnn.ParamInvalidError):
        max_pool2d_with_mask_backward(np.zeros((1, 2, 2, 2), np.float32), x, mask, 2)


def test_autograd_910(soc):
    """max-pool autograd runs through the mask backward on Ascend910 (FLOAT as FLOAT16)."""
    soc("Ascend910")
    x = (torch.randn((2, 3, 8, 8), generator=torch.Generator().manual_seed(9)) * 10).requires_grad_()
    out, mask = max_pool2d_with_mask(x, 3, 2, 1)
    g = torch.randn(out.shape, generator=torch.Generator().manual_seed(10))
    out.backward(g)
    leaf = x.detach().half().float().requires_grad_()
    want = F.max_pool2d(leaf, 3, 2, 1)
    want.backward(g.half().float())
    np.testing.assert_array_equal(out.detach().numpy(), want.detach().numpy())
    np.testing.assert_array_equal(x.grad.numpy(), leaf.grad.half().float().numpy())


# ---- pyaclnn.mask on these products -----------------------------------------------------------

def test_product_layout(soc):
    assert product_layout() == "stream"
    for name, layout in (("Ascend910", "v1"), ("Ascend910A", "v1"), ("Ascend310P3", "v1"),
                         ("Ascend910_93", "stream"), ("Ascend950", "stream")):
        soc(name)
        assert product_layout() == layout, name
    assert product_layout("Ascend910ProB") == "v1" and product_layout("Ascend910B2") == "stream"


@pytest.mark.parametrize("shape,k,s,p,ceil", GEOMETRIES)
def test_mask_helpers_v1(soc, shape, k, s, p, ceil):
    soc("Ascend310P")
    x = torch.randn(shape, generator=torch.Generator().manual_seed(11))
    _, index = F.max_pool2d(x, k, s, p, ceil_mode=ceil, return_indices=True)
    index = index.numpy()
    mask = mask_from_indices(index, k, shape, stride=s, padding=p)
    np.testing.assert_array_equal(words_of(mask), v1_reference(index, shape, k, s, p))
    _, lib_mask = max_pool2d_with_mask(x.numpy(), k, s, p, ceil_mode=ceil)
    np.testing.assert_array_equal(lib_mask, mask)
    np.testing.assert_array_equal(indices_from_mask(mask, index.shape, shape, s, kernel_size=k, padding=p),
                                  index)
    # the explicit layout wins over the product
    pyaclnn.set_soc_version("Ascend910B")
    np.testing.assert_array_equal(
        indices_from_mask(mask, index.shape, shape, s, kernel_size=k, padding=p, layout="v1"), index)
    stream = mask_from_indices(index, k, shape)
    np.testing.assert_array_equal(indices_from_mask(stream, index.shape), index)
    np.testing.assert_array_equal(mask_from_indices(index, k, shape, layout="stream"), stream)


def test_mask_helpers_v1_errors():
    index = np.zeros((1, 2, 2, 2), np.int64)
    with pytest.raises(ValueError, match="input_shape"):
        mask_from_indices(index, 2, layout="v1")
    with pytest.raises(ValueError, match="outside its own window"):
        mask_from_indices(np.full((1, 2, 2, 2), 15), 2, (1, 2, 4, 4), stride=2, layout="v1")
    with pytest.raises(ValueError, match="layout"):
        mask_from_indices(index, 2, layout="v2")
    with pytest.raises(ValueError, match="kernel_size"):
        indices_from_mask(np.zeros((1, 2, 4, 64), np.int8), (1, 2, 2, 2), (1, 2, 4, 4), 2, layout="v1")
    with pytest.raises(ValueError, match="no bit"):
        indices_from_mask(np.zeros((1, 2, 4, 64), np.int8), (1, 2, 2, 2), (1, 2, 4, 4), 2, kernel_size=2,
                          layout="v1")
    with pytest.raises(ValueError, match="fewer"):
        indices_from_mask(np.zeros((1, 1, 3, 64), np.int8), (1, 2, 2, 2), (1, 2, 4, 4), 2, kernel_size=2,
                          layout="v1")


def test_nan_and_minus_inf_windows(soc):
    """Pad cells are skipped: a window whose in-range cells are all -inf pools -inf with its bit
    on the first in-range cell (the device pads with -65504 instead); NaN wins as in PyTorch
    (the last NaN of a window)."""
    soc("Ascend310P")
    x = torch.full((1, 3, 4, 4), -float("inf"))
    x[0, 1, 1, 1] = float("nan")
    x[0, 1, 0, 0] = float("nan")
    x[0, 2] = torch.arange(16.0).reshape(4, 4)
    x[0, 2, 2, 3] = float("nan")
    out, mask = max_pool2d_with_mask(x.numpy(), 3, 2, 1)
    want, index = F.max_pool2d(x, 3, 2, 1, return_indices=True)
    np.testing.assert_array_equal(out, want.numpy())
    np.testing.assert_array_equal(words_of(mask), v1_reference(index.numpy(), x.shape, 3, 2, 1))
    assert np.isneginf(out[0, 0]).all() and np.isnan(out[0, 1, 0, 0])


def test_threads_give_the_same_mask(soc, monkeypatch):
    """The forward splits 16-channel groups among threads: the same bytes at any thread count."""
    import subprocess
    import sys
    code = ("import numpy as np, pyaclnn\n"
            "from pyaclnn.functional import max_pool2d_with_mask\n"
            "pyaclnn.set_soc_version('Ascend910')\n"
            "x = np.random.default_rng(0).standard_normal((3, 40, 9, 9)).astype(np.float32)\n"
            "out, mask = max_pool2d_with_mask(x, 3, 2, 1)\n"
            "import sys; sys.stdout.buffer.write(out.tobytes() + mask.tobytes())\n")
    runs = []
    monkeypatch.setenv("ACLNN_SMALL_WORK_BYTES", "0")   # this small call still uses the pool
    for threads in ("1", "3", "7"):
        monkeypatch.setenv("ACLNN_NUM_THREADS", threads)
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
        runs.append(r.stdout)
    assert runs[0] == runs[1] == runs[2]
    x = torch.from_numpy(np.random.default_rng(0).standard_normal((3, 40, 9, 9)).astype(np.float32))
    want, index = F.max_pool2d(x.half().float(), 3, 2, 1, return_indices=True)
    out = np.frombuffer(runs[0][:want.numel() * 4], np.float32).reshape(want.shape)
    np.testing.assert_array_equal(out, want.numpy())
    np.testing.assert_array_equal(np.frombuffer(runs[0][want.numel() * 4:], "<u2"),
                                  v1_reference(index.numpy(), x.shape, 3, 2, 1))
