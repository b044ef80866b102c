"""Autocast rules for ``torch.ops.aclnn.*``: the ops follow torch's CPU autocast policy for the
functions they replace (``torch.autocast("cpu", dtype)``).

torch's CPU policy, as its functions behave under autocast: ``prelu`` runs in the autocast dtype
(a float32 input or weight is cast down: a converted Conv2d+PReLU gives bfloat16 as torch's
does, where the mixed bf16 x and fp32 weight gave float32 before); ``replication_pad2d`` runs in
float32 (a bf16/fp16 input is cast up, as torch's ``F.pad(mode="replicate")``); max pooling,
im2col / col2im and nearest-exact upsampling have no rule (they run in the input's dtype).
The backward operators have none either: autograd runs them outside the autocast region, as it
runs torch's.  Only floating tensors other than float64 are cast, as torch casts.
"""

import torch
from torch import Tensor

from ._torch_library import LIBRARY, OVERLOADS

__all__ = []

_AUTOCAST_CPU = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastCPU)
_exclude = torch._C._ExcludeDispatchKeyGuard


def _eligible(value):
    return isinstance(value, Tensor) and value.is_floating_point() and \
        value.dtype != torch.float64


def _register(name, target_dtype):
    """``name`` runs with its floating inputs cast to ``target_dtype()`` under CPU autocast."""
    overload = OVERLOADS[name]

    def autocast_kernel(keyset, *args):
        dtype = target_dtype()
        cast = [value.to(dtype) if _eligible(value) else value for value in args]
        with _exclude(_AUTOCAST_CPU):
            return overload(*cast)

    LIBRARY.impl(name, autocast_kernel, "AutocastCPU", with_keyset=True)


def _lower_precision():
    return torch.get_autocast_dtype("cpu")


def _float32():
    return torch.float32


_register("prelu", _lower_precision)
_register("replication_pad2d", _float32)
