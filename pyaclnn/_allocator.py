"""A caching allocator for the results of functional calls.

A large result freshly allocated on every call pays a page fault on every page it writes (the
C library's malloc maps blocks of 32 MiB and more anew each time, and so does PyTorch's CPU
allocator); for a memory-bound kernel that can cost as much as the kernel.  Results of
``min_bytes`` or more therefore come from blocks of ``aclrtMalloc`` memory (huge pages for
blocks of 2 MiB and more, as aclrtMalloc's HUGE_FIRST policy gives) that go back to a free list
when the numpy array or torch tensor holding them is garbage collected, and serve the next
result of the same rounded size.  Smaller results come from numpy's or torch's own allocator,
which is faster for them.

Results for torch callers must stay resizable, as torch's own are (``torch.cat(..., out=y)``
grows ``y``), and a tensor over foreign memory (``torch.frombuffer``) is not.  Their blocks are
therefore storages torch allocated itself (:class:`TorchBlocks`): the pool keeps a reference to
each and hands it out again only once nothing outside the pool can reach it (design decision 20):
no tensor or view uses it (``torch._C._storage_Use_Count`` is 1), no Python object holds the
pool's storage object (``y.untyped_storage()`` returns that very object, so a caller keeping
only it shows in its reference count, not in the use count), and it was never moved to shared
memory (``is_shared()``: ``torch.multiprocessing``, a ``DataLoader`` worker or an ``mp.Queue``
moves a storage it sends into shared memory in place, and the receiving process keeps reading
those pages after the sender dropped its tensor).  A shared storage, or one the user resized (it
then holds other memory), leaves the pool for good.  Blocks of 2 MiB and more are advised to
use huge pages, as aclrtMalloc's are.

The cache is bounded: a freed block that would take the cached bytes over ``limit`` is given
back to the library at once.  :func:`empty_cache` gives back every cached block.  Environment:
``PYACLNN_CACHE_BYTES`` (the limit; default 1 GiB; 0 disables the cache) and
``PYACLNN_CACHE_MIN_BYTES`` (default 256 KiB).
"""

import ctypes
import os
import sys
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

    def close(self):
        """At interpreter exit: give every cached block back and cache none from then on, so that
        blocks still held by arrays go back to the library as the interpreter collects them
        (``ACLNN_CHECK=leakcheck`` lists the device memory a process leaves at exit)."""
        with self._lock:
            self.limit = 0
        self.empty()

    def empty(self):
        """Give every cached block back to the library (aclrtFree)."""
        with self._lock:
            free, self._free, self._cached_bytes = self._free, {}, 0
        for blocks in free.values():
            for raw in blocks:
                lib.aclrtFree(raw)


_MADV_HUGEPAGE = 14


def _advise_huge_pages(address, nbytes):
    """madvise(MADV_HUGEPAGE) over the whole huge pages inside [address, address + nbytes)."""
    start = (address + _HUGE_PAGE - 1) // _HUGE_PAGE * _HUGE_PAGE
    end = (address + nbytes) // _HUGE_PAGE * _HUGE_PAGE
    if end > start:
        try:
            ctypes.CDLL(None, use_errno=True).madvise(ctypes.c_void_p(start), ctypes.c_size_t(end - start),
                                                     _MADV_HUGEPAGE)
        except (OSError, AttributeError):   # no madvise here: ordinary pages
            pass


class TorchBlocks:
    """Reusable torch storages for torch results, by rounded size; see the module docstring.
    Shares the limit of ``cache`` (a :class:`ResultCache`): the bytes of the storages only the
    pool holds count against it."""

    def __init__(self, cache):
        self._cache = cache
        self._blocks = {}          # rounded size -> [torch.UntypedStorage], oldest first
        self._lock = threading.Lock()
        # The reference count a pooled storage object shows to _python_holders when only the
        # pool's list holds it, measured once on a probe reached the same way (the count an
        # interpreter reports for the same holders differs between Python versions).
        self._pool_only_refs = None

    @staticmethod
    def _refs_of_entry(blocks, index):
        return sys.getrefcount(blocks[index])

    def _python_holders(self, blocks, index):
        """References to ``blocks[index]`` from Python objects outside the pool."""
        if self._pool_only_refs is None:
            self._pool_only_refs = self._refs_of_entry([object()], 0)
        return self._refs_of_entry(blocks, index) - self._pool_only_refs

    def _state(self, blocks, index, size, use_count):
        """'idle' (only the pool reaches the storage), 'busy' (a tensor, view or Python object
        still does) or 'gone' (it left the pool's control: shared with another process, or
        resized to other memory)."""
        # No local name for the storage: it would be one more reference to it.
        if blocks[index].is_shared() or blocks[index].nbytes() != size:
            return "gone"
        if use_count(blocks[index]._cdata) != 1 or self._python_holders(blocks, index) > 0:
            return "busy"
        return "idle"

    def _sweep(self, size, use_count):
        """Drops the storages of ``size`` that left the pool's control; returns the index of an
        idle one, or None."""
        blocks = self._blocks.setdefault(size, [])
        idle = None
        index = 0
        while index < len(blocks):
            state = self._state(blocks, index, size, use_count)
            if state == "gone":
                del blocks[index]
                continue
            if state == "idle" and idle is None:
                idle = index
            index += 1
        return idle

    def tensor(self, shape, dtype, nbytes):
        """A contiguous torch tensor of ``shape`` and ``dtype`` on a pooled, resizable storage."""
        import torch
        size = _rounded(nbytes)
        use_count = torch._C._storage_Use_Count
        with self._lock:
            idle = self._sweep(size, use_count)
            if idle is not None:
                return torch.empty(0, dtype=dtype).set_(self._blocks[size][idle], 0, shape)
            storage = torch.empty(size, dtype=torch.uint8).untyped_storage()
            if size >= _HUGE_PAGE:
                _advise_huge_pages(storage.data_ptr(), size)
            self._blocks[size].append(storage)
            self._trim(use_count)
            return torch.empty(0, dtype=dtype).set_(storage, 0, shape)

    def _idle_indices(self, use_count):
        """(size, index) of every idle storage, oldest first within a size."""
        return [(size, index) for size, blocks in self._blocks.items() for index in range(len(blocks))
                if self._state(blocks, index, size, use_count) == "idle"]

    def _idle_bytes(self, use_count):
        return sum(size for size, _ in self._idle_indices(use_count))

    def _trim(self, use_count):
        """Drops idle storages, oldest first, while the idle ones exceed the limit."""
        idle = self._idle_indices(use_count)
        excess = sum(size for size, _ in idle) - self._cache.limit
        dropped = []
        for size, index in idle:
            if excess <= 0:
                break
            excess -= size
            dropped.append((size, index))
        for size, index in reversed(dropped):      # later indices first: earlier ones stay valid
            del self._blocks[size][index]

    @property
    def cached_bytes(self):
        """Bytes of the storages only the pool holds, ready for the next result."""
        torch = sys.modules.get("torch")
        if torch is None:
            return 0
        with self._lock:
            return self._idle_bytes(torch._C._storage_Use_Count)

    def empty(self):
        """Forget every storage: idle ones are freed now, the others when their tensors go."""
        with self._lock:
            self._blocks = {}
