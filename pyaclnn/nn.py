"""torch.nn modules that run pyaclnn's operators, and ``convert`` to swap them into a model.

    import pyaclnn.nn
    model = pyaclnn.nn.convert(model)      # every covered torch.nn module becomes ours

Each class here subclasses its torch.nn namesake, so it takes the same constructor arguments,
has the same ``state_dict`` keys and ``repr``, and ``isinstance(m, torch.nn.MaxPool2d)`` still
holds; only ``forward`` differs: it calls ``torch.ops.aclnn.*`` (pyaclnn.torch_ops), so autograd,
``torch.compile``, ``torch.export`` and ``torch.jit.trace`` see pyaclnn's operators, and
``pyaclnn.set_soc_version`` decides what they accept and compute (e.g. Ascend910's max pooling
computes float32 in float16).

=====================  =====================================================================
module                 what pyaclnn covers
=====================  =====================================================================
ReplicationPad2d       3-D and 4-D inputs, pads >= 0 and smaller than the dim they pad (CANN)
MaxPool2d              3-D and 4-D inputs, float32/float16/bfloat16; without return_indices
                       the forward is aclnnMaxPool2dWithMask (CANN's training path), with it
                       aclnnMaxPool2dWithIndices (int64 indices, as torch's); dilation > 1
                       only where the product takes it (Ascend950, with return_indices)
PReLU                  any num_parameters and init
Unfold / Fold          3-D and 4-D (unbatched / batched) inputs
Upsample               mode="nearest-exact" on 3-D (N, C, L) inputs, size or scale_factor
=====================  =====================================================================

What is not covered raises :class:`NotCoveredError` (a ``NotImplementedError``) naming it - at
construction for an argument (``Upsample(mode="bilinear")``), at the call for an input (a 4-D
input to Upsample) - unless the module was made with ``fallback=True``: then torch.nn's own
forward runs instead, for that call.  An input the operator itself refuses (a pad wider than
the input, a dtype the product does not take) raises the library's error
(``pyaclnn.ParamInvalidError``, CANN's message), or falls back likewise.  :func:`convert` never
raises it: a module it cannot cover stays torch.nn's.

The modules are drop-ins: ``forward`` takes torch's argument name (``input``), and
``torch.fx.symbolic_trace`` traces them (no test on a proxy: the graph holds the operator).
"""

import torch
from torch import nn
from torch.fx import Proxy

from . import torch_ops  # noqa: F401  (registers the operators' kernels and autograd)
from ._core import current_product
from ._errors import ParamError
# torch.ops.aclnn, minus the dispatcher for a plain eager call (pyaclnn._torch_kernels)
from ._torch_kernels import eager_ops as ops

__all__ = ["ReplicationPad2d", "MaxPool2d", "PReLU", "Unfold", "Fold", "Upsample", "convert",
           "NotCoveredError", "COVERED"]


class NotCoveredError(NotImplementedError):
    """A module argument or an input that pyaclnn's operators do not cover."""


def _pair(value):
    return (value, value) if isinstance(value, int) else tuple(value)


class _Covered:
    """What the modules share: the ``fallback`` switch and the fall back itself."""

    _uncovered = None          # why this module's arguments are not covered, or None

    def _init_fallback(self, fallback, uncovered=None):
        self.fallback = bool(fallback)
        if uncovered is not None:
            if not self.fallback:
                raise NotCoveredError("pyaclnn.nn.%s: %s (fallback=True runs torch.nn's %s "
                                      "instead)" % (type(self).__name__, uncovered,
                                                    type(self).__name__))
            self._uncovered = uncovered

    def _refuse(self, x, why):
        """torch.nn's forward when the module falls back; NotCoveredError otherwise."""
        if self.fallback:
            return self._torch_forward(x)
        raise NotCoveredError("pyaclnn.nn.%s: %s (fallback=True runs torch.nn's %s instead)"
                              % (type(self).__name__, why, type(self).__name__))

    def _torch_forward(self, x):
        return super(_Covered, self).forward(x)      # the torch.nn class after us in the MRO

    def _run(self, x, function):
        if self._uncovered is not None:
            return self._torch_forward(x)
        if not self.fallback:
            return function(x)
        try:
            return function(x)
        except (ParamError, NotCoveredError):
            return self._torch_forward(x)

    def extra_repr(self):
        text = super().extra_repr()
        return text + ", fallback=True" if self.fallback else text


def _dims(module, x, allowed):
    """The refusal of an input of a rank the operator does not take, or None.  An
    ``torch.fx.symbolic_trace`` proxy has no rank to test (a test would be control flow on a
    proxy): the traced graph holds the operator, which refuses a wrong rank when it runs."""
    if isinstance(x, Proxy):
        return None
    if x.dim() not in allowed:
        return module._refuse(x, "takes %s-D input, got %d-D"
                              % (" or ".join(str(d) for d in allowed), x.dim()))
    return None


class ReplicationPad2d(_Covered, nn.ReplicationPad2d):
    """torch.nn.ReplicationPad2d on aclnnReplicationPad2d."""

    def __init__(self, padding, fallback=False):
        super().__init__(padding)
        self._init_fallback(fallback)

    def forward(self, input):
        refused = _dims(self, input, (3, 4))
        if refused is not None:
            return refused
        return self._run(input, lambda t: ops.replication_pad2d(t, list(self.padding)))


class MaxPool2d(_Covered, nn.MaxPool2d):
    """torch.nn.MaxPool2d on aclnnMaxPool2dWithMask (or ...WithIndices for return_indices)."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False, fallback=False):
        super().__init__(kernel_size, stride, padding, dilation, return_indices, ceil_mode)
        uncovered = None
        if _pair(dilation) != (1, 1) and not return_indices:
            uncovered = ("dilation %s needs return_indices=True (CANN's mask pooling takes "
                         "dilation 1; the indices pooling takes more on Ascend950 only)"
                         % (dilation,))
        self._init_fallback(fallback, uncovered)

    def _attrs(self):
        kernel = list(_pair(self.kernel_size))
        stride = list(_pair(self.stride)) if self.stride is not None else kernel
        return (kernel, stride, list(_pair(self.padding)), list(_pair(self.dilation)),
                bool(self.ceil_mode))

    def _pool(self, x):
        if self.return_indices:
            return ops.max_pool2d_with_indices(x, *self._attrs(), torch.int64)
        return ops.max_pool2d_with_mask(x, *self._attrs())[0]

    def forward(self, input):
        refused = _dims(self, input, (3, 4))
        if refused is not None:
            return refused
        return self._run(input, self._pool)


class PReLU(_Covered, nn.PReLU):
    """torch.nn.PReLU on aclnnPrelu (both gradients from aclnnPreluBackward)."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None, fallback=False):
        super().__init__(num_parameters, init, device=device, dtype=dtype)
        self._init_fallback(fallback)

    def forward(self, input):
        return self._run(input, lambda t: ops.prelu(t, self.weight))


class Unfold(_Covered, nn.Unfold):
    """torch.nn.Unfold on aclnnIm2col."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1, fallback=False):
        super().__init__(kernel_size, dilation, padding, stride)
        self._init_fallback(fallback)

    def forward(self, input):
        refused = _dims(self, input, (3, 4))
        if refused is not None:
            return refused
        return self._run(input, lambda t: ops.im2col(
            t, list(_pair(self.kernel_size)), list(_pair(self.dilation)),
            list(_pair(self.padding)), list(_pair(self.stride))))


class Fold(_Covered, nn.Fold):
    """torch.nn.Fold on aclnnIm2colBackward (col2im)."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1,
                 fallback=False):
        super().__init__(output_size, kernel_size, dilation, padding, stride)
        self._init_fallback(fallback)

    def forward(self, input):
        refused = _dims(self, input, (2, 3))
        if refused is not None:
            return refused
        return self._run(input, lambda t: ops.im2col_backward(
            t, list(_pair(self.output_size)), list(_pair(self.kernel_size)),
            list(_pair(self.dilation)), list(_pair(self.padding)), list(_pair(self.stride))))


class Upsample(_Covered, nn.Upsample):
    """torch.nn.Upsample with mode="nearest-exact" on 1-D inputs, on aclnnUpsampleNearestExact1d."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None, fallback=False):
        super().__init__(size, scale_factor, mode, align_corners, recompute_scale_factor)
        uncovered = None
        if mode != "nearest-exact":
            uncovered = "mode=%r is not covered, only mode='nearest-exact' on 3-D input" % (mode,)
        elif isinstance(size, (tuple, list)) and len(size) != 1 or \
                isinstance(scale_factor, (tuple, list)) and len(scale_factor) != 1:
            uncovered = "only 1-D upsampling (one size or scale_factor) is covered"
        self._init_fallback(fallback, uncovered)

    def _upsample(self, x):
        size, scale = self.size, self.scale_factor
        if isinstance(size, (tuple, list)):
            size = size[0]
        if isinstance(scale, (tuple, list)):
            scale = scale[0]
        if size is not None:
            return ops.upsample_nearest_exact1d(x, [size], None)
        if scale is None:
            raise ValueError("either size or scale_factor should be defined")
        length = torch.sym_int(x.shape[-1] * float(scale))    # torch's floor(L * scale)
        # recompute_scale_factor: the scale the size implies, as torch.nn.functional.interpolate
        return ops.upsample_nearest_exact1d(x, [length],
                                            None if self.recompute_scale_factor else float(scale))

    def forward(self, input):
        refused = _dims(self, input, (3,))
        if refused is not None:
            return refused
        return self._run(input, self._upsample)


#: torch.nn class -> ours, in the order convert tries them.
COVERED = {
    nn.ReplicationPad2d: ReplicationPad2d,
    nn.MaxPool2d: MaxPool2d,
    nn.PReLU: PReLU,
    nn.Unfold: Unfold,
    nn.Fold: Fold,
    nn.Upsample: Upsample,
}


def _made(ours, module, fallback):
    """Our module with ``module``'s arguments (PReLU sharing its weight)."""
    if isinstance(module, nn.ReplicationPad2d):
        return ours(module.padding, fallback=fallback)
    if isinstance(module, nn.MaxPool2d):
        return ours(module.kernel_size, module.stride, module.padding, module.dilation,
                    module.return_indices, module.ceil_mode, fallback=fallback)
    if isinstance(module, nn.PReLU):
        new = ours(module.num_parameters, fallback=fallback)
        new.weight = module.weight            # the same Parameter: optimizers keep working
        return new
    if isinstance(module, nn.Unfold):
        return ours(module.kernel_size, module.dilation, module.padding, module.stride,
                    fallback=fallback)
    if isinstance(module, nn.Fold):
        return ours(module.output_size, module.kernel_size, module.dilation, module.padding,
                    module.stride, fallback=fallback)
    return ours(module.size, module.scale_factor, module.mode, module.align_corners,
                module.recompute_scale_factor, fallback=fallback)


def _covered_now(module):
    """Whether the selected product takes ``module``'s arguments where construction cannot tell:
    a dilated MaxPool2d runs only on a product whose indices pooling takes dilation
    (Ascend950)."""
    if isinstance(module, nn.MaxPool2d) and _pair(module.dilation) != (1, 1):
        return str(current_product() or "").startswith("Ascend950")
    return True


# What a module carries besides its arguments and parameters, handed to its replacement: the
# hooks (the same dicts, so the handles the user holds still remove them) and the flags.
_CARRIED = ("training", "_forward_hooks", "_forward_hooks_with_kwargs",
            "_forward_hooks_always_called", "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs",
            "_backward_hooks", "_backward_pre_hooks", "_is_full_backward_hook",
            "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
            "_load_state_dict_post_hooks")


def _converted(module, fallback):
    """Our module for a covered torch.nn module (sharing its parameters, hooks and flags), or
    None: not covered, or not with these arguments (those modules stay torch's)."""
    ours = COVERED.get(type(module))
    if ours is None or not _covered_now(module):
        return None
    try:
        new = _made(ours, module, fallback)
    except NotCoveredError:
        return None                   # e.g. a bilinear Upsample, a dilated MaxPool2d
    for name in _CARRIED:
        if name in module.__dict__:
            new.__dict__[name] = module.__dict__[name]
    return new


def convert(module, fallback=False):
    """``module`` with every covered torch.nn submodule replaced by pyaclnn.nn's.

    Like ``torch.nn.SyncBatchNorm.convert_sync_batchnorm``: the submodules are replaced in
    place and the (possibly new) root is returned; parameters are the same objects, so an
    optimizer made before still updates them.  A module whose arguments pyaclnn does not cover
    (an Upsample with mode="bilinear") stays torch.nn's.  ``fallback`` is passed to every module
    made: with True, an input the operator refuses at run time runs torch.nn's forward.
    """
    new = _converted(module, fallback)
    if new is not None:
        return new
    for name, child in module.named_children():
        replaced = convert(child, fallback)
        if replaced is not child:
            setattr(module, name, replaced)
    return module
