"""Batching rules for ``torch.ops.aclnn.*`` (``torch.vmap``, and functorch's transforms built on
it: ``jacrev``, ``jacfwd``, per-sample gradients).

The vmapped dim folds into a dim the operator already batches over, so a vmap is one call:
into N for the operators whose N is a batch of independent planes (replication pad, upsample,
max pooling with indices, im2col / col2im; a per-sample input without N gets the vmapped dim as
its N), into C for PReLU (the weight is per channel: B samples of C channels are B*C channels,
each sample's weight its own). What does not fold runs one call per sample and stacks the
results: the mask max pooling (CANN's mask container holds one argmax stream for the whole
call, so a folded call's mask is not the per-sample masks stacked), a PReLU backward whose
shared weight would be summed across channels in another order, and ranks an operator does not
take (each call then raises the operator's own error).
"""

import torch

from ._torch_library import LIBRARY, NAMESPACE, ops

__all__ = []


def _register(name):
    def register(rule):
        torch.library.register_vmap(NAMESPACE + "::" + name, rule, lib=LIBRARY)
        return rule
    return register


def _front(tensor, dim, size):
    """``tensor`` with the vmapped dim first (broadcast when it is not vmapped)."""
    if dim is None:
        return tensor.expand((size,) + tuple(tensor.shape))
    return tensor.movedim(dim, 0)


def _loop(op, info, in_dims, args):
    """One call per sample, the results stacked along dim 0."""
    results = []
    for sample in range(info.batch_size):
        # in_dims mirrors the arguments: a list argument has a list of Nones
        sample_args = [arg.select(dim, sample) if isinstance(arg, torch.Tensor) and dim is not None
                       else arg for arg, dim in zip(args, in_dims)]
        results.append(op(*sample_args, *args[len(in_dims):]))
    if isinstance(results[0], tuple):
        stacked = tuple(torch.stack(parts) for parts in zip(*results))
        return stacked, (0,) * len(stacked)
    return torch.stack(results), 0


def _folded(tensor, ranks):
    """A [B, *sample] tensor as one call's input: B*N planes when the sample has the largest
    rank the operator takes, else the sample gets B as its batch dim."""
    return tensor.flatten(0, 1) if tensor.dim() - 1 == max(ranks) else tensor


def _unfolded(result, sample_rank, ranks, size):
    return result.unflatten(0, (size, -1)) if sample_rank == max(ranks) else result


def _fold_n(op, info, in_dims, args, ranks, attrs_after=None):
    """``op`` on the tensors ``args[:len(in_dims)]`` folded into N; the other arguments as
    they are (``attrs_after``, when given, replaces them)."""
    size = info.batch_size
    tensors = [_front(arg, dim, size) for arg, dim in zip(args, in_dims)
               if isinstance(arg, torch.Tensor)]
    rank = tensors[0].dim() - 1
    if rank not in ranks or any(t.dim() - 1 != rank for t in tensors):
        return _loop(op, info, in_dims, args)
    folded = [_folded(t, ranks) for t in tensors]
    rest = list(args[len(folded):]) if attrs_after is None else attrs_after
    result = op(*folded, *rest)
    if isinstance(result, tuple):
        return tuple(_unfolded(r, rank, ranks, size) for r in result), (0,) * len(result)
    return _unfolded(result, rank, ranks, size), 0


_PLANES = (3, 4)     # [C, H, W] or [N, C, H, W]


@_register("replication_pad2d")
def _pad(info, in_dims, x, padding):
    return _fold_n(ops.replication_pad2d, info, in_dims, (x, padding), _PLANES)


@_register("replication_pad2d_backward")
def _pad_backward(info, in_dims, grad_output, x, padding):
    return _fold_n(ops.replication_pad2d_backward, info, in_dims, (grad_output, x, padding),
                   _PLANES)


@_register("upsample_nearest_exact1d")
def _upsample(info, in_dims, x, output_size, scales=None):
    return _fold_n(ops.upsample_nearest_exact1d, info, in_dims, (x, output_size, scales), (3,))


@_register("upsample_nearest_exact1d_backward")
def _upsample_backward(info, in_dims, grad_output, output_size, input_size, scales=None):
    args = (grad_output, output_size, input_size, scales)
    if len(input_size) != 3:
        return _loop(ops.upsample_nearest_exact1d_backward, info, in_dims, args)
    folded_size = [info.batch_size * input_size[0]] + list(input_size[1:])
    return _fold_n(ops.upsample_nearest_exact1d_backward, info, in_dims, args, (3,),
                   (output_size, folded_size, scales))


@_register("max_pool2d_with_mask")
def _mask_pool(info, in_dims, *args):
    return _loop(ops.max_pool2d_with_mask, info, in_dims, args)


@_register("max_pool2d_with_mask_backward")
def _mask_pool_backward(info, in_dims, *args):
    return _loop(ops.max_pool2d_with_mask_backward, info, in_dims, args)


@_register("max_pool2d_with_indices")
def _indices_pool(info, in_dims, *args):
    return _fold_n(ops.max_pool2d_with_indices, info, in_dims, args, _PLANES)


@_register("max_pool2d_with_indices_backward")
def _indices_pool_backward(info, in_dims, *args):
    # indices count within each plane, so a folded call reads the same elements
    return _fold_n(ops.max_pool2d_with_indices_backward, info, in_dims, args, _PLANES)


@_register("im2col")
def _im2col(info, in_dims, *args):
    return _fold_n(ops.im2col, info, in_dims, args, _PLANES)


@_register("im2col_backward")
def _col2im(info, in_dims, *args):
    return _fold_n(ops.im2col_backward, info, in_dims, args, (2, 3))


def _channels_folded(x, weight, size):
    """[B, N, C, *] x and [B, C or 1] weight as one call's [N, B*C, *] and [B*C]."""
    channels = x.shape[2]
    weight = weight.reshape(size, -1).expand(size, channels)
    return x.movedim(0, 1).flatten(1, 2), weight.reshape(-1)


def _channels_unfolded(result, size):
    return result.unflatten(1, (size, -1)).movedim(1, 0)


def _foldable(x, weight, size):
    """Whether PReLU's channels fold: samples of rank >= 2 with 1 or C weights each."""
    return x.dim() >= 3 and weight.numel() // size in (1, x.shape[2])


@_register("prelu")
def _prelu(info, in_dims, x, weight, out_dtype=None):
    size = info.batch_size
    xb, wb = _front(x, in_dims[0], size), _front(weight, in_dims[1], size)
    if not _foldable(xb, wb, size):
        return _loop(ops.prelu, info, in_dims, (x, weight, out_dtype))
    folded_x, folded_w = _channels_folded(xb, wb, size)
    return _channels_unfolded(ops.prelu(folded_x, folded_w, out_dtype), size), 0


@_register("prelu_backward")
def _prelu_backward(info, in_dims, grad_output, x, weight):
    size = info.batch_size
    gb, xb, wb = (_front(t, d, size) for t, d in zip((grad_output, x, weight), in_dims))
    per_channel = wb.numel() // size == xb.shape[2] if xb.dim() >= 3 else False
    if not per_channel or gb.shape != xb.shape:
        return _loop(ops.prelu_backward, info, in_dims, (grad_output, x, weight))
    folded_x, folded_w = _channels_folded(xb, wb, size)
    folded_g = gb.movedim(0, 1).flatten(1, 2)
    grad_x, grad_w = ops.prelu_backward(folded_g, folded_x, folded_w)
    return (_channels_unfolded(grad_x, size), grad_w.reshape(size, -1)), (0, 0)
