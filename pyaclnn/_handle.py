"""Base class of every object that owns a C handle."""

from ._core import ffi


class Handle:
    """Owns one C object: ``close()`` frees it, ``with`` closes it, ``ffi.gc`` is only a backstop.

    Subclasses call ``self._own(ptr, destroy)`` with the raw cdata pointer and the C destroy
    function.  ``close()`` is idempotent.  ``_forget()`` gives up ownership without freeing (the C
    library freed or took the object, e.g. a consumed executor).  ``_keep`` holds Python objects
    (numpy arrays, device buffers, tensors) that must outlive the C object.
    """

    _ptr = None
    _gc_ptr = None

    def _own(self, ptr, destroy):
        self._ptr = ptr
        self._keep = []
        self._gc_ptr = ffi.gc(ptr, destroy) if destroy is not None else None
        if self._gc_ptr is not None:
            self._ptr = self._gc_ptr

    @property
    def ptr(self):
        """The cffi pointer to pass to lib functions (raises ValueError once closed)."""
        if self._ptr is None:
            raise ValueError("%s is closed" % type(self).__name__)
        return self._ptr

    @property
    def closed(self):
        return self._ptr is None

    def close(self):
        """Free the C object now (safe to call twice)."""
        if self._ptr is None:
            return
        gc_ptr = self._gc_ptr
        self._ptr = None
        self._gc_ptr = None
        if gc_ptr is not None:
            ffi.release(gc_ptr)  # runs the destructor once, and detaches it from the GC
        self._keep = []

    def _forget(self):
        """Stop owning the C object without freeing it."""
        if self._gc_ptr is not None:
            ffi.gc(self._gc_ptr, None)  # detach the backstop destructor
        self._ptr = None
        self._gc_ptr = None
        self._keep = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        state = "closed" if self._ptr is None else "0x%x" % int(ffi.cast("uintptr_t", self._ptr))
        return "<%s %s>" % (type(self).__name__, state)
