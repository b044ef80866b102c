"""A caching allocator for the results of functional calls.

A large result freshly allocated on every call pays a page fault on every page it writes (the
C library's malloc maps blocks of 32 MiB and more anew each time, and so does PyTorch's CPU
allocator); for a memory-bound kernel that can cost as much as the kernel.  Results of
``min_bytes`` or more therefore come from blocks of ``aclrtMalloc`` memory (huge pages for
blocks of 2 MiB and more, as aclrtMalloc's HUGE_FIRST policy gives) that go back to a free list
when the numpy array or torch tensor holding them is garbage collected, and serve the next
result of the same rounded size.  Smaller results come from numpy's or torch's own allocator,
which is faster for them.

The cache is bounded: a freed block that would take the cached bytes over ``limit`` is given
back to the library at once.  :func:`empty_cache` gives back every cached block.  Environment:
``PYACLNN_CACHE_BYTES`` (the limit; default 1 GiB; 0 disables the cache) and
``PYACLNN_CACHE_MIN_BYTES`` (default 256 KiB).
"""

import os
import threading

import numpy as np

from ._core import ffi, lib

_SMALL_GRAIN = 64 << 10        # sizes below 2 MiB round up to 64 KiB ...
_HUGE_PAGE = 2 << 20           # ... larger ones to whole huge pages


def _env_bytes(name, default):
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        raise ValueError("%s must be a whole number of bytes, got %r" % (name, text)) from None
    if value < 0:
        raise ValueError("%s must not be negative, got %d" % (name, value))
    return value


def _rounded(nbytes):
    grain = _HUGE_PAGE if nbytes >= _HUGE_PAGE else _SMALL_GRAIN
    return (nbytes + grain - 1) // grain * grain


class ResultCache:
    """Free lists of aclrtMalloc blocks by rounded size; see the module docstring."""

    def __init__(self, limit=None, min_bytes=None):
        self.limit = _env_bytes("PYACLNN_CACHE_BYTES", 1 << 30) if limit is None else limit
        self.min_bytes = (_env_bytes("PYACLNN_CACHE_MIN_BYTES", 256 << 10)
                          if min_bytes is None else min_bytes)
        self._free = {}            # rounded size -> [raw void * cdata]
        self._cached_bytes = 0
        # Re-entrant: a collection that frees another block can run inside _give_back.
        self._lock = threading.RLock()

    @property
    def cached_bytes(self):
        """Bytes held in free lists, ready for the next result."""
        return self._cached_bytes

    def block(self, nbytes):
        """A ``char *`` cdata of at least ``nbytes`` that returns to the cache when collected."""
        size = _rounded(nbytes)
        pointer = None
        with self._lock:
            blocks = self._free.get(size)
            if blocks:
                pointer = blocks.pop()
                self._cached_bytes -= size
        if pointer is None:
            out = ffi.new("void **")
            code = lib.aclrtMalloc(out, size, lib.ACL_MEM_MALLOC_HUGE_FIRST)
            if code != 0:
                from . import _errors
                _errors.check_acl(code, "aclrtMalloc")
            pointer = ffi.cast("char *", out[0])
        return ffi.gc(pointer, lambda p, size=size: self._give_back(p, size), size)

    def _give_back(self, pointer, size):
        """Runs when the last array or tensor using the block is collected."""
        try:
            with self._lock:
                if self._cached_bytes + size <= self.limit:
                    self._free.setdefault(size, []).append(pointer)
                    self._cached_bytes += size
                    return
            lib.aclrtFree(pointer)
        except Exception:   # interpreter shutdown: the library may already be gone
            pass

    def empty(self):
        """Give every cached block back to the library (aclrtFree)."""
        with self._lock:
            free, self._free, self._cached_bytes = self._free, {}, 0
        for blocks in free.values():
            for raw in blocks:
                lib.aclrtFree(raw)
