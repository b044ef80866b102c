"""Autograd and forward mode for ``torch.ops.aclnn.*``: one ``torch.autograd.Function`` per
operator, registered as the operator's Autograd kernel.

Each operator's backward is the matching ``*_backward`` operator, and every ``*_backward`` is
differentiable in turn, with the formulas torch uses for the functions they replace: the four
that are linear in the gradient (replication pad, upsample, col2im, max pooling with indices)
have the forward operator - or a gather at the indices - as derivative; the mask max pooling's
backward gathers at the argmax its mask records; PReLU's backward has torch's where-formulas.
Every Function also has a ``jvp`` (forward mode: ``torch.func.jvp``, ``jacfwd``,
``torch.autograd.forward_ad``) and ``generate_vmap_rule`` (so ``vmap`` over ``grad`` works), and
follows the functorch form (``forward`` without ctx, ``setup_context``): torch.library's
``register_autograd`` makes a Function without ``setup_context``, which functorch's ``grad``
and ``jacrev`` refuse, and without forward mode.

Every forward records the product it ran on (``pyaclnn.current_product()``) and its backward
and jvp run on that product (``with pyaclnn.soc(...)``, the calling thread only), whatever the
selection is by then: a max-pool mask is read in the layout it was written in.
"""

from contextlib import nullcontext

import torch
from torch import Tensor
from torch._functorch.utils import enable_single_level_autograd_function as _single_level
from torch._library.utils import fill_defaults

from . import mask as _mask
from ._core import current_product, soc
from ._lane import watched
from ._torch_kernels import EAGER_AUTOGRAD, eager_ops as ops, plain_cpu, run_kernel
from ._torch_library import LIBRARY, OVERLOADS

__all__ = []

_below_autograd = torch._C._AutoDispatchBelowAutograd
_after_autograd = torch._C._after_autograd_keyset
_any_requires_grad = torch._C._any_requires_grad
_forward_ad = torch.autograd.forward_ad       # its _current_level is >= 0 inside a dual level


def _on_product(product):
    return nullcontext() if product is None else soc(product)


def _register(name, setup_context, backward, jvp):
    """``name``'s Autograd kernel: a Function whose forward is the operator below autograd.  The
    same Function, applied directly, is the plain eager call's path (pyaclnn._torch_kernels)."""
    overload = OVERLOADS[name]
    schema = overload._schema

    def forward(*args):
        # Function.apply runs this with grad mode off: below autograd, a plain eager call on
        # CPU tensors is its CPU kernel (what the dispatcher would pick); anything watched or
        # wrapped goes through the dispatcher.
        if plain_cpu(args) and not watched():
            return run_kernel(name, args)
        with _below_autograd():
            return overload(*args)

    def setup(ctx, inputs, output):
        ctx.product = current_product()
        setup_context(ctx, inputs, output)

    def on_forward_product(ctx, *grads):
        if ctx.product is None or ctx.product == current_product():
            return backward(ctx, *grads)
        with soc(ctx.product):
            return backward(ctx, *grads)

    def jvp_on_forward_product(ctx, *tangents):
        with _on_product(ctx.product):
            return jvp(ctx, *tangents)

    function = type("aclnn_" + name, (torch.autograd.Function,), {
        "forward": staticmethod(forward), "setup_context": staticmethod(setup),
        "backward": staticmethod(on_forward_product),
        "jvp": staticmethod(jvp_on_forward_product), "generate_vmap_rule": True})

    # The dispatcher calls this kernel with functorch's levels already unwrapped (as it calls
    # torch's own autograd kernels): the single-level apply, which Function.apply would send
    # back to functorch while a transform is active.
    apply = super(torch.autograd.Function, function).apply
    EAGER_AUTOGRAD[name] = apply      # no transform active there: the plain apply

    def autograd_kernel(keyset, *args):
        if _forward_ad._current_level >= 0 or \
                (torch.is_grad_enabled() and _any_requires_grad(*args)):
            # the dispatcher drops trailing arguments equal to their defaults
            with _single_level():
                return apply(*fill_defaults(schema, args, {})[0])
        with _below_autograd():
            return overload.redispatch(keyset & _after_autograd, *args)

    LIBRARY.impl(name, autograd_kernel, "Autograd", with_keyset=True)


def _or_zeros(tangent, like):
    return torch.zeros_like(like) if tangent is None else tangent


# ---- replication pad: linear; the backward's derivative is the forward ----------------------
def _pad_setup(ctx, inputs, output):
    ctx.padding = inputs[1]
    ctx.save_for_backward(inputs[0])
    ctx.save_for_forward(inputs[0])


def _pad_backward(ctx, grad):
    x, = ctx.saved_tensors
    return ops.replication_pad2d_backward(grad, x, ctx.padding), None


def _pad_jvp(ctx, x_t, _padding_t):
    return ops.replication_pad2d(x_t, ctx.padding)


def _pad_grad_setup(ctx, inputs, output):
    ctx.padding = inputs[2]
    ctx.save_for_forward(inputs[0], inputs[1])


def _pad_grad_backward(ctx, grad):
    return ops.replication_pad2d(grad, ctx.padding), None, None


def _pad_grad_jvp(ctx, grad_t, _x_t, _padding_t):
    grad_output, x = ctx.saved_tensors
    return ops.replication_pad2d_backward(_or_zeros(grad_t, grad_output), x, ctx.padding)


_register("replication_pad2d", _pad_setup, _pad_backward, _pad_jvp)
_register("replication_pad2d_backward", _pad_grad_setup, _pad_grad_backward, _pad_grad_jvp)


# ---- nearest-exact upsampling: linear ---------------------------------------------------------
def _upsample_setup(ctx, inputs, output):
    x, output_size, scales = inputs
    ctx.geometry = (output_size, list(x.shape), scales)


def _upsample_backward(ctx, grad):
    output_size, input_size, scales = ctx.geometry
    return ops.upsample_nearest_exact1d_backward(grad, output_size, input_size, scales), None, None


def _upsample_jvp(ctx, x_t, *_attrs_t):
    output_size, _input_size, scales = ctx.geometry
    return ops.upsample_nearest_exact1d(x_t, output_size, scales)


def _upsample_grad_setup(ctx, inputs, output):
    ctx.geometry = inputs[1:]


def _upsample_grad_backward(ctx, grad):
    output_size, _input_size, scales = ctx.geometry
    return ops.upsample_nearest_exact1d(grad, output_size, scales), None, None, None


def _upsample_grad_jvp(ctx, grad_t, *_attrs_t):
    return ops.upsample_nearest_exact1d_backward(grad_t, *ctx.geometry)


_register("upsample_nearest_exact1d", _upsample_setup, _upsample_backward, _upsample_jvp)
_register("upsample_nearest_exact1d_backward", _upsample_grad_setup, _upsample_grad_backward,
          _upsample_grad_jvp)


# ---- max pooling: the gradient goes to the argmax; its derivative gathers from there ----------
def _gather_at(values, indices):
    """``values[..., indices]`` per plane: what torch's max-pool jvp and double backward take."""
    flat = values.flatten(-2).gather(-1, indices.flatten(-2).long())
    return flat.view(indices.shape)


def _argmax(x, mask, out_shape, attrs, product):
    """The plane index of each window's maximum as the forward's mask records it (its ties and
    NaNs, and Ascend910's fp16 comparisons, included): the int32 stream of A2/A3 read in place;
    the V1 bit mask of Ascend910/310P decoded (pyaclnn.mask.indices_from_mask, eager only); for
    a 1x1 kernel, whose mask holds none, each window's one cell."""
    kh, kw = _two(attrs[0])
    sh, sw = _two(attrs[1] or attrs[0])
    if kh * kw == 1:
        rows = torch.arange(out_shape[-2], device=x.device) * (sh * x.shape[-1])
        plane = rows[:, None] + torch.arange(out_shape[-1], device=x.device) * sw
        return plane.expand(out_shape)
    if _mask.product_layout(product) == "stream":
        count = _numel(out_shape)
        return mask.reshape(-1)[:4 * count].view(torch.int32).reshape(out_shape)
    decoded = _mask.indices_from_mask(_numpy(mask).reshape(-1), tuple(out_shape),
                                      tuple(x.shape), (sh, sw), kernel_size=(kh, kw),
                                      padding=_two(attrs[2]), layout="v1")
    return torch.from_numpy(decoded)


def _numpy(tensor):
    """``tensor``'s data as a numpy array, also inside a functorch transform (a jvp's saved mask
    is one of its wrappers; the mask has no tangent, so its data is all there is): unwrapped,
    and read with functorch's dispatch keys excluded (numpy() of even a plain tensor fails while
    a transform is active)."""
    while torch._C._functorch.is_functorch_wrapped_tensor(tensor):
        tensor = torch._C._functorch.get_unwrapped(tensor)
    with torch._C._ExcludeDispatchKeyGuard(_FUNCTORCH_LAYERS):
        return tensor.numpy()


_FUNCTORCH_LAYERS = (torch._C.DispatchKeySet(torch._C.DispatchKey.FuncTorchDynamicLayerFrontMode)
                     | torch._C.DispatchKeySet(torch._C.DispatchKey.FuncTorchDynamicLayerBackMode))


def _no_zero_fill(ctx):
    """The mask or indices output has no gradient: without this, autograd would hand the
    backward a zero-filled tensor of its size on every step (the mask container of a 3x3 pooling
    of 8x8 planes is 3.4x the input's bytes).  The backward is then given None for a gradient no
    output received."""
    ctx.set_materialize_grads(False)


def _two(values):
    return (values[0], values[0]) if len(values) == 1 else tuple(values[:2])


def _mask_setup(ctx, inputs, output):
    ctx.attrs = inputs[1:]
    ctx.out_shape = output[0].shape
    head = _mask_head(output[1], output[0].shape, inputs[1], ctx.product)
    ctx.save_for_backward(inputs[0], head)
    ctx.save_for_forward(inputs[0], head)
    ctx.mark_non_differentiable(output[1])
    _no_zero_fill(ctx)


def _mask_head(mask, out_shape, kernel, product):
    """The bytes of ``mask`` the backward operator reads, as a [1, 1, 1, bytes] copy (the rest
    of CANN's container is zero; the operator takes any 4-D mask holding them): the int32
    argmax stream on A2/A3, the V1 rows on Ascend910/310P - N8 C64 128x128 k3s2p1 keeps 8.4 MB,
    not the 37.9 MB container (pyaclnn.mask.mask_bytes_read).  A container under
    _COPY_FROM_BYTES is kept whole: the copy would cost the step more time than its bytes."""
    if len(out_shape) not in (3, 4) or mask.dim() not in (3, 4):
        return mask
    if type(mask) is Tensor:
        if mask.numel() < _COPY_FROM_BYTES:
            return mask
        # eager: the count depends on the geometry only, and a training loop repeats it
        key = (out_shape, tuple(kernel), product)
        needed = _HEAD_BYTES.get(key)
        if needed is None:
            if len(_HEAD_BYTES) >= 64:
                _HEAD_BYTES.clear()
            needed = _HEAD_BYTES[key] = _mask.mask_bytes_read(out_shape, kernel,
                                                              _mask.product_layout(product))
    else:   # traced: symbolic sizes stay symbolic
        needed = _mask.mask_bytes_read(out_shape, kernel, _mask.product_layout(product))
    return mask.reshape(-1)[:needed].clone().reshape(1, 1, 1, needed)


# Containers from this size on are cut to what the backward reads (1 MiB: a 64x16x8x8 k3s2p1
# pooling's 0.9 MB container took 22 us to cut to its 0.1 MB stream, 0.6 % of a training step)
_COPY_FROM_BYTES = 1 << 20
_HEAD_BYTES = {}     # (output shape, kernel, product) -> mask_bytes_read, for eager masks


def _mask_backward(ctx, grad, _grad_mask):
    if grad is None:
        return (None,) * 6
    x, mask = ctx.saved_tensors
    return (ops.max_pool2d_with_mask_backward(grad, x, mask, *ctx.attrs),) + (None,) * 5


def _mask_jvp(ctx, x_t, *_attrs_t):
    x, mask = ctx.saved_tensors
    return _gather_at(x_t, _argmax(x, mask, ctx.out_shape, ctx.attrs, ctx.product)), None


def _mask_grad_setup(ctx, inputs, output):
    ctx.attrs = inputs[3:]
    ctx.out_shape = inputs[0].shape
    ctx.save_for_backward(inputs[1], inputs[2])
    ctx.save_for_forward(inputs[0], inputs[1], inputs[2])


def _mask_grad_backward(ctx, grad):
    x, mask = ctx.saved_tensors
    return (_gather_at(grad, _argmax(x, mask, ctx.out_shape, ctx.attrs, ctx.product)),) \
        + (None,) * 7


def _mask_grad_jvp(ctx, grad_t, *_others_t):
    grad_output, x, mask = ctx.saved_tensors
    return ops.max_pool2d_with_mask_backward(_or_zeros(grad_t, grad_output), x, mask, *ctx.attrs)


_register("max_pool2d_with_mask", _mask_setup, _mask_backward, _mask_jvp)
_register("max_pool2d_with_mask_backward", _mask_grad_setup, _mask_grad_backward,
          _mask_grad_jvp)


def _indices_setup(ctx, inputs, output):
    ctx.attrs = inputs[1:6]
    ctx.save_for_backward(inputs[0], output[1])
    ctx.save_for_forward(output[1])
    ctx.mark_non_differentiable(output[1])
    _no_zero_fill(ctx)


def _indices_backward(ctx, grad, _grad_indices):
    # Every product's backward takes FLOAT gradients with INT32 indices (A2/A3 take nothing
    # else): the gradient of an fp16/bf16 forward or of int64 indices goes through them.  The
    # operator sums in fp32 and rounds once either way, so the values are the same.
    if grad is None:
        return (None,) * 7
    x, indices = ctx.saved_tensors
    if indices.dtype != torch.int32:
        indices = indices.to(torch.int32)
    if x.dtype != torch.float32:
        return (ops.max_pool2d_with_indices_backward(grad.float(), x.float(), indices, *ctx.attrs)
                .to(x.dtype),) + (None,) * 6
    return (ops.max_pool2d_with_indices_backward(grad, x, indices, *ctx.attrs),) + (None,) * 6


def _indices_jvp(ctx, x_t, *_attrs_t):
    indices, = ctx.saved_tensors
    return _gather_at(x_t, indices), None


def _indices_grad_setup(ctx, inputs, output):
    ctx.attrs = inputs[3:]
    ctx.save_for_backward(inputs[2])
    ctx.save_for_forward(*inputs[:3])


def _indices_grad_backward(ctx, grad):
    # The backward scatters grad_output to the indices: its derivative gathers from them.
    indices, = ctx.saved_tensors
    return (_gather_at(grad, indices),) + (None,) * 7


def _indices_grad_jvp(ctx, grad_t, *_others_t):
    grad_output, x, indices = ctx.saved_tensors
    return ops.max_pool2d_with_indices_backward(_or_zeros(grad_t, grad_output), x, indices,
                                                *ctx.attrs)


_register("max_pool2d_with_indices", _indices_setup, _indices_backward, _indices_jvp)
_register("max_pool2d_with_indices_backward", _indices_grad_setup, _indices_grad_backward,
          _indices_grad_jvp)


# ---- im2col / col2im: linear, each the other's derivative ------------------------------------
def _im2col_setup(ctx, inputs, output):
    x = inputs[0]
    ctx.size = list(x.shape[-2:])
    ctx.dtype = x.dtype
    ctx.attrs = inputs[1:5]
    ctx.out_dtype = inputs[5]


def _im2col_backward(ctx, grad):
    return (ops.im2col_backward(grad, ctx.size, *ctx.attrs, ctx.dtype),) + (None,) * 5


def _im2col_jvp(ctx, x_t, *_attrs_t):
    return ops.im2col(x_t, *ctx.attrs, ctx.out_dtype)


def _col2im_setup(ctx, inputs, output):
    ctx.dtype = inputs[0].dtype
    ctx.size = inputs[1]
    ctx.attrs = inputs[2:6]
    ctx.out_dtype = inputs[6]


def _col2im_backward(ctx, grad):
    return (ops.im2col(grad, *ctx.attrs, ctx.dtype),) + (None,) * 6


def _col2im_jvp(ctx, grad_t, *_attrs_t):
    return ops.im2col_backward(grad_t, ctx.size, *ctx.attrs, ctx.out_dtype)


_register("im2col", _im2col_setup, _im2col_backward, _im2col_jvp)
_register("im2col_backward", _col2im_setup, _col2im_backward, _col2im_jvp)


# ---- PReLU: y = x > 0 ? x : w[c] * x -----------------------------------------------------------
def _per_channel(weight, x):
    """``weight`` shaped to broadcast against ``x`` along its channel (dim 1; dim 0 of 1-D x)."""
    if x.dim() >= 2:
        return weight.reshape((1, -1) + (1,) * (x.dim() - 2))
    return weight.reshape(-1)


def _channel_sums(values, x, shape):
    """``values`` (x's shape) summed per channel - over everything for a shared weight - in
    ``shape``: the gradient of a weight of that shape."""
    if values.shape != x.shape:
        values = values.expand(x.shape)
    if _numel(shape) == 1 or x.dim() < 2:
        sums = values.sum() if _numel(shape) == 1 else values
    else:
        sums = values.sum([d for d in range(x.dim()) if d != 1])
    return sums.reshape(shape)


def _numel(shape):
    count = 1
    for size in shape:
        count *= size
    return count


def _prelu_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0], inputs[1])
    ctx.save_for_forward(inputs[0], inputs[1])
    ctx.out_dtype = output.dtype


def _prelu_backward(ctx, grad):
    # The backward operator takes one dtype: x and weight are cast to the gradient's first.
    x, weight = ctx.saved_tensors
    dtype = grad.dtype
    grad_x, grad_w = ops.prelu_backward(grad, x.to(dtype), weight.to(dtype))
    grad_x = grad_x.to(x.dtype) if ctx.needs_input_grad[0] else None
    grad_w = grad_w.reshape(weight.shape).to(weight.dtype) if ctx.needs_input_grad[1] else None
    return grad_x, grad_w, None


def _prelu_jvp(ctx, x_t, weight_t, _dtype_t):
    # torch's: where(x > 0, x_t, w * x_t) + where(x > 0, 0, x * w_t)
    x, weight = ctx.saved_tensors
    positive = x > 0
    tangent = torch.zeros_like(x)
    if x_t is not None:
        tangent = torch.where(positive, x_t, _per_channel(weight, x) * x_t)
    if weight_t is not None:
        tangent = tangent + torch.where(positive, 0, x * _per_channel(weight_t, x))
    return tangent.to(ctx.out_dtype)


def _prelu_grad_setup(ctx, inputs, output):
    ctx.save_for_backward(*inputs)
    ctx.save_for_forward(*inputs)


def _prelu_grad_backward(ctx, grad_grad_x, grad_grad_w):
    """grad_x = x > 0 ? g : w[c] g and grad_w[c] = sum over c of (x > 0 ? 0 : x g), so
    d/dg = x > 0 ? ggx : w[c] ggx + x ggw[c];  d/dx = x > 0 ? 0 : g ggw[c];
    d/dw[c] = sum over c of (x > 0 ? 0 : g ggx) (torch's prelu double backward)."""
    grad_output, x, weight = ctx.saved_tensors
    positive = x > 0
    d_grad = d_x = d_weight = None
    if grad_grad_x is not None:
        d_grad = torch.where(positive, grad_grad_x, _per_channel(weight, x) * grad_grad_x)
        if ctx.needs_input_grad[2]:
            d_weight = _channel_sums(torch.where(positive, 0, grad_output * grad_grad_x), x,
                                     weight.shape)
    if grad_grad_w is not None:
        ggw = _per_channel(grad_grad_w, x)
        weight_term = torch.where(positive, 0, x * ggw)
        d_grad = weight_term if d_grad is None else d_grad + weight_term
        if ctx.needs_input_grad[1]:
            d_x = torch.where(positive, 0, grad_output * ggw)
    if d_grad is not None and d_grad.shape != grad_output.shape:
        d_grad = d_grad.sum_to_size(grad_output.shape)      # grad_output broadcast to x
    return d_grad, d_x, d_weight


def _prelu_grad_jvp(ctx, grad_t, x_t, weight_t):
    grad_output, x, weight = ctx.saved_tensors
    positive = x > 0
    grad_x_t = torch.zeros_like(x)
    grad_w_t = torch.zeros_like(x)          # per element, summed per channel below
    if grad_t is not None:
        grad_x_t = torch.where(positive, grad_t, _per_channel(weight, x) * grad_t)
        grad_w_t = torch.where(positive, 0, x * grad_t)
    if weight_t is not None:
        grad_x_t = grad_x_t + torch.where(positive, 0, _per_channel(weight_t, x) * grad_output)
    if x_t is not None:
        grad_w_t = grad_w_t + torch.where(positive, 0, x_t * grad_output)
    shape = tuple(weight.shape) if weight.numel() == 1 else (weight.numel(),)
    return grad_x_t, _channel_sums(grad_w_t, x, shape)


_register("prelu", _prelu_setup, _prelu_backward, _prelu_jvp)
_register("prelu_backward", _prelu_grad_setup, _prelu_grad_backward, _prelu_grad_jvp)
