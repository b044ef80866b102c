"""torch.autograd functions whose backward runs libaclnn's backward operators.

pyaclnn.functional routes a call here when a torch input requires grad and grad mode is on, so
``y = F.replication_pad2d(x, pad); y.sum().backward()`` fills ``x.grad`` through
aclnnReplicationPad2dBackward.  Each forward runs the forward operator with grad mode off and
saves what the backward operator takes; the backward is once-differentiable (the backward
operators have no derivative of their own here).  Imported only when torch is.

Every forward records the product it ran on (``current_product()``) and its backward runs on
that product (``with soc(product)``, the calling thread only), whatever the selection is by
then: a max-pool mask is read in the layout it was written in, and every backward takes what its
forward's product takes.
"""

from contextlib import nullcontext

import torch
from torch.autograd.function import once_differentiable

from ._core import current_product, soc
from ._dispatch import empty_result, launch
from .functional._common import like
from ._interop import dtype_code


def _run_forward(function, *args):
    with torch.no_grad():
        return function(*args)


def _record_product(ctx):
    ctx.product = current_product()


def _on_forward_product(ctx):
    """The forward's product for the backward's calls (nothing to select on a real CANN)."""
    return nullcontext() if ctx.product is None else soc(ctx.product)


class ReplicationPad2d(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, padding):
        from .functional import replication_pad2d
        ctx.save_for_backward(x)
        ctx.padding = padding
        _record_product(ctx)
        return _run_forward(replication_pad2d, x.detach(), padding)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        from .functional import replication_pad2d_backward
        x, = ctx.saved_tensors
        with _on_forward_product(ctx):
            return replication_pad2d_backward(grad_output, x, ctx.padding), None


class UpsampleNearestExact1d(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, output_size, scales):
        from .functional import upsample_nearest_exact1d
        ctx.geometry = (output_size, tuple(x.shape), scales)
        _record_product(ctx)
        return _run_forward(upsample_nearest_exact1d, x.detach(), output_size, scales)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        from .functional import upsample_nearest_exact1d_backward
        output_size, input_size, scales = ctx.geometry
        with _on_forward_product(ctx):
            return upsample_nearest_exact1d_backward(grad_output, output_size, input_size,
                                                     scales), None, None


class MaxPool2dWithMask(torch.autograd.Function):
    """The gradient goes through the mask: each output's gradient to its argmax.

    What is kept for the backward is only the part of the mask the backward operator reads (the
    rest of CANN's container is zero, and the operator takes any 3-D/4-D mask that holds the
    bytes it reads): the int32 argmax stream on A2/A3 (4*N*C*Ho*Wo bytes, half of torch's int64
    indices), the V1 bit-mask rows on Ascend910/310P, one byte for a 1x1 kernel (whose mask is
    not read).  N8 C64 128x128 k3s2p1: 8.4 MB kept instead of the 37.9 MB container."""

    @staticmethod
    def forward(ctx, x, kernel, strides, pads, dils, ceil_mode):
        from .functional import max_pool2d_with_mask
        _record_product(ctx)
        out, mask = _run_forward(max_pool2d_with_mask, x.detach(), kernel, strides, pads, dils,
                                 ceil_mode)
        ctx.save_for_backward(x, _mask_head(mask, tuple(out.shape), kernel, ctx.product))
        ctx.attrs = (kernel, strides, pads, dils, ceil_mode)
        ctx.mark_non_differentiable(mask)
        return out, mask

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output, _grad_mask):
        from .functional import max_pool2d_with_mask_backward
        x, mask = ctx.saved_tensors
        with _on_forward_product(ctx):
            grad = max_pool2d_with_mask_backward(grad_output, x, mask, *ctx.attrs)
        return grad, None, None, None, None, None


def _mask_head(mask, out_shape, kernel, product):
    """A copy of the bytes of ``mask`` the backward reads, as a [1, 1, 1, bytes] int8 tensor."""
    from .mask import mask_bytes_read, product_layout
    if len(out_shape) not in (3, 4) or mask.dim() not in (3, 4):
        return mask
    needed = mask_bytes_read(out_shape, kernel, product_layout(product))
    # into a result block (no page faults for a large head, as for any result), not .clone()
    head = empty_result([mask], (1, 1, 1, needed), dtype_code(mask))
    head.copy_(mask.reshape(-1)[:needed].reshape(1, 1, 1, needed))
    return head


class MaxPool2dWithIndices(torch.autograd.Function):
    """Backward: aclnnMaxPool2dWithIndicesBackward with the int32 indices (what every product's
    backward takes); fp16/bf16 go through fp32 on the products whose backward takes only FLOAT
    (A2/A3: the fp32 sum rounded once, as Ascend950's own fp16 kernel gives)."""

    @staticmethod
    def forward(ctx, x, kernel, strides, pads, dils, ceil_mode, indices_code):
        _record_product(ctx)
        shape = _pooled_shape(x, kernel, strides, pads, dils, ceil_mode)
        with torch.no_grad():
            out, indices = launch("MaxPool2dWithIndices", [x.detach()],
                                  [kernel, strides, pads, dils, ceil_mode],
                                  [like(x, shape, dtype_code(x)), like(x, shape, _INT32)])
        ctx.save_for_backward(x, indices)
        ctx.attrs = (kernel, strides, pads, dils, ceil_mode)
        returned = indices if indices_code == _INT32 else indices.to(torch.int64)
        ctx.mark_non_differentiable(returned)
        return out, returned

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output, _grad_indices):
        from .functional import max_pool2d_with_indices_backward
        x, indices = ctx.saved_tensors
        direct = x.dtype == torch.float32 or str(ctx.product or "").startswith("Ascend950")
        with _on_forward_product(ctx):
            if direct:
                grad = max_pool2d_with_indices_backward(grad_output.to(x.dtype), x, indices,
                                                        *ctx.attrs)
            else:
                grad = max_pool2d_with_indices_backward(grad_output.float(), x.float(), indices,
                                                        *ctx.attrs).to(x.dtype)
        return grad, None, None, None, None, None, None


_INT32 = 3  # ACL_INT32


def _pooled_shape(x, kernel, strides, pads, dils, ceil_mode):
    from .functional._max_pool_indices import _out_shape
    return _out_shape(tuple(x.shape), kernel, strides, pads, dils, ceil_mode)


class Im2col(torch.autograd.Function):
    """Backward: col2im of the column gradient (aclnnIm2colBackward), in x's dtype."""

    @staticmethod
    def forward(ctx, x, kernel, dilation, padding, stride, code):
        ctx.geometry = (tuple(x.shape[-2:]), kernel, dilation, padding, stride)
        ctx.x_code = dtype_code(x)
        _record_product(ctx)
        out_shape = _im2col_shape(tuple(x.shape), kernel, dilation, padding, stride)
        with torch.no_grad():
            return launch("Im2col", [x.detach()], [kernel, dilation, padding, stride],
                          [(out_shape, code)])[0]

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        size, kernel, dilation, padding, stride = ctx.geometry
        shape = tuple(grad_output.shape)
        out_shape = shape[:-2] + (shape[-2] // (kernel[0] * kernel[1]),) + size
        with _on_forward_product(ctx):
            grad = launch("Im2colBackward", [grad_output], [size, kernel, dilation, padding, stride],
                          [(out_shape, ctx.x_code)])[0]
        return grad, None, None, None, None, None


def _im2col_shape(shape, k, d, p, s):
    from .functional._im2col_prelu import _im2col_out_shape
    return _im2col_out_shape(shape, k, d, p, s)


class Prelu(torch.autograd.Function):
    """Both gradients from one aclnnPreluBackward call (inputs cast to one dtype first: the
    backward operator takes no mixed dtypes)."""

    @staticmethod
    def forward(ctx, x, weight, code):
        ctx.save_for_backward(x, weight)
        _record_product(ctx)
        with torch.no_grad():
            return launch("Prelu", [x.detach(), weight.detach()], [], [like(x, tuple(x.shape), code)])[0]

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        from .functional import prelu_backward
        x, weight = ctx.saved_tensors
        dtype = grad_output.dtype
        with _on_forward_product(ctx):
            grad_x, grad_w = prelu_backward(grad_output, x.to(dtype), weight.to(dtype))
        grad_x = grad_x.to(x.dtype) if ctx.needs_input_grad[0] else None
        grad_w = grad_w.reshape(weight.shape).to(weight.dtype) if ctx.needs_input_grad[1] else None
        return grad_x, grad_w, None
