# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""pybloom-live's ``BloomFilter`` and ``ScalableBloomFilter``, on bloomery's filters.

What pybloom-live (https://github.com/joseph-fox/python-bloomfilter) does and these do too:

- ``BloomFilter(capacity, error_rate)`` holds at most ``capacity`` keys: ``add`` raises
  ``IndexError("BloomFilter is at capacity")`` once ``count`` new keys have been added, checked before
  each key (a duplicate included), so crawler code that rotates filters on that error rotates.
- ``count`` and ``len()`` are the keys added that were new (``add(key, skip_check=True)`` counts its
  key without looking); ``error_rate`` is the rate asked for (``predicted_error_rate`` is what the
  geometry predicts at ``capacity``, at most that); a bad capacity or rate is ``ValueError``.
- ``tofile``/``fromfile`` keep both, as pybloom-live's files do: a ``BloomFilter``'s file is
  pybloom-live's 40-byte header (``<dQQQQ``: error_rate, num_slices, bits_per_slice, capacity,
  count) followed by bloomery's file where pybloom-live's bits would be (``bits_per_slice`` 0: no
  pybloom bits follow, so pybloom-live refuses the file rather than misread it). A file of
  bloomery's format alone (``save``, ``tobytes``, earlier versions' ``tofile``) still loads, with the
  predicted rate and the count estimated from the bits.
- ``ScalableBloomFilter`` grows x4 by default (``mode=LARGE_SET_GROWTH``) and names it ``scale``;
  ``filters`` lists its stages that hold keys (read-only views); a union of another mode, initial
  capacity or rate is ``ValueError`` with pybloom-live's message, and two that both grew unite.

Everything else is the C++ kind's (``BlockedFilter``, ``ScalableFilter``): their keys, batches,
files and options. The differences that remain are listed in docs/PYTHON.md.

pybloom-live's own files (its hashes, its bits) are another format: ``BloomFilter.fromfile`` and
``ScalableBloomFilter.fromfile`` read them as ``PybloomLiveBloomFilter`` and
``PybloomLiveScalableBloomFilter``, which answer, add and write as pybloom-live 4.0 does, and
``MigratingFilter`` answers from such a file while new keys go into a bloomery filter.
"""

import struct as _struct
from itertools import islice as _islice

from ._native import BlockedFilter, FormatError, ScalableFilter

_AT_CAPACITY = "BloomFilter is at capacity"
# An iterable of unknown length past capacity is inserted in lists of at most this many keys.
_CHUNK = 1 << 16
# pybloom-live's BloomFilter.FILE_FMT: error_rate, num_slices, bits_per_slice, capacity, count.
_PYBLOOM_HEADER = _struct.Struct("<dQQQQ")
# The first bytes of every bloomery file (docs/FORMAT.md). Read as pybloom-live's error_rate (a
# little-endian double) they are about 2^406, never a rate in (0, 1): the two cannot be confused.
_BLOOMERY_MAGIC = b"BLOOMERY"


class _Operators:
    """pybloom-live's operators: ``|`` is ``union``, and ``copy.copy``/``copy.deepcopy`` are
    ``copy`` (a filter holds no references). ``&`` is ``_Intersects``'."""

    def __or__(self, other):
        return self.union(other)

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()


class _Intersects(_Operators):
    """``&`` is ``intersection``, for the fixed-size filters that have one."""

    def __and__(self, other):
        return self.intersection(other)


class _LoadsAsThisClass:
    """``load``, ``frombytes`` and ``fromfile`` of the C++ kind (the class's ``_cpp_kind``),
    answering the filter as this class (``_from_native``), as pybloom-live's answer its own."""

    @classmethod
    def load(cls, path, **options):
        """The C++ kind's ``load``, as this class. bloomery's file keeps neither a
        ``BloomFilter``'s ``count`` nor the rate asked for: ``count`` is the keys estimated from
        the bits (at most ``capacity``) and ``error_rate`` the predicted one (``tofile`` keeps
        both)."""
        return cls._from_native(cls._cpp_kind.load(path, **options))

    @classmethod
    def frombytes(cls, data, **options):
        """The C++ kind's ``frombytes``, as this class (as ``load``)."""
        return cls._from_native(cls._cpp_kind.frombytes(data, **options))

    @classmethod
    def fromfile(cls, f, n=-1):
        """The C++ kind's ``fromfile``, as this class (each class reads pybloom-live's: see
        there)."""
        return cls._from_native(cls._cpp_kind.fromfile(f, n))


class BloomFilter(_Intersects, _LoadsAsThisClass, BlockedFilter):
    """pybloom-live's fixed-capacity filter: a ``BlockedFilter`` that refuses key ``capacity + 1``.

    ``BloomFilter(capacity, error_rate=0.001, **options)``; options as ``BlockedFilter``'s.
    """

    _cpp_kind = BlockedFilter

    def __init__(self, capacity, error_rate=0.001, **options):
        # pybloom-live's checks and messages, before pybind11 turns a negative int into TypeError.
        if not 0 < error_rate < 1:
            raise ValueError("Error_Rate must be between 0 and 1.")
        if not capacity > 0:
            raise ValueError("Capacity must be > 0")
        super().__init__(capacity, error_rate, **options)
        self._error_rate = error_rate

    @property
    def error_rate(self):
        """The false positive rate asked for at ``capacity`` keys (pybloom-live's meaning)."""
        return self._error_rate

    @property
    def predicted_error_rate(self):
        """The rate this geometry predicts once ``capacity`` keys are in (at most ``error_rate``)."""
        return BlockedFilter.error_rate.__get__(self)

    def __len__(self):
        """``count``: the keys added that were new. ``BlockedFilter.__len__(f)`` estimates them
        from the bits instead."""
        return self.count

    # add(key, skip_check=False) -> bool: True if ``key`` was already present. IndexError once
    # ``count`` reaches ``capacity`` (checked first, so a duplicate is refused too).
    # ``skip_check=True``: the key is counted as new and False returned, without looking
    # (pybloom-live's meaning). In C (src/hot_calls.h, PybloomAddMethod): a Python method here
    # cost ~4x BlockedFilter.add per key.
    add = BlockedFilter._pybloom_add
    # The keys added that were new (pybloom-live's ``count``), kept in C beside the filter for add.
    count = BlockedFilter._pybloom_count

    def add_many(self, keys, *, present=False):
        """Adds every key in order, as ``add`` would one by one: the keys before the one that finds
        the filter at capacity are in, then IndexError. Returns how many were new; with
        ``present=True``, a NumPy bool array in ``add``'s sense (True: the key was already
        present). Batches that fit in the room left run as ``BlockedFilter.add_many`` (GIL
        released)."""
        try:
            size = len(keys)
        except TypeError:
            size = None
        if size is not None and size <= self.capacity - self.count:
            return self._add_piece(keys, present)
        # Past capacity, or of unknown length: pieces no longer than the room left, so count can
        # never pass capacity, and a key left over once it is reached is refused as add() refuses it.
        # A 1-D buffer is sliced in place; anything else is read in lists.
        take = _pieces(keys)
        answers = []
        added = 0
        while True:
            room = self.capacity - self.count
            piece = take(max(room, 1))
            if piece is None:
                if not present:
                    return added
                import numpy
                return numpy.concatenate(answers) if answers else numpy.zeros(0, dtype=bool)
            if room <= 0:
                raise IndexError(_AT_CAPACITY)
            answer = self._add_piece(piece, present)
            if present:
                answers.append(answer)
            else:
                added += answer

    def _add_piece(self, keys, present):
        # BlockedFilter.add_many, with count kept: the keys that were new.
        if not present:
            new = BlockedFilter.add_many(self, keys)
            self.count += new
            return new
        answers = BlockedFilter.add_many(self, keys, present=True)
        self.count += int(answers.size - answers.sum())
        return answers

    def update(self, keys):
        """Adds every key of ``keys`` (as ``add_many``, returning None like ``set.update``)."""
        self.add_many(keys)

    def _check_same(self, other, message):
        # pybloom-live's check; a BlockedFilter (no asked rate) is left to the library's.
        if isinstance(other, BloomFilter) and (self.capacity != other.capacity
                                               or self._error_rate != other._error_rate):
            raise ValueError(f"{message} capacity and error rate")

    def _adopt(self, native, count, error_rate):
        """A BloomFilter of the C++ filter ``native`` (a BlockedFilter) with pybloom's state."""
        result = type(self).__new__(type(self))
        BlockedFilter.__setstate__(result, BlockedFilter.__getstate__(native))
        result.count = count
        result._error_rate = error_rate
        return result

    def copy(self):
        """An independent copy, ``count`` included."""
        return self._adopt(BlockedFilter.copy(self), self.count, self._error_rate)

    def union(self, other):
        """A new filter of the keys of either (``|``); it keeps this one's ``count``, as
        pybloom-live's does. ValueError, with pybloom's message, for another capacity or rate."""
        self._check_same(other, "Unioning filters requires both filters to have both the same")
        return self._adopt(BlockedFilter.union(self, other), self.count, self._error_rate)

    def intersection(self, other):
        """A new filter of the keys that may be in both (``&``); this one's ``count``."""
        self._check_same(other, "Intersecting filters requires both filters to have equal")
        return self._adopt(BlockedFilter.intersection(self, other), self.count, self._error_rate)

    def __getstate__(self):
        return (BlockedFilter.__getstate__(self), self.count, self._error_rate)

    def __setstate__(self, state):
        native, count, error_rate = state
        BlockedFilter.__setstate__(self, native)
        self.count = count
        self._error_rate = error_rate

    def tofile(self, f):
        """Writes pybloom-live's header (the rate asked for and ``count`` included), then the
        filter's bloomery file, to the binary file object ``f``; ``fromfile`` reads it back."""
        image = BlockedFilter.tobytes(self)
        f.write(_PYBLOOM_HEADER.pack(self._error_rate, self.hashes, 0, self.capacity, self.count))
        f.write(image)

    @classmethod
    def fromfile(cls, f, n=-1):
        """Reads a filter from the binary file object ``f`` (its next ``n`` bytes; all that is left
        if ``n`` <= 0), whichever of these it is:

        - written by this class's ``tofile`` (pybloom-live's header, then bloomery's file): this
          class, ``error_rate`` and ``count`` as they were;
        - bloomery's file alone (``save``, ``tobytes``): this class, as ``load`` reads it;
        - written by pybloom-live 4.0's ``BloomFilter.tofile``: a ``PybloomLiveBloomFilter``,
          which answers, adds and writes as pybloom-live does (not this class: see there).

        Anything else is ``bloomery.FormatError``, naming what the bytes are where it can."""
        data = f.read() if n <= 0 else f.read(n)
        kind = _file_kind(data[:_SNIFF_BYTES])
        if kind == "bloomery":
            return cls._from_native(cls._cpp_kind.frombytes(data))
        if kind == "tofile":
            return cls._from_tofile(data)
        if kind == "pybloom":
            return PybloomLiveBloomFilter.frombytes(data)
        raise _name_foreign(data, "a BloomFilter file (bloomery's, BloomFilter.tofile()'s or "
                                  "pybloom-live's)")

    @classmethod
    def _from_tofile(cls, data, **options):
        # tofile's file: pybloom-live's 40-byte header (bits_per_slice 0), then bloomery's file.
        header, image = data[:_PYBLOOM_HEADER.size], data[_PYBLOOM_HEADER.size:]
        error_rate, hashes, _, capacity, count = _PYBLOOM_HEADER.unpack(header)
        native = cls._cpp_kind.frombytes(image, **options)
        if not (0 < error_rate < 1 and hashes == native.hashes and capacity == native.capacity
                and count <= capacity):
            raise FormatError(
                f"BloomFilter file: its pybloom header (error_rate {error_rate!r}, num_slices "
                f"{hashes}, capacity {capacity}, count {count}) does not describe the filter "
                f"that follows (hashes {native.hashes}, capacity {native.capacity})")
        return cls._from_native(native, count, error_rate)

    @classmethod
    def _from_native(cls, native, count=None, error_rate=None):
        # Unless given, as bloomery's file tells them: the count is the estimate from the bits
        # (at most capacity), the rate the predicted one.
        result = cls.__new__(cls)
        BlockedFilter.__setstate__(result, BlockedFilter.__getstate__(native))
        if count is None:
            count = min(BlockedFilter.__len__(native), native.capacity)
        result.count = count
        result._error_rate = (BlockedFilter.error_rate.__get__(native) if error_rate is None
                              else error_rate)
        return result

    def __repr__(self):
        return (f"<bloomery.BloomFilter capacity={self.capacity} error_rate={self._error_rate} "
                f"count={self.count}>")


def _pieces(keys):
    """take(n) -> the next at most n keys of ``keys`` (a slice of a 1-D buffer, or a list), or None
    once there are none."""
    try:
        view = memoryview(keys)
    except TypeError:
        view = None
    if view is not None and view.ndim == 1:
        position = 0

        def take_view(n):
            nonlocal position
            if position >= len(view):
                return None
            piece = view[position:position + n]
            position += len(piece)
            return piece

        return take_view
    iterator = iter(keys)

    def take_list(n):
        piece = list(_islice(iterator, min(n, _CHUNK)))
        return piece or None

    return take_list


class ScalableBloomFilter(_Operators, _LoadsAsThisClass, ScalableFilter):
    """pybloom-live's growing filter: a ``ScalableFilter`` that grows x4 by default.

    ``ScalableBloomFilter(initial_capacity=100, error_rate=0.001, mode=LARGE_SET_GROWTH,
    **options)``; options as ``ScalableFilter``'s.
    """

    _cpp_kind = ScalableFilter

    def __init__(self, initial_capacity=100, error_rate=0.001,
                 mode=ScalableFilter.LARGE_SET_GROWTH, **options):
        super().__init__(initial_capacity, error_rate, mode, **options)

    @property
    def scale(self):
        """The growth factor (pybloom-live's name for ``mode``)."""
        return self.mode

    @property
    def filters(self):
        """pybloom-live's list of the chain's filters, oldest first: a read-only view of each stage
        that holds keys (pybloom-live makes its first filter at the first add, so a new filter
        lists none). Each has ``capacity``, ``count`` (= ``len()``), ``error_rate`` (its share of
        the chain's), ``num_bits`` and ``num_slices`` (its hashes); keys go in through this
        filter."""
        stages = (_Stage(*self._stage(i)) for i in range(self.stages))
        return [stage for stage in stages if stage.count]

    def union(self, other):
        """A new filter of the keys of either (``|``). Stages are ORed where the union fits them and
        kept side by side where it does not, so two filters that both grew unite; the bound the
        result keeps is its ``planned_error_rate``. ValueError, with pybloom-live's message, for
        another mode, initial capacity or error rate."""
        if isinstance(other, ScalableFilter) and (self.mode != other.mode
                                                  or self.initial_capacity != other.initial_capacity
                                                  or self.error_rate != other.error_rate):
            raise ValueError("Unioning two scalable bloom filters requires both filters to have "
                             "both the same mode, initial capacity and error rate")
        return self._from_native(ScalableFilter.union(self, other))

    def copy(self):
        """An independent copy."""
        return self._from_native(ScalableFilter.copy(self))

    @classmethod
    def fromfile(cls, f, n=-1):
        """Reads a filter from the binary file object ``f`` (its next ``n`` bytes if ``n`` >= 0):
        bloomery's file (``tofile``'s, ``save``'s), as this class; or pybloom-live 4.0's
        ``ScalableBloomFilter`` file, exactly its bytes, as a ``PybloomLiveScalableBloomFilter``
        that answers, adds, grows and writes as pybloom-live does (not this class: see there).
        Anything else is ``bloomery.FormatError``."""
        if n >= 0:
            data = f.read(n)
            if data[:len(_BLOOMERY_MAGIC)] == _BLOOMERY_MAGIC:
                return cls._from_native(cls._cpp_kind.frombytes(data))
            return PybloomLiveScalableBloomFilter.frombytes(data)
        head = f.read(len(_BLOOMERY_MAGIC))
        if head == _BLOOMERY_MAGIC:
            return cls._from_native(cls._cpp_kind.frombytes(head + f.read()))
        return PybloomLiveScalableBloomFilter._read(_read_after(head, f.read))

    @classmethod
    def _from_native(cls, native):
        # The C++ calls answer ScalableFilters: the same chain, as this class (pybloom-live's
        # union, copy and fromfile answer its own class, which users go on calling filters on).
        result = cls.__new__(cls)
        ScalableFilter.__setstate__(result, ScalableFilter.__getstate__(native))
        return result


class _Stage:
    """One stage of a ScalableBloomFilter as pybloom-live's ``filters`` lists it (read-only)."""

    __slots__ = ("capacity", "count", "num_bits", "num_slices", "error_rate")

    def __init__(self, capacity, count, num_bits, num_slices, error_rate):
        self.capacity = capacity
        self.count = count
        self.num_bits = num_bits
        self.num_slices = num_slices
        self.error_rate = error_rate

    def __len__(self):
        return self.count

    def __repr__(self):
        return (f"<bloomery stage capacity={self.capacity} count={self.count} "
                f"error_rate={self.error_rate:g}>")


# ---------------------------------------------------------------------------------------------
# pybloom-live 4.0's own files (https://github.com/joseph-fox/python-bloomfilter, pybloom.py at
# 089f006, the 4.0.0 release line), read, answered, grown and written back in its format.

# pybloom-live's ScalableBloomFilter.FILE_FMT (scale, ratio, initial_capacity, error_rate) and
# the number of its filters that follows: 32 bytes.
_PYBLOOM_SCALABLE_HEADER = _struct.Struct("<idQdl")
_PYBLOOM_LENGTH = _struct.Struct("<Q")
# The hash make_hashfuncs takes for a key's slice integers: the first whose digest holds more
# bits than the bound, else xxh128 (XXH3-128, seed 0, big-endian digest).
_PYBLOOM_HASHES = (("sha512", 384), ("sha384", 256), ("sha256", 160), ("sha1", 128))
# pybloom-live's tightening ratio: stage i + 1's rate is stage i's times this (in its files too).
_PYBLOOM_RATIO = 0.9


def _pybloom_key(key):
    """The bytes pybloom-live 4.0.0 hashes for ``key``: a ``str``'s UTF-8, and for anything else
    the UTF-8 of ``str(key)`` (so ``7`` is hashed as ``"7"`` and ``b"k"`` as the text ``b'k'``)."""
    return key.encode("utf-8") if isinstance(key, str) else str(key).encode("utf-8")


def _pybloom_geometry(capacity, error_rate):
    """pybloom-live's (num_slices, bits_per_slice) for ``capacity`` keys at ``error_rate``:
    k = ceil(log2(1/p)) slices of ceil(n |ln p| / (k ln^2 2)) bits, in its floating-point steps."""
    import math
    slices = int(math.ceil(math.log(1.0 / error_rate, 2)))
    bits_per_slice = int(math.ceil((capacity * abs(math.log(error_rate)))
                                   / (slices * (math.log(2) ** 2))))
    return slices, bits_per_slice


_probes_cache = {}


def _probes(slices, bits_per_slice):
    """(contains(bits, key_bytes), add(bits, key_bytes), the hash's name) for filters of
    ``slices`` slices of ``bits_per_slice`` bits: pybloom-live 4.0's ``make_hashfuncs`` and its
    bit layout. ``add`` sets the key's bits in the bytearray ``bits`` and answers whether all were
    set already. Shared by every filter of that geometry.

    Each slice takes one unsigned integer of a digest modulo ``bits_per_slice``: 16-bit while a
    slice has fewer than 2^15 bits, 32-bit below 2^31, else 64-bit, read little-endian (pybloom
    reads them in the machine's order: little-endian on every machine it runs on in practice); it
    picks the smallest hash that holds every slice's integer in one digest (xxh128, then sha1,
    sha256, sha384, sha512), else sha512 digests one after another. Digest i hashes salt i + the
    key, salt i being the digest of i's 4 little-endian bytes. Bit j of the filter (slice j //
    bits_per_slice) is bit j % 8 of byte j // 8."""
    found = _probes_cache.get((slices, bits_per_slice))
    if found is not None:
        return found
    code, width = (("Q", 8) if bits_per_slice >= 1 << 31 else
                   ("I", 4) if bits_per_slice >= 1 << 15 else ("H", 2))
    name = next((name for name, bound in _PYBLOOM_HASHES if 8 * width * slices > bound), "xxh128")
    if name == "xxh128":
        from ._native import _xxh128_digest
        per_digest = 16 // width

        def salted(salt):
            prefix = _xxh128_digest(salt)
            return lambda data: _xxh128_digest(prefix + data)
    else:
        import hashlib
        new = getattr(hashlib, name)
        per_digest = new().digest_size // width

        def salted(salt):
            # pybloom-live's way, and the fastest: a state that has hashed the salt, copied.
            state = new(new(salt).digest())

            def digest(data):
                h = state.copy()
                h.update(data)
                return h.digest()
            return digest
    unpack = _struct.Struct(f"<{per_digest}{code}").unpack
    modulus = bits_per_slice
    # One (digest, the offsets of its slices) a salt; zip stops at the last slice, so a last
    # digest's surplus integers go unused. A key's digests are computed only as far as needed.
    rounds = tuple((salted(_struct.pack("<I", n)),
                    range(start * bits_per_slice, min(start + per_digest, slices) * bits_per_slice,
                          bits_per_slice))
                   for n, start in enumerate(range(0, slices, per_digest)))

    def contains(bits, data):
        for digest, offsets in rounds:
            for offset, value in zip(offsets, unpack(digest(data))):
                i = offset + value % modulus
                if not bits[i >> 3] >> (i & 7) & 1:
                    return False
        return True

    def add(bits, data):
        present = True
        for digest, offsets in rounds:
            for offset, value in zip(offsets, unpack(digest(data))):
                i = offset + value % modulus
                byte = bits[i >> 3]
                mask = 1 << (i & 7)
                if not byte & mask:
                    bits[i >> 3] = byte | mask
                    present = False
        return present

    found = _probes_cache[(slices, bits_per_slice)] = (contains, add, name)
    return found


# What _file_kind reads: pybloom-live's 40-byte header and the magic a tofile() file has after it.
_SNIFF_BYTES = _PYBLOOM_HEADER.size + len(_BLOOMERY_MAGIC)


def _file_kind(head, size=None):
    """What the file whose first bytes are ``head`` (_SNIFF_BYTES of them, or all there are) is:
    "bloomery", "tofile" (BloomFilter.tofile's: pybloom-live's header, then bloomery's file),
    "pybloom" or "pybloom-scalable" (pybloom-live's files), or None. By the headers (and, given the
    file's ``size``, the size they imply); the readers check the rest. lib/format/format_codec.cc's
    NameForeignFile tells the same files apart for the C++ reader's messages."""
    if head[:len(_BLOOMERY_MAGIC)] == _BLOOMERY_MAGIC:
        return "bloomery"
    if head[_PYBLOOM_HEADER.size:_SNIFF_BYTES] == _BLOOMERY_MAGIC:
        return "tofile"
    if len(head) >= _PYBLOOM_HEADER.size:
        error_rate, slices, bits_per_slice, capacity, _ = _PYBLOOM_HEADER.unpack_from(head)
        if (0 < error_rate < 1 and slices >= 1 and bits_per_slice >= 1 and capacity >= 1
                and (size is None
                     or size == _PYBLOOM_HEADER.size + (slices * bits_per_slice + 7) // 8)):
            return "pybloom"
    if len(head) >= _PYBLOOM_SCALABLE_HEADER.size:
        scale, ratio, initial_capacity, error_rate, stages = \
            _PYBLOOM_SCALABLE_HEADER.unpack_from(head)
        if (scale >= 1 and 0 < ratio < 1 and initial_capacity >= 1 and 0 < error_rate < 1
                and stages >= 0
                and (size is None or _PYBLOOM_SCALABLE_HEADER.size + 8 * stages <= size)):
            return "pybloom-scalable"
    return None


def _load_file(path, options):
    """bloomery.load's reader for the files that are not bloomery's file alone: BloomFilter.tofile's
    (a BloomFilter; options as BloomFilter.frombytes) and pybloom-live's (PybloomLiveBloomFilter,
    PybloomLiveScalableBloomFilter; no options). None for any other: the library reads bloomery's
    files and names or refuses the rest."""
    import os
    try:
        with open(os.fspath(path), "rb") as f:
            head = f.read(_SNIFF_BYTES)
            kind = _file_kind(head, os.fstat(f.fileno()).st_size)
            if kind in (None, "bloomery"):
                return None
            data = head + f.read()
    except (OSError, TypeError):
        return None  # the library's load says why, as for any file
    if kind == "tofile":
        return BloomFilter._from_tofile(data, **options)
    if options:
        raise TypeError(f"bloomery.load: pybloom-live's file takes no options (got "
                        f"{', '.join(sorted(options))})")
    if kind == "pybloom":
        return PybloomLiveBloomFilter.frombytes(data)
    return PybloomLiveScalableBloomFilter.frombytes(data)


def _read_after(head, read):
    """A read(size=-1) that answers the bytes ``head`` before those of ``read``."""
    pending = [head]

    def read_on(size=-1):
        first = pending.pop() if pending else b""
        if size is None or size < 0:
            return first + read()
        if len(first) >= size:
            pending.append(first[size:])
            return first[:size]
        return first + read(size - len(first))

    return read_on


def _read_exactly(read, size, what):
    # In pieces, so a size that a damaged header claims is never allocated before the bytes exist.
    pieces = []
    left = size
    while left:
        piece = read(min(left, 1 << 20))
        if not piece:
            raise FormatError(f"{what}: the file ends after {size - left} of its {size} bytes")
        pieces.append(piece)
        left -= len(piece)
    return b"".join(pieces)


def _name_foreign(data, what):
    """FormatError for bytes that are not ``what``: the library's own words on what they are
    (the C++ reader names pybloom-live's files and BloomFilter.tofile's)."""
    from ._native import info_bytes
    try:
        info_bytes(bytes(data))
    except FormatError as error:
        return FormatError(f"not {what}: {error}")
    return FormatError(f"not {what}: a bloomery filter file")


class PybloomLiveBloomFilter(_Intersects):
    """A filter in pybloom-live 4.0's format: its ``BloomFilter`` file, read, added to and written
    back. ``bloomery.BloomFilter.fromfile`` answers one for a file pybloom-live's ``tofile()``
    wrote; ``PybloomLiveBloomFilter(capacity, error_rate)`` makes a new one in that format.

    It hashes and lays out bits as pybloom-live does (``num_slices`` slices of ``bits_per_slice``
    bits, little-endian bit order; sha512/sha384/sha256/sha1 or xxh128 as pybloom picks them by
    the bits its slices need), so it gives pybloom-live's answers, false positives included, and
    its files are pybloom-live's: pybloom-live's ``fromfile`` reads them. Keys are hashed as
    pybloom-live 4.0.0 hashes them: a ``str`` as UTF-8, anything else as the UTF-8 of ``str(key)``
    (``b"k"`` as the text ``b'k'``: a bytes key is not its bytes, unlike bloomery's filters).

    What it has: ``add(key, skip_check=False)`` (True if already present; ``IndexError`` once
    ``count`` reaches ``capacity``), ``key in f``, ``count``/``len()``, ``capacity``,
    ``error_rate`` (as asked), ``num_slices``, ``bits_per_slice``, ``num_bits``, ``tofile``,
    ``fromfile``, ``copy``, ``union``/``|`` and ``intersection``/``&`` with a filter of the same
    capacity and rate (they keep this filter's ``count``), pickling. What it lacks of bloomery's
    filters: batches (``add_many``, ``contains_many``), ``save``/``load``/``map``, concurrency, the
    CLI and the C++ speed (it is Python: a few microseconds per key). It is not a
    ``bloomery.BloomFilter``: that is the C++ filter, whose keys hash differently. To move to one,
    see ``MigratingFilter``.
    """

    def __init__(self, capacity, error_rate=0.001):
        if not 0 < error_rate < 1:
            raise ValueError("Error_Rate must be between 0 and 1.")
        if not capacity > 0:
            raise ValueError("Capacity must be > 0")
        slices, bits_per_slice = _pybloom_geometry(capacity, error_rate)
        self._setup(error_rate, slices, bits_per_slice, capacity, 0,
                    bytearray((slices * bits_per_slice + 7) // 8))

    def _setup(self, error_rate, slices, bits_per_slice, capacity, count, bits):
        self.error_rate = error_rate
        self.num_slices = slices
        self.bits_per_slice = bits_per_slice
        self.capacity = capacity
        self.count = count
        self._bits = bits
        self._probe_contains, self._probe_add, self.hash_name = _probes(slices, bits_per_slice)

    @property
    def num_bits(self):
        """``num_slices * bits_per_slice``."""
        return self.num_slices * self.bits_per_slice

    def __len__(self):
        return self.count

    def __contains__(self, key):
        return self._probe_contains(
            self._bits, key.encode("utf-8") if key.__class__ is str else _pybloom_key(key))

    def _contains(self, data):
        return self._probe_contains(self._bits, data)

    def add(self, key, skip_check=False):
        """Adds ``key``; True if it was already present (all its bits set), else False.
        ``IndexError("BloomFilter is at capacity")`` once ``count`` has reached ``capacity``
        (released pybloom-live 4.0.0 refused only past ``capacity + 1``; its current source and
        ``bloomery.BloomFilter`` refuse here). ``skip_check=True`` counts the key as new without
        looking."""
        if self.count >= self.capacity:
            raise IndexError(_AT_CAPACITY)
        # _add, inlined: this is the per-key call.
        present = self._probe_add(
            self._bits, key.encode("utf-8") if key.__class__ is str else _pybloom_key(key))
        if skip_check or not present:
            self.count += 1
            return False
        return True

    def _add(self, data, skip_check):
        present = self._probe_add(self._bits, data)
        if skip_check or not present:
            self.count += 1
            return False
        return True

    def _same(self, error_rate, slices, bits_per_slice, capacity, count, bits):
        result = type(self).__new__(type(self))
        result._setup(error_rate, slices, bits_per_slice, capacity, count, bits)
        return result

    def copy(self):
        """An independent copy, ``count`` included (pybloom-live's copy starts its count at 0)."""
        return self._same(self.error_rate, self.num_slices, self.bits_per_slice, self.capacity,
                          self.count, bytearray(self._bits))

    def _combine(self, other, operation, message):
        if not isinstance(other, PybloomLiveBloomFilter):
            raise TypeError(f"a pybloom-live-format filter combines only with another, not "
                            f"{type(other).__name__}: their bits are hashed differently")
        if self.capacity != other.capacity or self.error_rate != other.error_rate:
            raise ValueError(message)
        size = len(self._bits)
        mine = int.from_bytes(self._bits, "little")
        theirs = int.from_bytes(other._bits, "little")
        bits = bytearray(operation(mine, theirs).to_bytes(size, "little"))
        return self._same(self.error_rate, self.num_slices, self.bits_per_slice, self.capacity,
                          self.count, bits)

    def union(self, other):
        """The filter of the keys of either (``|``), with this one's ``count``. ValueError, with
        pybloom-live's message, for another capacity or rate."""
        return self._combine(other, int.__or__, "Unioning filters requires both filters to have "
                             "both the same capacity and error rate")

    def intersection(self, other):
        """The filter of the keys that may be in both (``&``), with this one's ``count``."""
        return self._combine(other, int.__and__, "Intersecting filters requires both filters to "
                             "have equal capacity and error rate")

    def __reduce__(self):
        return (_pybloom_from_bytes, (type(self), self.tobytes()))

    def tobytes(self):
        """The bytes ``tofile`` writes: pybloom-live's file."""
        return _PYBLOOM_HEADER.pack(self.error_rate, self.num_slices, self.bits_per_slice,
                                    self.capacity, self.count) + bytes(self._bits)

    def tofile(self, f):
        """Writes pybloom-live's file to the binary file object ``f``: its 40-byte header
        (``<dQQQQ``: error_rate, num_slices, bits_per_slice, capacity, count), then the bits,
        ``ceil(num_bits / 8)`` bytes, bit i in byte i // 8 at 1 << (i % 8)."""
        f.write(_PYBLOOM_HEADER.pack(self.error_rate, self.num_slices, self.bits_per_slice,
                                     self.capacity, self.count))
        f.write(self._bits)

    @classmethod
    def fromfile(cls, f, n=-1):
        """Reads pybloom-live's ``BloomFilter`` file from the binary file object ``f`` (its next
        ``n`` bytes; all that is left if ``n`` <= 0, as pybloom-live reads). FormatError for
        anything else."""
        return cls.frombytes(f.read() if n <= 0 else f.read(n))

    @classmethod
    def frombytes(cls, data):
        """The filter of pybloom-live's ``BloomFilter`` file ``data`` (``tobytes``'s bytes)."""
        what = "a pybloom-live BloomFilter file"
        if len(data) < _PYBLOOM_HEADER.size:
            raise FormatError(f"{what} starts with a 40-byte header; this is {len(data)} bytes")
        error_rate, slices, bits_per_slice, capacity, count = _PYBLOOM_HEADER.unpack_from(data)
        if not (0 < error_rate < 1 and slices >= 1 and bits_per_slice >= 1 and capacity >= 1):
            raise _name_foreign(data, what)
        size = (slices * bits_per_slice + 7) // 8
        if len(data) - _PYBLOOM_HEADER.size != size:
            raise FormatError(
                f"{what} of {slices} slices of {bits_per_slice} bits holds {size} bytes of bits "
                f"after its header; this one has {len(data) - _PYBLOOM_HEADER.size}")
        result = cls.__new__(cls)
        result._setup(error_rate, slices, bits_per_slice, capacity, count,
                      bytearray(data[_PYBLOOM_HEADER.size:]))
        return result

    def __repr__(self):
        return (f"<bloomery.PybloomLiveBloomFilter capacity={self.capacity} "
                f"error_rate={self.error_rate} count={self.count} {self.num_slices}x"
                f"{self.bits_per_slice} bits, {self.hash_name}>")


def _pybloom_from_bytes(cls, data):
    return cls.frombytes(data)


class PybloomLiveScalableBloomFilter(_Operators):
    """A filter in pybloom-live 4.0's ``ScalableBloomFilter`` format: a list of
    ``PybloomLiveBloomFilter`` stages, read, added to, grown and written back.
    ``bloomery.ScalableBloomFilter.fromfile`` answers one for a file pybloom-live's ``tofile()``
    wrote; ``PybloomLiveScalableBloomFilter(initial_capacity=100, error_rate=0.001, mode=4)``
    makes a new one.

    As pybloom-live's: a key is present if a stage has it (newest first); a new key goes into the
    newest stage, and once that holds its capacity a stage of ``scale`` times the capacity at
    ``ratio`` (0.9) times the rate is added; the first stage's rate is ``error_rate * ratio``.
    What it has: ``add(key)``, ``key in f``, ``count``/``len()``, ``capacity`` (the stages'),
    ``error_rate``, ``initial_capacity``, ``scale``, ``ratio``, ``filters`` (the stages, to which
    keys may be added as in pybloom-live), ``tofile``/``fromfile``/``tobytes``/``frombytes``,
    ``copy``, pickling, and ``union``/``|`` with a filter of the same mode, initial capacity and
    rate, stage by stage as pybloom-live does (each stage keeps the count of the filter with more
    stages; a stage that both filled holds more keys than planned). What it lacks:
    everything ``PybloomLiveBloomFilter`` lacks, and bloomery's union that never overfills.
    """

    SMALL_SET_GROWTH = 2
    LARGE_SET_GROWTH = 4

    def __init__(self, initial_capacity=100, error_rate=0.001, mode=LARGE_SET_GROWTH):
        if not 0 < error_rate < 1:
            raise ValueError("Error_Rate must be between 0 and 1.")
        if not initial_capacity > 0:
            raise ValueError("Capacity must be > 0")
        if not mode >= 1:
            raise ValueError("mode (the growth factor) must be >= 1")
        self.scale = mode
        self.ratio = _PYBLOOM_RATIO
        self.initial_capacity = initial_capacity
        self.error_rate = error_rate
        self.filters = []

    @property
    def capacity(self):
        """The stages' capacities, summed (0 before the first add, as pybloom-live's)."""
        return sum(stage.capacity for stage in self.filters)

    @property
    def count(self):
        return len(self)

    def __len__(self):
        return sum(stage.count for stage in self.filters)

    def __contains__(self, key):
        data = _pybloom_key(key)
        return any(stage._contains(data) for stage in reversed(self.filters))

    def add(self, key):
        """Adds ``key``; True if it was already present, else False (pybloom-live's)."""
        data = _pybloom_key(key)
        if any(stage._contains(data) for stage in reversed(self.filters)):
            return True
        if not self.filters:
            stage = PybloomLiveBloomFilter(self.initial_capacity, self.error_rate * self.ratio)
            self.filters.append(stage)
        else:
            stage = self.filters[-1]
            if stage.count >= stage.capacity:
                stage = PybloomLiveBloomFilter(stage.capacity * self.scale,
                                               stage.error_rate * self.ratio)
                self.filters.append(stage)
        stage._add(data, True)
        return False

    def copy(self):
        """An independent copy."""
        result = type(self).__new__(type(self))
        result.__dict__.update(self.__dict__)
        result.filters = [stage.copy() for stage in self.filters]
        return result

    def union(self, other):
        """pybloom-live's union (``|``): stage i of one ORed with stage i of the other, the
        stages of the filter with more following; its counts are that filter's. ValueError, with
        pybloom-live's message, for another mode, initial capacity or rate."""
        if not isinstance(other, PybloomLiveScalableBloomFilter):
            raise TypeError(f"a pybloom-live-format filter combines only with another, not "
                            f"{type(other).__name__}: their bits are hashed differently")
        if (self.scale != other.scale or self.initial_capacity != other.initial_capacity
                or self.error_rate != other.error_rate):
            raise ValueError("Unioning two scalable bloom filters requires both filters to have "
                             "both the same mode, initial capacity and error rate")
        larger, smaller = (self, other) if len(self.filters) > len(other.filters) else (other, self)
        result = larger.copy()
        for i, stage in enumerate(smaller.filters):
            result.filters[i] = larger.filters[i] | stage
        return result

    def __reduce__(self):
        return (_pybloom_from_bytes, (type(self), self.tobytes()))

    def tobytes(self):
        """The bytes ``tofile`` writes: pybloom-live's file."""
        stages = [stage.tobytes() for stage in self.filters]
        return b"".join([_PYBLOOM_SCALABLE_HEADER.pack(self.scale, self.ratio,
                                                       self.initial_capacity, self.error_rate,
                                                       len(stages))]
                        + [_PYBLOOM_LENGTH.pack(len(stage)) for stage in stages] + stages)

    def tofile(self, f):
        """Writes pybloom-live's file to the binary file object ``f``: ``<idQd`` (scale, ratio,
        initial_capacity, error_rate), ``<l`` (the number of stages), a ``<Q`` length per stage,
        then each stage's ``BloomFilter`` file. (pybloom-live seeks back to write the lengths;
        this writes them first, so ``f`` need not seek.)"""
        f.write(self.tobytes())

    @classmethod
    def fromfile(cls, f, n=-1):
        """Reads pybloom-live's ``ScalableBloomFilter`` file from the binary file object ``f``:
        exactly its bytes (the next ``n`` if ``n`` >= 0, which must be all of it)."""
        if n >= 0:
            return cls.frombytes(f.read(n))
        return cls._read(f.read)

    @classmethod
    def frombytes(cls, data):
        """The filter of pybloom-live's ``ScalableBloomFilter`` file ``data``."""
        import io
        stream = io.BytesIO(data)
        result = cls._read(stream.read, data)
        if stream.tell() != len(data):
            raise FormatError(f"a pybloom-live ScalableBloomFilter file of "
                              f"{stream.tell()} bytes is followed by {len(data) - stream.tell()} more")
        return result

    @classmethod
    def _read(cls, read, data=None):
        what = "a pybloom-live ScalableBloomFilter file"
        header = read(_PYBLOOM_SCALABLE_HEADER.size)
        if len(header) == _PYBLOOM_SCALABLE_HEADER.size:
            scale, ratio, initial_capacity, error_rate, stages = \
                _PYBLOOM_SCALABLE_HEADER.unpack(header)
        if (len(header) < _PYBLOOM_SCALABLE_HEADER.size
                or not (scale >= 1 and 0 < ratio < 1 and initial_capacity >= 1
                        and 0 < error_rate < 1 and stages >= 0)):
            raise _name_foreign(header + read() if data is None else data, what)
        lengths = _struct.unpack(f"<{stages}Q",
                                 _read_exactly(read, 8 * stages, f"{what} of {stages} stages"))
        result = cls.__new__(cls)
        result.scale = scale
        result.ratio = ratio
        result.initial_capacity = initial_capacity
        result.error_rate = error_rate
        result.filters = [
            PybloomLiveBloomFilter.frombytes(_read_exactly(read, length, f"{what}, stage {i}"))
            for i, length in enumerate(lengths)]
        return result

    def __repr__(self):
        return (f"<bloomery.PybloomLiveScalableBloomFilter initial_capacity="
                f"{self.initial_capacity} error_rate={self.error_rate} scale={self.scale} "
                f"count={self.count} stages={len(self.filters)}>")


class MigratingFilter:
    """Moves a crawl from a pybloom-live file to a bloomery filter: answers from both, adds to the
    new one. ``MigratingFilter(new, old)``: ``new`` any bloomery filter (e.g.
    ``bloomery.BloomFilter``), ``old`` what ``fromfile`` read from pybloom-live's file.

    A Bloom filter keeps no keys, so pybloom-live's bits cannot be re-hashed into bloomery's: a key
    reaches ``new`` only when it is added again. ``key in m`` is ``key in new or key in old``;
    ``m.add(key)`` adds to ``new`` (never to ``old``) and answers True if either had it. Save
    ``new`` as usual; keep ``old``'s file (read-only) for as long as its keys matter. Where the
    keys themselves are kept (a database of URLs), ``new.update(keys)`` moves them all at once
    and ``old`` can be dropped."""

    def __init__(self, new, old):
        self.new = new
        self.old = old

    def __contains__(self, key):
        return key in self.new or key in self.old

    def add(self, key):
        """Adds ``key`` to ``new``; True if ``new`` or ``old`` already had it."""
        in_old = key in self.old
        return self.new.add(key) or in_old

    def __repr__(self):
        return f"<bloomery.MigratingFilter new={self.new!r} old={self.old!r}>"
