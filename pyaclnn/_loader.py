"""Find and open the native library, by absolute path, saying what was tried when it fails.

Search order (the first that exists and loads wins):

1. ``PYACLNN_LIBRARY``: a path to ``libaclnn.so``, or a colon-separated list of libraries.  A list
   is how real CANN is driven: its symbols are split over ``libascendcl.so`` (runtime),
   ``libnnopbase.so`` (meta API) and ``libopapi.so`` (operators), so each is opened with
   ``RTLD_GLOBAL`` and symbols are then looked up in the global namespace.  A path that does not
   exist is an error (no silent fallback when the user asked for something specific).
2. ``pyaclnn/_lib/libaclnn.so``, bundled in the wheel (``pip install``).
3. ``<source tree>/$ACLNN_BUILD_DIR/lib64/libaclnn.so`` and ``<source tree>/build/lib64/libaclnn.so``
   when the package is used from a checkout (an editable install, ``PYTHONPATH``): the build
   leaves the package itself untouched.
"""

import os

ENV_VAR = "PYACLNN_LIBRARY"
LIBRARY_NAME = "libaclnn.so"

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_SOURCE_TREE = os.path.dirname(_PACKAGE_DIR)


class LibraryNotFoundError(OSError):
    """The native library could not be found or opened; ``tried`` lists (path, reason)."""

    def __init__(self, tried):
        self.tried = list(tried)
        lines = ["pyaclnn could not load the aclnn library. Tried:"]
        lines += ["  %s: %s" % (path, reason) for path, reason in self.tried]
        lines.append("Build it with `make` in the libaclnn source tree and reinstall pyaclnn, or set "
                     "%s to the library path (a colon-separated list for CANN's split libraries, "
                     "e.g. libascendcl.so:libnnopbase.so:libopapi.so)." % ENV_VAR)
        super().__init__("\n".join(lines))


def source_build_dirs():
    """A checkout's build directories, in search order: $ACLNN_BUILD_DIR, then build."""
    dirs = []
    for build_dir in (os.environ.get("ACLNN_BUILD_DIR"), "build"):
        if build_dir:
            path = os.path.join(_SOURCE_TREE, build_dir)
            if path not in dirs:
                dirs.append(path)
    return dirs


def candidate_paths():
    """The default search path (without the environment override), in order."""
    paths = [os.path.join(_PACKAGE_DIR, "_lib", LIBRARY_NAME)]
    paths += [os.path.join(d, "lib64", LIBRARY_NAME) for d in source_build_dirs()]
    return paths


def _open_list(ffi, paths, tried):
    """dlopen every library of a CANN-style split with RTLD_GLOBAL; look symbols up globally."""
    handles = []
    for path in paths:
        if not os.path.exists(path):
            tried.append((path, "no such file (from %s)" % ENV_VAR))
            raise LibraryNotFoundError(tried)
        try:
            handles.append(ffi.dlopen(path, ffi.RTLD_NOW | ffi.RTLD_GLOBAL))
        except OSError as exc:
            tried.append((path, str(exc)))
            raise LibraryNotFoundError(tried)
    lib = ffi.dlopen(None)  # the global namespace now holds every RTLD_GLOBAL library
    return lib, handles


def _warn_if_stale(path, candidates):
    """A bundled copy older than the source tree's build is probably not what a developer wants."""
    import warnings
    newer = [p for p in candidates[candidates.index(path) + 1:]
             if os.path.exists(p) and os.path.getmtime(p) > os.path.getmtime(path) + 1]
    if newer:
        warnings.warn("pyaclnn: using %s, which is older than %s; reinstall pyaclnn (make) or set "
                      "%s to use the new build" % (path, newer[0], ENV_VAR), RuntimeWarning,
                      stacklevel=3)


def load(ffi):
    """Return (lib, description, keep_alive) for the first library that loads.

    ``description`` is the path (or list of paths) used; ``keep_alive`` must be kept referenced
    as long as ``lib`` is used.
    """
    tried = []
    override = os.environ.get(ENV_VAR, "").strip()
    if override:
        paths = [os.path.abspath(os.path.expanduser(p)) for p in override.split(":") if p]
        if len(paths) == 1:
            path = paths[0]
            if not os.path.exists(path):
                tried.append((path, "no such file (from %s)" % ENV_VAR))
                raise LibraryNotFoundError(tried)
            try:
                return ffi.dlopen(path), path, None
            except OSError as exc:
                tried.append((path, str(exc)))
                raise LibraryNotFoundError(tried)
        lib, handles = _open_list(ffi, paths, tried)
        return lib, ":".join(paths), handles

    candidates = candidate_paths()
    for path in candidates:
        if not os.path.exists(path):
            tried.append((path, "no such file"))
            continue
        try:
            lib = ffi.dlopen(path)
            _warn_if_stale(path, candidates)
            return lib, path, None
        except OSError as exc:
            tried.append((path, str(exc)))
    raise LibraryNotFoundError(tried)
