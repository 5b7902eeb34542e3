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
        """The C++ kind's ``fromfile``, as this class (``BloomFilter`` reads its own: see there)."""
        return cls._from_native(cls._cpp_kind.fromfile(f, n))


class BloomFilter(_LoadsAsThisClass, BlockedFilter):
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

    def __or__(self, other):
        return self.union(other)

    def __and__(self, other):
        return self.intersection(other)

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

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
        """Reads a filter written by ``tofile`` from the binary file object ``f`` (its next ``n``
        bytes; all that is left if ``n`` < 0), ``error_rate`` and ``count`` as they were. A file of
        bloomery's format alone (written by ``tofile`` before it kept them, or by ``save``/
        ``tobytes``) loads as ``load`` reads it. pybloom-live's own files do not load (its bits
        are other hashes): ``bloomery.FormatError``."""
        data = f.read() if n < 0 else f.read(n)
        if data[:len(_BLOOMERY_MAGIC)] == _BLOOMERY_MAGIC:
            return cls._from_native(cls._cpp_kind.frombytes(data))
        header, image = data[:_PYBLOOM_HEADER.size], data[_PYBLOOM_HEADER.size:]
        if len(header) < _PYBLOOM_HEADER.size or image[:len(_BLOOMERY_MAGIC)] != _BLOOMERY_MAGIC:
            raise FormatError(
                "not a BloomFilter file: neither bloomery's file nor bloomery's tofile() (a "
                "pybloom-live header before bloomery's file); pybloom-live's own files hash keys "
                "differently and cannot be read")
        error_rate, hashes, _, capacity, count = _PYBLOOM_HEADER.unpack(header)
        native = cls._cpp_kind.frombytes(image)
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


class ScalableBloomFilter(_LoadsAsThisClass, ScalableFilter):
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

    def __or__(self, other):
        return self.union(other)

    def copy(self):
        """An independent copy."""
        return self._from_native(ScalableFilter.copy(self))

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

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
