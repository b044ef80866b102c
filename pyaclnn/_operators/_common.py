"""What every functional operator shares: argument spelling and the call itself."""

from operator import index
from typing import Any, Sequence, Tuple, Union

import numpy as np

from .._dispatch import CHANNELS_LAST, empty_result, launch  # noqa: F401  (re-exported to the ops)
from .._dtypes import acl_dtype
from .._interop import as_array, as_arrays, dtype_code, is_channels_last  # noqa: F401 (re-exported)

IntOrPair = Union[int, Sequence[int]]
#: What the functional ops take: a numpy array, a torch CPU tensor, a DLPack object or anything
#: np.asarray accepts; they return a torch tensor for torch inputs and a numpy array otherwise.
ArrayLike = Any


def _int(value, name):
    """``value`` as an int when it is one (int, numpy or torch integer); TypeError otherwise, as
    torch.nn.functional does: a float such as 1.5 or 2.0 is never truncated."""
    try:
        return index(value)
    except TypeError:
        raise TypeError("%s must be an int or a sequence of ints, but found an element of type %s (%r)"
                        % (name, type(value).__name__, value)) from None


def ints(value, name="argument") -> Tuple[int, ...]:
    """An aclIntArray attribute as a tuple: int v -> (v,); None -> (); a sequence element-wise.
    Anything that is not an integer raises TypeError naming ``name``."""
    if value is None:
        return ()
    if type(value) is tuple and all(type(v) is int for v in value):
        return value                              # the common spelling: nothing to convert
    if isinstance(value, (int, np.integer)):
        return (int(value),)
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        if hasattr(value, "__index__"):          # a 0-d integer tensor or array
            return (_int(value, name),)
        raise TypeError("%s must be an int or a sequence of ints, got %s (%r)"
                        % (name, type(value).__name__, value))
    return tuple(_int(v, name) for v in value)


def pair(value: IntOrPair, name="argument") -> Tuple[int, int]:
    """An attribute as the two values the caller meant: int v -> (v, v); a pair as is."""
    values = ints(value, name)
    return (values[0], values[0]) if len(values) == 1 else values


def out_code(out_dtype, default_code):
    """The aclDataType of a result: ``out_dtype`` (numpy, torch or a name) or the default."""
    return default_code if out_dtype is None else acl_dtype(out_dtype)


def pool_attrs(kernel_size, stride, padding, dilation):
    """The four pooling attributes as aclIntArray tuples, each checked under its Python name."""
    return (ints(kernel_size, "kernel_size"), ints(stride, "stride"), ints(padding, "padding"),
            ints(dilation, "dilation"))


def like(x, shape, code):
    """The output spec of a result torch lays out as ``x`` (``memory_format`` preserved): a
    channels-last 4-D torch ``x`` gives a channels-last result of ``shape``."""
    if len(shape) == 4 and is_channels_last(x):
        return (shape, code, CHANNELS_LAST)
    return (shape, code)
