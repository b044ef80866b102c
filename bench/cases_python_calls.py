"""Python one-call cases: a whole ``pyaclnn.functional`` call against the torch call a user would
make instead, each allocating its result (the "Python one-call" table of docs/performance.md).

Unlike the kernel cases, nothing is preallocated on either side: this is what a script pays per
call - argument handling, the executor cache, result allocation, the kernel.  Each op runs on
numpy inputs and on torch inputs (torch in -> torch out); the torch side always gets torch
tensors.  Small 1x3x8x8 calls measure the per-call overhead, and "autograd" rows time forward +
backward through ``Tensor.backward`` on both sides.

``bar`` is the ratio the project promises for the row (torch time / ours): backward ops 1.5,
forwards 1.0, autograd 1.0, small calls 0.33 on numpy and on torch inputs (at most 3x torch's
per-call time: a repeated small call takes its lane, pyaclnn._numpy_lane or pyaclnn._lane).

The "train_cnn step" rows time one SGD step of examples/train_cnn.py's models converted with
pyaclnn.nn.convert against the same step of the torch.nn model (the convolutions and the linear
layer are torch's in both): the small CNN, and ImageNet-sized layers (``--model stem``).
"""

import os
import sys

import numpy as np
import torch
import torch.nn.functional as TF

import pyaclnn.functional as F
from harness import BenchCase

PAD = (1, 1, 1, 1)
POOL = dict(kernel_size=3, stride=2, padding=1)


def _data(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _inputs(kind, *arrays):
    """The arrays as the user would hold them: numpy as is, or torch tensors sharing them."""
    return arrays if kind == "numpy" else tuple(torch.from_numpy(a) for a in arrays)


def _torch(*arrays):
    return tuple(torch.from_numpy(a) for a in arrays)


def _bytes(*arrays):
    return sum(a.nbytes for a in arrays)


# ---- each op: (ours, theirs, bytes) on inputs of one kind -------------------------------------
def pad_forward(kind, shape):
    x = _data(shape, 1)
    (ours_x,), (tx,) = _inputs(kind, x), _torch(x)
    return (lambda: F.replication_pad2d(ours_x, PAD),
            lambda: TF.pad(tx, PAD, mode="replicate"), 2 * x.nbytes)


def pad_backward(kind, shape):
    x = _data(shape, 1)
    g = _data(shape[:-2] + (shape[-2] + 2, shape[-1] + 2), 2)
    ours_g, ours_x = _inputs(kind, g, x)
    tg, tx = _torch(g, x)
    return (lambda: F.replication_pad2d_backward(ours_g, ours_x, PAD),
            lambda: torch.ops.aten.replication_pad2d_backward(tg, tx, list(PAD)), _bytes(g, x))


def _pool_inputs(shape):
    x = _data(shape, 3)
    out, mask = F.max_pool2d_with_mask(x, **POOL)
    _, indices = TF.max_pool2d(torch.from_numpy(x), return_indices=True, **POOL)
    g = _data(out.shape, 4)
    return x, mask, indices, g


def pool_forward(kind, shape):
    x = _data(shape, 3)
    (ours_x,), (tx,) = _inputs(kind, x), _torch(x)
    return (lambda: F.max_pool2d_with_mask(ours_x, **POOL),
            lambda: TF.max_pool2d(tx, return_indices=True, **POOL), x.nbytes)


def pool_backward(kind, shape):
    x, mask, indices, g = _pool_inputs(shape)
    ours_g, ours_x, ours_mask = _inputs(kind, g, x, mask)
    tg, tx = _torch(g, x)
    return (lambda: F.max_pool2d_with_mask_backward(ours_g, ours_x, ours_mask, **POOL),
            lambda: torch.ops.aten.max_pool2d_with_indices_backward(
                tg, tx, [3, 3], [2, 2], [1, 1], [1, 1], False, indices),
            _bytes(g, x))


def prelu_forward(kind, shape):
    x, w = _data(shape, 5), np.full(shape[1], 0.25, np.float32)
    ours_x, ours_w = _inputs(kind, x, w)
    tx, tw = _torch(x, w)
    return lambda: F.prelu(ours_x, ours_w), lambda: TF.prelu(tx, tw), 2 * x.nbytes


def prelu_backward(kind, shape):
    x, w, g = _data(shape, 5), np.full(shape[1], 0.25, np.float32), _data(shape, 6)
    ours_g, ours_x, ours_w = _inputs(kind, g, x, w)
    tg, tx, tw = _torch(g, x, w)
    view = [1] * len(shape)
    view[1] = shape[1]
    tw_view = tw.reshape(view)
    return (lambda: F.prelu_backward(ours_g, ours_x, ours_w),
            lambda: torch.ops.aten._prelu_kernel_backward(tg, tx, tw_view), 3 * x.nbytes)


def upsample_forward(kind, shape, out_length):
    x = _data(shape, 7)
    (ours_x,), (tx,) = _inputs(kind, x), _torch(x)
    return (lambda: F.upsample_nearest_exact1d(ours_x, out_length),
            lambda: TF.interpolate(tx, size=out_length, mode="nearest-exact"),
            x.nbytes * (1 + out_length / shape[-1]))


def upsample_backward(kind, shape, out_length):
    g = _data(shape[:2] + (out_length,), 8)
    (ours_g,), (tg,) = _inputs(kind, g), _torch(g)
    return (lambda: F.upsample_nearest_exact1d_backward(ours_g, out_length, shape),
            lambda: torch.ops.aten._upsample_nearest_exact1d_backward(
                tg, [out_length], list(shape), None),
            g.nbytes * (1 + shape[-1] / out_length))


def im2col_forward(kind, shape):
    x = _data(shape, 9)
    (ours_x,), (tx,) = _inputs(kind, x), _torch(x)
    return lambda: F.im2col(ours_x, 3, 1, 1, 1), lambda: TF.unfold(tx, 3, 1, 1, 1), 10 * x.nbytes


def im2col_backward(kind, shape):
    cols = F.im2col(_data(shape, 9), 3, 1, 1, 1)
    (ours_c,), (tc,) = _inputs(kind, cols), _torch(cols)
    size = shape[-2:]
    return (lambda: F.im2col_backward(ours_c, size, 3, 1, 1, 1),
            lambda: TF.fold(tc, size, 3, 1, 1, 1), cols.nbytes * 10 // 9)


# ---- autograd: forward + backward -------------------------------------------------------------
def _autograd(ours_fn, theirs_fn, x, grad):
    ours_x = torch.from_numpy(x.copy()).requires_grad_()
    their_x = torch.from_numpy(x.copy()).requires_grad_()
    g = torch.from_numpy(grad)

    def ours():
        ours_x.grad = None
        ours_fn(ours_x).backward(g)

    def theirs():
        their_x.grad = None
        theirs_fn(their_x).backward(g)
    return ours, theirs, 0


def pad_autograd(kind, shape):
    x = _data(shape, 1)
    grad = _data(shape[:-2] + (shape[-2] + 2, shape[-1] + 2), 2)
    return _autograd(lambda t: F.replication_pad2d(t, PAD),
                     lambda t: TF.pad(t, PAD, mode="replicate"), x, grad)


def pool_autograd(kind, shape):
    x = _data(shape, 3)
    grad = _data(F.max_pool2d_with_mask(x, **POOL)[0].shape, 4)
    return _autograd(lambda t: F.max_pool2d_with_mask(t, **POOL)[0],
                     lambda t: TF.max_pool2d(t, **POOL), x, grad)


def prelu_autograd(kind, shape):
    x = _data(shape, 5)
    w = torch.full((shape[1],), 0.25, requires_grad=True)
    return _autograd(lambda t: F.prelu(t, w), lambda t: TF.prelu(t, w), x, _data(shape, 6))


# ---- a training step of examples/train_cnn.py --------------------------------------------------
def train_step(kind, batch=64, model="small"):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                    "examples"))
    import train_cnn
    reference, converted = train_cnn.make_models(model=model)
    images, labels = train_cnn.model_data(batch, model=model)
    ours, theirs = train_cnn.trainer(converted), train_cnn.trainer(reference)
    return lambda: ours(images, labels), lambda: theirs(images, labels), 0


# ---- the table's rows -------------------------------------------------------------------------
def _case(label, bar, factory, kinds=("numpy", "torch"), quick=True):
    """The row for each input kind."""
    cases = []
    for kind in kinds:
        def make(factory=factory, kind=kind):
            return factory(kind)
        cases.append(BenchCase(name="%s [%s in]" % (label, kind), dtype="float32", make=make,
                               quick=quick, table="python", bar=bar))
    return cases


BIG_POOL = (32, 64, 112, 112)
BIG_PRELU = (32, 64, 112, 112)
BIG_PAD = (8, 64, 128, 128)
SMALL = (1, 3, 8, 8)
UPSAMPLE = ((16, 256, 4096), 8192)
IM2COL = (8, 64, 56, 56)

CASES = []
CASES += _case("replication_pad2d N8 C64 128x128", 1.0, lambda k: pad_forward(k, BIG_PAD))
CASES += _case("replication_pad2d_backward N8 C64 128x128", 1.5, lambda k: pad_backward(k, BIG_PAD))
CASES += _case("upsample_nearest_exact1d N16 C256 4096->8192", 1.0,
               lambda k: upsample_forward(k, *UPSAMPLE))
CASES += _case("upsample_nearest_exact1d_backward N16 C256 4096->8192", 1.5,
               lambda k: upsample_backward(k, *UPSAMPLE))
CASES += _case("max_pool2d_with_mask N32 C64 112x112 k3s2p1", 1.0,
               lambda k: pool_forward(k, BIG_POOL))
CASES += _case("max_pool2d_with_mask_backward N32 C64 112x112 k3s2p1", 1.5,
               lambda k: pool_backward(k, BIG_POOL))
CASES += _case("im2col N8 C64 56x56 k3s1p1", 1.0, lambda k: im2col_forward(k, IM2COL))
CASES += _case("im2col_backward N8 C64 56x56 k3s1p1", 1.5, lambda k: im2col_backward(k, IM2COL))
CASES += _case("prelu N32 C64 112x112", 1.0, lambda k: prelu_forward(k, BIG_PRELU))
CASES += _case("prelu_backward N32 C64 112x112", 1.5, lambda k: prelu_backward(k, BIG_PRELU))
SMALL_BAR = 1 / 3
CASES += _case("small: replication_pad2d 1x3x8x8", SMALL_BAR, lambda k: pad_forward(k, SMALL))
CASES += _case("small: max_pool2d_with_mask_backward 1x3x8x8", SMALL_BAR,
               lambda k: pool_backward(k, SMALL))
CASES += _case("small: prelu 1x3x8x8", SMALL_BAR, lambda k: prelu_forward(k, SMALL))
CASES += _case("small: prelu_backward 1x3x8x8", SMALL_BAR, lambda k: prelu_backward(k, SMALL))
CASES += _case("small: upsample_nearest_exact1d 1x3x8", SMALL_BAR,
               lambda k: upsample_forward(k, (1, 3, 8), 16))
CASES += _case("autograd pad N8 C64 128x128", 1.0, lambda k: pad_autograd(k, BIG_PAD),
               kinds=("torch",))
CASES += _case("autograd max_pool N32 C64 112x112 k3s2p1", 1.0,
               lambda k: pool_autograd(k, BIG_POOL), kinds=("torch",))
CASES += _case("autograd prelu N32 C64 112x112", 1.0, lambda k: prelu_autograd(k, BIG_PRELU),
               kinds=("torch",))
CASES += _case("train_cnn step N64 1x16x16 (examples/train_cnn.py)", 1.0, train_step,
               kinds=("torch",))
CASES += _case("train_cnn step N8 3x224x224 (train_cnn.py --model stem)", 1.0,
               lambda k: train_step(k, 8, "stem"), kinds=("torch",), quick=False)
