# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""Fast, exact Bloom filters: the bloomery C++ library from Python.

Five kinds, one vocabulary (see each class's docstring):

- ``BlockedFilter``: one 64-byte cache line per key; the default. ``BloomFilter`` is pybloom-live's
  class on it (``capacity`` is a limit: ``IndexError`` past it; see ``bloomery.pybloom``).
- ``ClassicFilter``: k cache lines per key, the fewest bits per key.
- ``ScalableFilter``: grows by ``mode`` (1 to 32768; 2 or 4 usual), total FPR stays bounded.
  ``ScalableBloomFilter`` is pybloom-live's class on it (x4 by default, ``scale``).
- ``CountingFilter``: counters instead of bits, so keys can be removed and counted.
- ``WindowedFilter``: keys expire after a window of adds or of seconds; its files keep the
  window's clock state.

A drop-in for pybloom-live's common calls::

    import bloomery
    seen = bloomery.BloomFilter(capacity=1_000_000, error_rate=0.001)
    if not seen.add("https://example.com/a"):   # add() returns True if ALREADY present
        crawl("https://example.com/a")
    "https://example.com/a" in seen             # True

Keys are ``str`` (hashed as UTF-8), ``bytes`` or any contiguous buffer, or ``int`` in
[0, 2**64 - 1] (hashed as its 8 little-endian bytes, as the C++ library hashes ``uint64_t``).
Anything else is a ``TypeError``: Python's ``hash()`` is salted per process, and a filter saved
by one process must answer the same in another. ``add_many``/``contains_many``/``update`` take any
iterable of keys or a 1-D buffer: integers (a NumPy ``uint64`` array is read in place), or a NumPy
``S``, ``U`` or object column of str and bytes (docs/PYTHON.md, "Columns"), and release the GIL. Files written by ``save``/``tofile``/``tobytes`` are the C++ library's and the ``bloomery``
command-line tool's format; pickling and ``copy`` go through it. (``bloomery.BloomFilter.tofile``,
pybloom-live's API, puts pybloom-live's 40-byte header before it, which keeps the error rate asked
for; its ``fromfile`` reads both, and pybloom-live's own files as ``PybloomLiveBloomFilter``.)
"""

import pkgutil as _pkgutil

# In a build tree the extension sits in the build directory's bloomery/, next to nothing else:
# let the package span both directories. Installed, there is one directory and this is a no-op.
__path__ = _pkgutil.extend_path(__path__, __name__)

from ._native import (  # noqa: E402
    BlockedFilter,
    ClassicFilter,
    CountingFilter,
    FilterFullError,
    FormatError,
    ScalableFilter,
    WindowedFilter,
    __version__,
    hash_key,
    info,
    info_bytes,
)

from .pybloom import BloomFilter, ScalableBloomFilter  # noqa: E402  pybloom-live's classes
from . import pybloom as _pybloom  # noqa: E402
from .pybloom import (  # noqa: E402  pybloom-live's own files
    MigratingFilter,
    PybloomLiveBloomFilter,
    PybloomLiveScalableBloomFilter,
)

# A file or bytes of any kind, read once (AnyFilter::Load), as its kind's class.
from ._native import _load, _loads  # noqa: E402


def load(path, **options):
    """Reads a filter file of any kind (the kind is in its header); options as ``Kind.load``.

    Also the files the pybloom-live classes write and read: ``BloomFilter.tofile``'s
    (pybloom-live's header, then bloomery's file) as a ``BloomFilter`` (options as
    ``BloomFilter.frombytes``), and pybloom-live's own as a ``PybloomLiveBloomFilter`` or
    ``PybloomLiveScalableBloomFilter`` (no options)."""
    try:
        # One open and one read of the header, as the kind's class (the class Kind.load returns).
        return _load(path, **options)
    except FormatError:
        # Not bloomery's file alone: the pybloom-live classes' files are read here, any other is
        # the library's error.
        foreign = _pybloom._load_file(path, options)
        if foreign is None:
            raise
        return foreign


def loads(data, **options):
    """A filter of any kind from the bytes of its file; options as ``Kind.frombytes``."""
    return _loads(data, **options)


__all__ = [
    "BlockedFilter",
    "BloomFilter",
    "ClassicFilter",
    "CountingFilter",
    "FilterFullError",
    "FormatError",
    "MigratingFilter",
    "PybloomLiveBloomFilter",
    "PybloomLiveScalableBloomFilter",
    "ScalableBloomFilter",
    "ScalableFilter",
    "WindowedFilter",
    "hash_key",
    "info",
    "info_bytes",
    "load",
    "loads",
]
