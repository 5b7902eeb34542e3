# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""How the binding turns Python objects into keys, and the errors it gives for bad ones.

The misaligned-buffer tests pass in any build on x86 (a misaligned load there still reads the
right bytes); under .ci/python-sanitizers asan, UBSan turns such a load into a failure.
"""
import datetime
import pickle

import numpy as np
import pytest

import bloomery

KINDS = {
    "blocked": lambda **kw: bloomery.BlockedFilter(50_000, 0.01, **kw),
    "classic": lambda **kw: bloomery.ClassicFilter(50_000, 0.01, **kw),
    "counting": lambda **kw: bloomery.CountingFilter(50_000, 0.01, **kw),
    "scalable": lambda **kw: bloomery.ScalableFilter(1_000, 0.01, **kw),
    "windowed": lambda **kw: bloomery.WindowedFilter(50_000, 0.01, **kw),
}
# More than Batch::kChunk (16384) keys, so that a converted buffer takes several chunks.
N = 40_000


def misaligned_copies(keys):
    """`keys` (a uint64 array) as views that start one byte past an 8-byte boundary: a NumPy view
    of a bytearray, a NumPy view of bytes, memoryview casts of a bytearray and of bytes."""
    raw = b"\0" + keys.tobytes()
    end = 1 + keys.nbytes
    views = {
        "numpy view of bytearray": np.frombuffer(bytearray(raw), np.uint8)[1:].view(np.uint64),
        "numpy view of bytes": np.frombuffer(raw, np.uint64, offset=1),
        "memoryview cast of bytearray": memoryview(bytearray(raw))[1:end].cast("Q"),
        "memoryview cast of bytes": memoryview(raw)[1:end].cast("Q"),
    }
    for name, view in views.items():
        address = np.frombuffer(view, np.uint8).ctypes.data
        assert address % 8 != 0, name  # the test is about misaligned views: check it has them
        assert np.array_equal(np.frombuffer(view, np.uint64), keys), name
    return views


@pytest.mark.parametrize("integer_hash", ["xxh3", "mix"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_misaligned_uint64_buffers_answer_as_their_aligned_copy(kind, integer_hash):
    # Regression: a misaligned uint64 view was handed to the library in place, which loaded its
    # keys as uint64_t (UBSan: "load of misaligned address" in HashKeys).
    keys = np.random.default_rng(30).integers(0, 2**64, N, dtype=np.uint64, endpoint=False)
    present, probe = keys[: N // 2], keys
    aligned = KINDS[kind](integer_hash=integer_hash)
    added = aligned.add_many(present)
    answers = aligned.contains_many(probe)
    assert answers[: N // 2].all() and not answers[N // 2 :].all()
    probes = misaligned_copies(probe)
    for name, view in misaligned_copies(present).items():
        f = KINDS[kind](integer_hash=integer_hash)
        assert f.add_many(view) == added, name
        assert f.tobytes() == aligned.tobytes(), name
        assert f.contains_many(probes[name]).tolist() == answers.tolist(), name
        assert f.contains_many(probes[name], count=True) == answers.sum(), name
        g = KINDS[kind](integer_hash=integer_hash)
        g.update(view)
        assert g.tobytes() == aligned.tobytes(), name
        if kind == "counting":
            removed = aligned.copy()
            assert f.remove_many(view) == removed.remove_many(present), name
            assert f.tobytes() == removed.tobytes(), name


@pytest.mark.parametrize("dtype,code", [(np.int64, "q"), (np.uint32, "I"), (np.int16, "h")])
def test_misaligned_buffers_of_other_integer_widths_are_their_values(dtype, code):
    # These are widened item by item; their loads must not assume alignment either.
    keys = np.arange(1, min(N, np.iinfo(dtype).max), dtype=dtype)
    raw = b"\0" + keys.tobytes()
    aligned = bloomery.BlockedFilter(50_000, 0.01)
    added = aligned.add_many(keys.astype(np.uint64))
    for view in (np.frombuffer(raw, dtype, offset=1),
                 memoryview(raw)[1 : 1 + keys.nbytes].cast(code)):
        f = bloomery.BlockedFilter(50_000, 0.01)
        assert f.add_many(view) == added
        assert f.tobytes() == aligned.tobytes()
        assert f.contains_many(view).all()
    if np.issubdtype(dtype, np.signedinteger):
        negative = np.frombuffer(b"\0" + np.array([5, -1], dtype).tobytes(), dtype, offset=1)
        f = bloomery.BlockedFilter(1_000, 0.01)
        with pytest.raises(OverflowError):
            f.add_many(negative)
        assert 5 not in f  # refused before any key was added


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint32, np.int64, np.uint64])
@pytest.mark.parametrize("integer_hash", ["xxh3", "mix"])
def test_a_numpy_integer_array_of_one_int_is_that_int_key(dtype, integer_hash):
    # Regression: under integer_hash='mix', add(np.array([7], np.uint64)) hashed the array's bytes
    # while add_many of the same array (and add of np.uint64(7)) hashed the int 7, so `7 in f` was
    # False after it. A NumPy integer array holding one int is now that int, like its scalar.
    make = lambda: bloomery.BlockedFilter(1_000, 0.001, integer_hash=integer_hash)  # noqa: E731
    by_int = make()
    by_int.add(7)
    for one in (np.array([7], dtype), np.array(7, dtype), np.arange(10, dtype=dtype)[7:8]):
        f = make()
        assert f.add(one) is False
        assert 7 in f and one in f and np.array([7], np.uint64) in f
        assert f.tobytes() == by_int.tobytes()
        assert f.contains_many(np.array([7], dtype)).tolist() == [True]
        g = make()
        g.add_many(np.array([7], dtype))
        assert one in g
        assert bloomery.hash_key(one, integer_hash=integer_hash) == bloomery.hash_key(
            7, integer_hash=integer_hash)
        assert g.contains_many([one]).tolist() == [True]  # the same key inside an iterable


def test_numpy_integer_arrays_of_other_sizes_are_not_one_key():
    f = bloomery.BlockedFilter(1_000, 0.01)
    for batch in (np.arange(2, dtype=np.uint64), np.zeros(0, np.uint64),
                  np.zeros((1, 1), np.uint64)):
        with pytest.raises(TypeError, match="add_many"):
            f.add(batch)
        with pytest.raises(TypeError, match="add_many"):
            batch in f  # noqa: B015
    with pytest.raises(OverflowError):
        f.add(np.array([-1], np.int8))
    # A 0-d array is one key, not a batch.
    with pytest.raises(ValueError, match="one-dimensional"):
        f.add_many(np.array(7, np.uint64))
    # Byte-string keys in other buffers are unchanged: bytes of the buffer.
    f.add(memoryview(b"abc"))
    f.add(np.frombuffer(b"xyz!", np.float32))
    assert b"abc" in f and b"xyz!" in f
    assert len(f.tobytes()) > 0


class FailingLength:
    """An iterable of keys whose __len__ raises `error`."""

    def __init__(self, error):
        self.error = error

    def __len__(self):
        raise self.error

    def __iter__(self):
        return iter(["a", "b"])


@pytest.mark.parametrize("error", [KeyboardInterrupt, MemoryError, ValueError("bad length")])
def test_contains_many_propagates_what_len_raises(error):
    # Regression: contains_many cleared any exception of len(keys) (PyErr_Clear) and went on,
    # swallowing a Ctrl-C.
    f = bloomery.BlockedFilter(1_000, 0.01)
    f.add("a")
    expected = error if isinstance(error, type) else type(error)
    with pytest.raises(expected):
        f.contains_many(FailingLength(error))
    # Without __len__ (a generator), the answers are collected as they come.
    assert f.contains_many(k for k in ["a", "b"]).tolist() == [True, False]


@pytest.mark.parametrize("window,message", [
    (9.1e9, "at most 9e9 seconds"),
    (float("inf"), "at most 9e9 seconds"),
    (datetime.timedelta(days=200_000), "at most 9e9 seconds"),
    (1e-10, "at least 1 ns"),
    (4e-10, "at least 1 ns"),
    (1e-12, "at least 1 ns"),
    (-1e-10, "positive"),
    (-1.0, "positive"),
    (float("-inf"), "positive"),
    (float("nan"), "a number of seconds"),
])
def test_windowed_windows_no_duration_holds_are_refused_saying_why(window, message):
    # Regression: 9.1e9 said "must be a finite number of seconds" (it is one: the limit is 9e9),
    # and 1e-10 (or -1e-10) rounded to 0 ns and silently made a key-count window.
    with pytest.raises(ValueError, match=message):
        bloomery.WindowedFilter(1_000, window=window)


def test_windowed_windows_round_to_the_nanosecond():
    assert bloomery.WindowedFilter(1_000, window=9e9).window == 9e9
    assert bloomery.WindowedFilter(1_000, window=4e-9).window == 4e-9
    # Rounded to 4 ns, the least a 4-generation window can be; 3 ns is the library's refusal.
    assert bloomery.WindowedFilter(1_000, window=3.6e-9).window == 4e-9
    with pytest.raises(ValueError, match="at least 4 ns"):
        bloomery.WindowedFilter(1_000, window=3e-9)


class Seconds:
    """A duration whose total_seconds() returns `value`."""

    def __init__(self, value):
        self.value = value

    def total_seconds(self):
        return self.value


class RaisingAttribute:
    def __getattr__(self, name):
        raise KeyboardInterrupt


def test_windowed_window_total_seconds_must_be_a_number():
    # Regression: a total_seconds() returning a str raised RuntimeError "Unable to cast".
    for bad in ("60", None, b"60", [60]):
        with pytest.raises(TypeError, match="total_seconds"):
            bloomery.WindowedFilter(1_000, window=Seconds(bad))
    assert bloomery.WindowedFilter(1_000, window=Seconds(60)).window == 60.0
    # The lookup's own exceptions propagate (hasattr swallowed them).
    with pytest.raises(KeyboardInterrupt):
        bloomery.WindowedFilter(1_000, window=RaisingAttribute())


@pytest.mark.parametrize("cls", [bloomery.BlockedFilter, bloomery.WindowedFilter])
@pytest.mark.parametrize("state", [("bytes", "no"), ("bytes", 1), ("str", True), (None, True)])
def test_pickle_states_of_the_wrong_types_are_type_errors(cls, state):
    # Regression: (bytes, 'no') raised RuntimeError "Unable to cast Python instance".
    f = cls(1_000, 0.01)
    data = f.tobytes()
    values = {"bytes": data, "str": "x", None: None}
    g = cls.__new__(cls)
    with pytest.raises(TypeError, match="concurrent: bool"):
        g.__setstate__((values[state[0]],) + state[1:])
    g.__setstate__((data, False))
    assert pickle.loads(pickle.dumps(g)).tobytes() == data


def test_pickle_states_with_max_memory_are_checked():
    # The four-item state (bytes, concurrent, max_memory, huge_pages): wrong types are TypeError,
    # a negative max_memory OverflowError, never pybind11's RuntimeError "Unable to cast".
    data = bloomery.ScalableFilter(100, 0.01).tobytes()
    g = bloomery.ScalableFilter.__new__(bloomery.ScalableFilter)
    for state in ((data, False, "65536", True), (data, False, 65536, "yes")):
        with pytest.raises(TypeError, match="max_memory: int"):
            g.__setstate__(state)
    with pytest.raises(OverflowError):
        g.__setstate__((data, False, -1, True))
    g.__setstate__((data, False, 65536, True))
    assert g.max_memory == 65536


def test_cxx_batch_seconds_refuses_misaligned_arrays():
    # Regression: the benchmark helper built its uint64_t span over any 8-byte items, aligned or
    # not (undefined behaviour).
    from bloomery import _native

    f = bloomery.BlockedFilter(10_000, 0.01)
    keys = np.arange(2_000, dtype=np.uint64)
    misaligned = np.frombuffer(b"\0" + keys.tobytes(), np.uint64, offset=1)
    with pytest.raises(TypeError, match="aligned"):
        _native._cxx_batch_seconds(f, misaligned, True)
    assert f.contains_many(keys, count=True) == 0
    _native._cxx_batch_seconds(f, keys, True)
    assert f.contains_many(misaligned).all()
