"""What every functional operator shares: argument spelling and the call itself."""

from typing import Any, Sequence, Tuple, Union

import numpy as np

from .._dispatch import launch  # noqa: F401  (re-exported to the ops)
from .._dtypes import acl_dtype
from .._interop import as_array, dtype_code, wants_grad  # noqa: F401  (re-exported to the ops)

IntOrPair = Union[int, Sequence[int]]
#: What the functional ops take: a numpy array, a torch CPU tensor, a DLPack object or anything
#: np.asarray accepts; they return a torch tensor for torch inputs and a numpy array otherwise.
ArrayLike = Any


def pair(value: IntOrPair) -> Tuple[int, int]:
    """An attribute as the two values the caller meant: int v -> (v, v); a pair as is."""
    if isinstance(value, (int, np.integer)):
        return int(value), int(value)
    return tuple(int(v) for v in value)


def ints(value) -> Tuple[int, ...]:
    """An aclIntArray attribute as a tuple: int v -> (v,); None -> ()."""
    if value is None:
        return ()
    if isinstance(value, (int, np.integer)):
        return (int(value),)
    return tuple(int(v) for v in value)


def out_code(out_dtype, default_code):
    """The aclDataType of a result: ``out_dtype`` (numpy, torch or a name) or the default."""
    return default_code if out_dtype is None else acl_dtype(out_dtype)
