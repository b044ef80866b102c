"""torch.autograd functions whose backward runs libaclnn's backward operators.

pyaclnn.functional routes a call here when a torch input requires grad and grad mode is on, so
``y = F.replication_pad2d(x, pad); y.sum().backward()`` fills ``x.grad`` through
aclnnReplicationPad2dBackward.  Each forward runs the forward operator with grad mode off and
saves what the backward operator takes; the backward is once-differentiable (the backward
operators have no derivative of their own here).  Imported only when torch is.
"""

import torch
from torch.autograd.function import once_differentiable

from ._dispatch import launch
from ._interop import dtype_code


def _run_forward(function, *args):
    with torch.no_grad():
        return function(*args)


class ReplicationPad2d(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, padding):
        from .functional import replication_pad2d
        ctx.save_for_backward(x)
        ctx.padding = padding
        return _run_forward(replication_pad2d, x.detach(), padding)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        from .functional import replication_pad2d_backward
        x, = ctx.saved_tensors
        return replication_pad2d_backward(grad_output, x, ctx.padding), None


class UpsampleNearestExact1d(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, output_size, scales):
        from .functional import upsample_nearest_exact1d
        ctx.geometry = (output_size, tuple(x.shape), scales)
        return _run_forward(upsample_nearest_exact1d, x.detach(), output_size, scales)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        from .functional import upsample_nearest_exact1d_backward
        output_size, input_size, scales = ctx.geometry
        return upsample_nearest_exact1d_backward(grad_output, output_size, input_size,
                                                 scales), None, None


class MaxPool2dWithMask(torch.autograd.Function):
    """The gradient goes through the mask: each output's gradient to its argmax."""

    @staticmethod
    def forward(ctx, x, kernel, strides, pads, dils, ceil_mode):
        from .functional import max_pool2d_with_mask
        out, mask = _run_forward(max_pool2d_with_mask, x.detach(), kernel, strides, pads, dils,
                                 ceil_mode)
        ctx.save_for_backward(x, mask)
        ctx.attrs = (kernel, strides, pads, dils, ceil_mode)
        ctx.mark_non_differentiable(mask)
        return out, mask

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output, _grad_mask):
        from .functional import max_pool2d_with_mask_backward
        x, mask = ctx.saved_tensors
        return (max_pool2d_with_mask_backward(grad_output, x, mask, *ctx.attrs),
                None, None, None, None, None)


class Im2col(torch.autograd.Function):
    """Backward: col2im of the column gradient (aclnnIm2colBackward), in x's dtype."""

    @staticmethod
    def forward(ctx, x, kernel, dilation, padding, stride, code):
        ctx.geometry = (tuple(x.shape[-2:]), kernel, dilation, padding, stride)
        ctx.x_code = dtype_code(x)
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
        with torch.no_grad():
            return launch("Prelu", [x.detach(), weight.detach()], [], [(tuple(x.shape), code)])[0]

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        from .functional import prelu_backward
        x, weight = ctx.saved_tensors
        dtype = grad_output.dtype
        grad_x, grad_w = prelu_backward(grad_output, x.to(dtype), weight.to(dtype))
        grad_x = grad_x.to(x.dtype) if ctx.needs_input_grad[0] else None
        grad_w = grad_w.reshape(weight.shape).to(weight.dtype) if ctx.needs_input_grad[1] else None
        return grad_x, grad_w, None
