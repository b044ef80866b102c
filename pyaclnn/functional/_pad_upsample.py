"""Replication padding and nearest-exact 1-D upsampling, numpy in / numpy out.

    out = replication_pad2d(x, (left, right, top, bottom))          # aclnnReplicationPad2d
    gx = replication_pad2d_backward(grad_out, x, padding)            # aclnnReplicationPad2dBackward
    y = upsample_nearest_exact1d(x, output_size, scales=None)        # aclnnUpsampleNearestExact1d
    gx = upsample_nearest_exact1d_backward(grad_out, output_size, input_size, scales=None)

``x`` for the pads is [C, H, W] or [N, C, H, W]; for the upsample ops [N, C, L].  ``padding`` is
PyTorch's order for the last two dims (W first, then H).  ``scales`` is the forward's
output/input factor; None (or <= 0 in the forward) means "derive it from the sizes".
Bad arguments raise the library's own errors (pyaclnn.ParamInvalidError etc.).
"""

import numpy as np

__all__ = [
    "replication_pad2d",
    "replication_pad2d_backward",
    "upsample_nearest_exact1d",
    "upsample_nearest_exact1d_backward",
]


def _ints(value):
    if isinstance(value, (int, np.integer)):
        return [int(value)]
    return [int(v) for v in value]


def _padded_shape(shape, padding):
    """The output shape of a valid call; the input shape otherwise, so that the library itself
    reports what is wrong with the arguments."""
    if len(shape) >= 2 and len(padding) == 4:
        height = shape[-2] + padding[2] + padding[3]
        width = shape[-1] + padding[0] + padding[1]
        if height >= 0 and width >= 0:
            return tuple(shape[:-2]) + (height, width)
    return tuple(shape)


def _scales(scales):
    return 0.0 if scales is None else float(scales)


def replication_pad2d(x, padding):
    """aclnnReplicationPad2d: pad the last two dims of ``x`` by repeating its edges."""
    import pyaclnn
    x = np.asarray(x)
    padding = _ints(padding)
    with pyaclnn.Tensor.from_numpy(x) as xt, \
            pyaclnn.Tensor.empty(_padded_shape(x.shape, padding), x.dtype, fill=np.nan) as out:
        pyaclnn.run_op("ReplicationPad2d", xt, padding, out)
        return out.numpy()


def replication_pad2d_backward(grad_output, x, padding):
    """aclnnReplicationPad2dBackward: the gradient of replication_pad2d w.r.t. ``x``."""
    import pyaclnn
    grad_output = np.asarray(grad_output)
    x = np.asarray(x)
    padding = _ints(padding)
    with pyaclnn.Tensor.from_numpy(grad_output) as gt, pyaclnn.Tensor.from_numpy(x) as xt, \
            pyaclnn.Tensor.empty(x.shape, x.dtype, fill=np.nan) as grad_input:
        pyaclnn.run_op("ReplicationPad2dBackward", gt, xt, padding, grad_input)
        return grad_input.numpy()


def upsample_nearest_exact1d(x, output_size, scales=None):
    """aclnnUpsampleNearestExact1d: resize the last dim of [N, C, L] ``x`` to ``output_size``."""
    import pyaclnn
    x = np.asarray(x)
    output_size = _ints(output_size)
    if x.ndim == 3 and len(output_size) == 1 and output_size[0] >= 0:
        out_shape = x.shape[:2] + (output_size[0],)
    else:
        out_shape = x.shape
    with pyaclnn.Tensor.from_numpy(x) as xt, \
            pyaclnn.Tensor.empty(out_shape, x.dtype, fill=np.nan) as out:
        pyaclnn.run_op("UpsampleNearestExact1d", xt, output_size, _scales(scales), out)
        return out.numpy()


def upsample_nearest_exact1d_backward(grad_output, output_size, input_size, scales=None):
    """aclnnUpsampleNearestExact1dBackward: the gradient of upsample_nearest_exact1d.

    ``output_size`` is the forward's [Lout], ``input_size`` the forward input's [N, C, L];
    returns an array of shape ``input_size``.
    """
    import pyaclnn
    grad_output = np.asarray(grad_output)
    output_size = _ints(output_size)
    input_size = _ints(input_size)
    if len(input_size) == 3 and min(input_size) >= 0:
        out_shape = tuple(input_size)
    else:
        out_shape = grad_output.shape
    with pyaclnn.Tensor.from_numpy(grad_output) as gt, \
            pyaclnn.Tensor.empty(out_shape, grad_output.dtype, fill=np.nan) as grad_input:
        pyaclnn.run_op("UpsampleNearestExact1dBackward", gt, output_size, input_size,
                       _scales(scales), grad_input)
        return grad_input.numpy()
