# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""The Python API: pybloom-live semantics, keys, batches, files, pickling, threads, FPR."""

import copy
import io
import json
import math
import os
import pickle
import re
import struct
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import bloomery

KINDS = {
    "blocked": lambda **kw: bloomery.BlockedFilter(20_000, 0.01, **kw),
    "classic": lambda **kw: bloomery.ClassicFilter(20_000, 0.01, **kw),
    "counting": lambda **kw: bloomery.CountingFilter(20_000, 0.01, **kw),
    "scalable": lambda **kw: bloomery.ScalableFilter(1_000, 0.01, **kw),
}
CLASSES = {
    "blocked": bloomery.BlockedFilter,
    "classic": bloomery.ClassicFilter,
    "counting": bloomery.CountingFilter,
    "scalable": bloomery.ScalableFilter,
}


def urls(prefix, n, start=0):
    return [f"https://{prefix}.example.com/item/{i}?ref=list" for i in range(start, start + n)]


def within_binomial_bound(hits, trials, p, sigmas=5.0):
    # The same bound as tests/test_util.h's WithinBinomialBound.
    mean = p * trials
    return abs(hits - mean) <= sigmas * math.sqrt(trials * p * (1 - p)) + 1.0


@pytest.fixture(params=sorted(KINDS))
def kind(request):
    return request.param


def test_version_is_the_repositorys():
    # VERSION is the one version source: the wheel's metadata, the C++ library and this attribute.
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    with open(os.path.join(root, "VERSION")) as f:
        assert bloomery.__version__ == f.read().strip()
    assert re.fullmatch(r"\d+\.\d+\.\d+", bloomery.__version__)


def test_add_returns_already_present_like_pybloom(kind):
    f = KINDS[kind]()
    assert f.add("https://a.example/") is False  # new
    assert f.add("https://a.example/") is True  # already present
    assert "https://a.example/" in f
    assert "https://b.example/" not in f


def test_pybloom_constructors_and_attributes():
    f = bloomery.BloomFilter(capacity=10_000, error_rate=0.001)
    assert f.capacity == 10_000
    assert 0 < f.error_rate <= 0.001
    assert f.num_bits >= 10_000 * 14  # at least ~1.44 * log2(1/p) bits per key
    assert f.num_slices == f.hashes >= 1
    s = bloomery.ScalableBloomFilter(
        initial_capacity=100, error_rate=0.001, mode=bloomery.ScalableBloomFilter.LARGE_SET_GROWTH
    )
    assert s.mode == 4 and s.initial_capacity == 100 and s.error_rate == 0.001
    s.update(range(10_000))
    assert s.stages > 1 and s.capacity >= 10_000
    assert all(i in s for i in range(10_000))


def test_len_estimates_the_distinct_keys(kind):
    f = KINDS[kind]()
    keys = urls("len", 5_000)
    f.update(keys + keys)
    # Duplicates do not count, except in a counting filter, which counts every insertion.
    expected = 10_000 if kind == "counting" else 5_000
    assert abs(len(f) - expected) <= expected * 0.03


@pytest.mark.parametrize(
    "key",
    ["ascii", "ünïcödé ✓", "", b"raw\x00bytes", bytearray(b"mutable"), memoryview(b"view"), 0, 7,
     2**64 - 1, np.uint64(12345), np.int32(17)],
    ids=repr,
)
def test_every_key_type_round_trips(kind, key):
    f = KINDS[kind]()
    assert key not in f
    assert f.add(key) is False
    assert key in f


def test_str_is_its_utf8_and_int_its_little_endian_bytes():
    f = bloomery.BlockedFilter(1_000, 0.001)
    f.add("ünï")
    assert "ünï".encode() in f
    f.add(0x0102030405060708)
    assert (0x0102030405060708).to_bytes(8, "little") in f
    assert bloomery.hash_key(5) == bloomery.hash_key((5).to_bytes(8, "little"))
    assert bloomery.hash_key("a") != bloomery.hash_key("b")


@pytest.mark.parametrize("mix", ["mix", "seeded-mix"])
def test_integer_hash_mix_hashes_ints_by_the_mix_and_files_keep_it(kind, mix):
    f = KINDS[kind](integer_hash=mix)
    assert f.integer_hash == mix
    assert KINDS[kind]().integer_hash == "xxh3"
    ints = list(range(0, 6_000, 3))
    f.update(ints[:1_000])
    for i in ints[1_000:]:
        f.add(i)
    assert all(i in f for i in ints)
    assert f.contains_many(np.array(ints, dtype=np.uint64), count=True) == len(ints)
    # An int is no longer its 8 little-endian bytes; str keys hash as before.
    assert bloomery.hash_key(5, integer_hash=mix) != bloomery.hash_key((5).to_bytes(8, "little"))
    assert bloomery.hash_key("a", integer_hash=mix) == bloomery.hash_key("a")
    data = f.tobytes()
    assert bloomery.info_bytes(data)["integer_hash"] == mix
    for g in (pickle.loads(pickle.dumps(f)), copy.deepcopy(f), CLASSES[kind].frombytes(data)):
        assert g.integer_hash == mix
        assert all(i in g for i in ints)
    with pytest.raises(ValueError):
        f.union(KINDS[kind]())  # the other hashes ints by XXH3: its bits mean other keys
    with pytest.raises(ValueError, match="integer_hash"):
        KINDS[kind](integer_hash="md5")


def test_integer_hash_seeded_mix_premixes_the_seed():
    # 'mix' xors the seed into the key: seeds 2 and 0 swap keys 1 and 3. 'seeded-mix' does not.
    assert bloomery.hash_key(1, seed=2, integer_hash="mix") == bloomery.hash_key(3, seed=0,
                                                                                 integer_hash="mix")
    assert bloomery.hash_key(1, seed=2, integer_hash="seeded-mix") != bloomery.hash_key(
        3, seed=0, integer_hash="seeded-mix")
    assert bloomery.hash_key(1, seed=2, integer_hash="seeded-mix") != bloomery.hash_key(
        1, seed=2, integer_hash="mix")
    filters = [bloomery.BlockedFilter(100_000, 0.01, layout="word64", seed=seed,
                                      integer_hash="seeded-mix") for seed in range(4)]
    for f in filters:
        f.update(np.arange(100_000, dtype=np.uint64))
    assert len({f.tobytes() for f in filters}) == 4


@pytest.mark.parametrize("layout", ["line512", "block256", "word64"])
@pytest.mark.parametrize("cls", [bloomery.BlockedFilter, bloomery.ScalableFilter,
                                 bloomery.BloomFilter, bloomery.ScalableBloomFilter])
def test_layout_shapes_the_filter_and_files_pickles_copies_keep_it(cls, layout, tmp_path):
    f = cls(1_000, 0.01, layout=layout)
    assert f.layout == layout
    keys = [f"k{i}" for i in range(500)]
    f.update(keys)
    path = str(tmp_path / "f.bloom")
    f.save(path)
    for g in (pickle.loads(pickle.dumps(f)), copy.deepcopy(f), f.copy(), cls.load(path),
              bloomery.load(path), cls.frombytes(f.tobytes())):
        assert g.layout == layout
        assert all(k in g for k in keys)
    # A shape's own k and bits: word64 needs more bits than the line for the same rate.
    if cls in (bloomery.BlockedFilter, bloomery.BloomFilter):
        line = cls(1_000, 0.01)
        assert (f.num_bits > line.num_bits) == (layout != "line512")
    other = "block256" if layout != "block256" else "word64"
    with pytest.raises(ValueError, match="layout"):
        f.union(cls(1_000, 0.01, layout=other))


@pytest.mark.parametrize("cls", [bloomery.BlockedFilter, bloomery.ScalableFilter,
                                 bloomery.WindowedFilter, bloomery.BloomFilter])
def test_integer_hash_unset_is_seeded_mix_for_word64_and_block256_and_xxh3_for_the_line(cls):
    assert cls(1_000, 0.01, layout="word64").integer_hash == "seeded-mix"
    assert cls(1_000, 0.01, layout="block256").integer_hash == "seeded-mix"
    assert cls(1_000, 0.01).integer_hash == "xxh3"
    assert cls(1_000, 0.01, layout="word64", integer_hash="xxh3").integer_hash == "xxh3"
    f = cls(1_000, 0.01, layout="word64")
    f.add(7)
    assert bloomery.info_bytes(f.tobytes())["integer_hash"] == "seeded-mix"
    assert cls.frombytes(f.tobytes()).integer_hash == "seeded-mix"
    assert 7 in cls.frombytes(f.tobytes())


def test_layout_default_auto_and_refusals():
    assert bloomery.BlockedFilter(1_000).layout == "line512"
    # A filter made now probes by fields (layout codes 5, 6; word64's 3); classic has no block.
    assert bloomery.BlockedFilter(1_000).probe == "fields"
    assert bloomery.BlockedFilter(1_000, layout="block256").probe == "fields"
    assert bloomery.ScalableFilter().probe == "fields"
    assert bloomery.ScalableFilter(layout="partitioned").probe == "none"
    assert bloomery.ClassicFilter(1_000).probe == "none"
    assert bloomery.WindowedFilter(1_000, 0.01).probe == "fields"
    # A file of bloomery 0.1 keeps the salted probe it was written with (tests/fixtures/v0.1).
    fixtures = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fixtures", "v0.1")
    old = bloomery.load(os.path.join(fixtures, "blocked_line512.bloom"))
    assert (old.layout, old.probe) == ("line512", "salted") and "key-7" in old
    old = bloomery.load(os.path.join(fixtures, "scalable_block256.bloom"))
    assert (old.layout, old.probe) == ("block256", "salted") and "key-7" in old
    assert bloomery.ScalableFilter().layout == "line512"
    assert bloomery.ClassicFilter(1_000).layout == "partitioned"
    assert bloomery.BlockedFilter(1_000, 0.01, layout="auto").layout in (
        "line512", "block256", "word64")
    with pytest.raises(ValueError, match=r"^layout must be 'line512', 'block256', 'word64' or "
                                         r"'auto', got 'word32'$"):
        bloomery.BlockedFilter(1_000, layout="word32")
    with pytest.raises(ValueError, match="layout"):
        bloomery.BlockedFilter(1_000, layout="partitioned")
    with pytest.raises(ValueError, match="layout"):
        bloomery.ClassicFilter(1_000, layout="word64")
    with pytest.raises(TypeError):
        bloomery.CountingFilter(1_000, layout="word64")  # counters stay on the line
    with pytest.raises(ValueError, match="layout"):
        bloomery.ScalableFilter(layout="auto")
    with pytest.raises(ValueError):
        bloomery.BlockedFilter(bits=1 << 16, hashes=12, layout="word64")  # k <= 8


def test_scalable_partitioned_stages_grow_and_keep_their_layout():
    f = bloomery.ScalableFilter(1_000, 0.01, tightening=0.5, layout="partitioned")
    assert f.layout == "partitioned"
    keys = [f"k{i}" for i in range(5_000)]
    f.update(keys)
    assert f.stages >= 3
    assert all(k in f for k in keys)
    for g in (pickle.loads(pickle.dumps(f)), copy.deepcopy(f),
              bloomery.ScalableFilter.frombytes(f.tobytes())):
        assert g.layout == "partitioned" and g.stages == f.stages
        assert all(k in g for k in keys)
    # Partitioned stages take fewer bits than the line's for the same shares.
    line = bloomery.ScalableFilter(1_000, 0.01, tightening=0.5)
    assert f._stage(0)[2] < line._stage(0)[2]
    with pytest.raises(ValueError, match="incompatible"):
        f.union(line)
    with pytest.raises(ValueError, match="'partitioned', 'line512'"):
        bloomery.ScalableFilter(layout="classic")


# Issue #26: a windowed filter's generations take a layout; layout="auto" takes prefer=.
@pytest.mark.parametrize("layout", ["line512", "block256", "word64"])
def test_windowed_layout_and_files_pickles_copies_keep_it(layout, tmp_path):
    f = bloomery.WindowedFilter(1_000, 0.01, layout=layout)
    assert f.layout == layout
    keys = [f"k{i}" for i in range(500)]
    f.update(keys)
    path = str(tmp_path / "w.bloom")
    f.save(path)
    for g in (pickle.loads(pickle.dumps(f)), copy.deepcopy(f), f.copy(),
              bloomery.WindowedFilter.load(path), bloomery.load(path),
              bloomery.WindowedFilter.frombytes(f.tobytes())):
        assert g.layout == layout
        assert all(k in g for k in keys)
    other = "block256" if layout != "block256" else "word64"
    with pytest.raises(ValueError, match="different layouts"):
        f.union(bloomery.WindowedFilter(1_000, 0.01, layout=other))


def test_layout_auto_prefer_smallest_or_fastest():
    for cls in (bloomery.BlockedFilter, bloomery.WindowedFilter):
        assert cls(100_000, 0.01, layout="auto").layout == "line512"
        assert cls(100_000, 0.01, layout="auto", prefer="smallest").layout == "line512"
        assert cls(100_000, 0.01, layout="auto", prefer="fastest").layout == "word64"
        with pytest.raises(ValueError, match="prefer needs layout='auto'"):
            cls(100_000, 0.01, prefer="fastest")
        with pytest.raises(ValueError, match="prefer needs layout='auto'"):
            cls(100_000, 0.01, layout="word64", prefer="fastest")
        with pytest.raises(ValueError, match="prefer must be 'smallest' or 'fastest'"):
            cls(100_000, 0.01, layout="auto", prefer="quick")
        with pytest.raises(ValueError, match="layout"):
            cls(1_000, layout="partitioned")
    # fastest within max_memory: word64 (151 KiB) does not fit 140 KB, block256 (125 KiB) does.
    capped = bloomery.BlockedFilter(100_000, 0.01, layout="auto", prefer="fastest",
                                    max_memory=140_000)
    assert capped.layout == "block256"
    assert bloomery.BloomFilter(1_000, 0.01, layout="auto", prefer="fastest").layout == "word64"
    with pytest.raises(ValueError, match="hashes"):
        bloomery.WindowedFilter(1_000, hashes=9, layout="word64")  # k <= 8


@pytest.mark.parametrize("bad", [1.5, None, ("a",), ["a"], {"a": 1}, object()], ids=repr)
def test_other_key_types_are_type_errors(bad):
    f = bloomery.BlockedFilter(1_000, 0.01)
    with pytest.raises(TypeError):
        f.add(bad)
    with pytest.raises(TypeError):
        bad in f  # noqa: B015
    with pytest.raises(TypeError):
        f.add_many([b"fine", bad])


@pytest.mark.parametrize("bad", [-1, 2**64, -(2**70)])
def test_ints_outside_uint64_are_refused(bad):
    f = bloomery.BlockedFilter(1_000, 0.01)
    with pytest.raises(OverflowError):
        f.add(bad)
    with pytest.raises(OverflowError):
        f.add_many([1, bad])
    with pytest.raises(OverflowError):
        f.add_many(np.array([1, bad], dtype=np.int64) if bad > -(2**63) else [bad])


def test_a_single_str_or_bytes_is_not_a_batch():
    f = bloomery.BlockedFilter(1_000, 0.01)
    for single in ("abc", b"abc", bytearray(b"abc")):
        with pytest.raises(TypeError):
            f.add_many(single)


def test_bad_options_are_value_errors_with_the_library_message():
    with pytest.raises(ValueError, match="capacity"):
        bloomery.BlockedFilter(0)
    with pytest.raises(ValueError, match="fpr"):
        bloomery.BlockedFilter(1000, 1.5)
    for growth in (0, 32769):  # growth is 1 .. 32768
        with pytest.raises(ValueError, match="growth"):
            bloomery.ScalableFilter(100, 0.01, growth)
    assert bloomery.ScalableFilter(100, 0.01, 3).mode == 3
    with pytest.raises(ValueError, match="counter"):
        bloomery.CountingFilter(100, 0.01, counter_bits=5)


def test_batch_answers_equal_single_answers(kind):
    present = urls("batch-in", 3_000)
    absent = urls("batch-out", 3_000)
    single, batch = KINDS[kind](), KINDS[kind]()
    new_single = sum(not single.add(k) for k in present)
    assert batch.add_many(present) == new_single
    mixed = absent[:1500] + present + absent[1500:]
    assert batch.contains_many(mixed).tolist() == [k in single for k in mixed]
    assert batch.contains_many(iter(mixed)).tolist() == [k in single for k in mixed]
    assert batch.contains_many(mixed, count=True) == sum(k in single for k in mixed)
    assert batch.contains_many([]).tolist() == []
    assert batch.contains_many(k for k in []).tolist() == []


class LyingLength:
    """An iterable whose __len__ is wrong: answers must follow the keys, not len()."""

    def __init__(self, keys, length):
        self.keys, self.length = keys, length

    def __len__(self):
        return self.length

    def __iter__(self):
        return iter(self.keys)


@pytest.mark.parametrize("length", [0, 10, 17_000, 40_000])
def test_contains_many_answers_one_per_key_whatever_len_says(length):
    f = bloomery.BlockedFilter(50_000, 0.01)
    keys = urls("lying", 20_000)  # more than one conversion chunk
    f.update(keys[::2])
    expected = [k in f for k in keys]
    assert f.contains_many(LyingLength(keys, length)).tolist() == expected


def test_numpy_uint64_arrays_are_int_keys(kind):
    f = KINDS[kind]()
    keys = np.arange(0, 40_000, 2, dtype=np.uint64)
    singles = KINDS[kind]()
    assert f.add_many(keys) == sum(not singles.add(int(k)) for k in keys)
    hits = f.contains_many(keys)
    assert hits.dtype == np.bool_ and hits.shape == keys.shape and hits.all()
    assert all(int(k) in f for k in keys[:100])
    odd = np.arange(1, 40_000, 2, dtype=np.uint64)
    assert f.contains_many(odd, count=True) < len(odd) * 0.05
    # Other integer widths are widened to uint64: the same keys.
    assert f.contains_many(keys.astype(np.int64)).all()
    assert f.contains_many(np.arange(0, 200, 2, dtype=np.uint8)).all()
    with pytest.raises(TypeError):
        f.add_many(np.zeros(4, dtype=np.float64))


def test_mixed_batches_keep_order_int_and_its_bytes_are_one_key():
    f = bloomery.BlockedFilter(1_000, 0.001)
    # The int 9 and its 8 little-endian bytes are the same key: the second is a duplicate.
    assert f.add_many([9, (9).to_bytes(8, "little"), "x", bytearray(b"y")]) == 3


def test_scalable_full_raises_filter_full_error():
    f = bloomery.ScalableFilter(100, 0.01, max_stages=1)
    f.update(range(100))
    assert f.full is False
    with pytest.raises(bloomery.FilterFullError):
        f.update(range(100, 300))
    assert f.full
    with pytest.raises(IndexError):  # pybloom-live raises IndexError at capacity
        f.add("one more new key")
    assert 5 in f and f.add(5) is True  # keys already present still answer


def test_counting_filter_removes_and_counts():
    f = bloomery.CountingFilter(1_000, 0.01)
    f.add("k")
    f.add("k")
    assert f.count("k") >= 2
    assert f.remove("k") is True
    assert "k" in f
    assert f.remove("k") is True
    assert "k" not in f
    assert f.remove("never added") is False
    f.update(["a", "b", "c"])
    assert f.remove_many(["a", "b", "zz"]) == 2
    assert "c" in f and "a" not in f


def test_union_and_intersection(kind):
    a, b = KINDS[kind](), KINDS[kind]()
    a.update(urls("a", 300))
    b.update(urls("b", 300))
    u = a | b
    assert all(k in u for k in urls("a", 300) + urls("b", 300))
    assert u is not a and "https://b.example.com/item/0?ref=list" not in a
    a |= b
    assert all(k in a for k in urls("b", 300))
    if kind == "blocked":
        c, d = KINDS[kind](), KINDS[kind]()
        c.update(urls("both", 300) + urls("c", 300))
        d.update(urls("both", 300) + urls("d", 300))
        i = c & d
        assert all(k in i for k in urls("both", 300))
        assert sum(k in i for k in urls("c", 300)) < 30
    with pytest.raises(ValueError):
        a.union(CLASSES[kind](**({"initial_capacity": 7} if kind == "scalable" else
                                 {"capacity": 77})))


@pytest.mark.parametrize("cls", [bloomery.ScalableFilter, bloomery.ScalableBloomFilter])
def test_scalable_union_of_workers_that_both_grew(cls):
    # Issue 28 item 6: per-worker filters that each grew past their first stage unite (stages
    # ORed where the union fits, kept side by side where it does not), with the bound they keep.
    a, b = cls(100, 0.01), cls(100, 0.01)
    a.update(urls("a", 3_000))
    b.update(urls("b", 2_000))
    assert a.stages > 2 and b.stages > 2
    assert a.planned_error_rate == 0.01
    both = urls("a", 3_000) + urls("b", 2_000)
    absent = urls("absent", 200_000)
    for u in (a | b, a.union(b), b.union(a)):
        assert u.contains_many(both).all()
        assert u.stages > max(a.stages, b.stages)
        assert u.error_rate == 0.01  # the rate asked for
        assert 0.01 < u.planned_error_rate < 0.02  # what the kept stages add
        hits = int(u.contains_many(absent).sum())
        assert hits / len(absent) <= u.planned_error_rate
        assert within_binomial_bound(hits, len(absent), u.estimated_fpr())
    u = a | b
    a |= b
    assert a.contains_many(both).all() and a.tobytes() == u.tobytes()
    a.update(urls("later", 10_000))
    assert a.contains_many(both + urls("later", 10_000)).all()
    again = pickle.loads(pickle.dumps(a))
    assert again.stages == a.stages and again.planned_error_rate == a.planned_error_rate
    assert again.contains_many(both + urls("later", 10_000)).all()


def test_pickle_copy_and_bytes_round_trip(kind):
    f = KINDS[kind]()
    keys = urls("pickle", 2_000)
    f.update(keys)
    for g in (pickle.loads(pickle.dumps(f)), f.copy(), copy.copy(f),
              CLASSES[kind].frombytes(f.tobytes()), bloomery.loads(f.tobytes())):
        assert type(g) is type(f)
        assert g.contains_many(keys).all()
        assert g.contains_many(urls("other", 2_000)).tolist() == \
            f.contains_many(urls("other", 2_000)).tolist()
        g.add("only in the copy")
        assert "only in the copy" not in f
    buffer = io.BytesIO()
    f.tofile(buffer)
    buffer.seek(0)
    assert CLASSES[kind].fromfile(buffer).contains_many(keys).all()


def test_save_load_and_generic_load(kind, tmp_path):
    f = KINDS[kind]()
    keys = urls("save", 2_000)
    f.update(keys)
    path = str(tmp_path / f"{kind}.bloom")
    f.save(path)
    assert bloomery.info(path)["kind"] == kind
    for g in (CLASSES[kind].load(path), bloomery.load(path), bloomery.load(path, concurrent=True)):
        assert type(g) is type(f)
        assert g.contains_many(keys).all()


class _Opens:
    """Counts the opens of one file by this process, as the kernel sees them (inotify, Linux):
    the library's own open(2) calls, which no Python-level hook sees."""

    IN_CLOSE_NOWRITE, IN_OPEN = 0x10, 0x20

    def __init__(self, path):
        import ctypes
        import ctypes.util

        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        if not hasattr(libc, "inotify_init1"):
            pytest.skip("no inotify in this C library")
        self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            pytest.skip(f"inotify_init1: {os.strerror(ctypes.get_errno())}")
        # The closes too: the kernel merges an event into an identical one still unread before
        # it, so two opens with no close between their events would count as one.
        if libc.inotify_add_watch(self.fd, os.fsencode(path),
                                  self.IN_OPEN | self.IN_CLOSE_NOWRITE) < 0:
            os.close(self.fd)
            pytest.skip(f"inotify_add_watch: {os.strerror(ctypes.get_errno())}")

    def count(self):
        """The opens since the last count."""
        opens = 0
        while True:
            try:
                events = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return opens
            at = 0
            while at < len(events):
                _, mask, _, name_bytes = struct.unpack_from("iIII", events, at)
                opens += bool(mask & self.IN_OPEN)
                at += 16 + name_bytes

    def close(self):
        os.close(self.fd)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts opens with inotify")
@pytest.mark.parametrize("kind_name", sorted(KINDS) + ["windowed"])
def test_generic_load_opens_the_file_once(kind_name, tmp_path):
    # Regression: bloomery.load read the header with info(), then opened the file again with the
    # kind's load (two opens; a file replaced between them was read as a kind its header no
    # longer named). Now AnyFilter::Load's one open, and the class the kind's own load returns.
    cls = CLASSES.get(kind_name, bloomery.WindowedFilter)
    f = KINDS[kind_name]() if kind_name in KINDS else bloomery.WindowedFilter(1_000, 0.01)
    f.update(urls("once", 500))
    path = str(tmp_path / f"{kind_name}.bloom")
    f.save(path)
    opens = _Opens(path)
    try:
        own = cls.load(path)
        assert opens.count() == 1  # the counter counts: a kind's own load opens the file once
        g = bloomery.load(path)
        assert opens.count() == 1
        g_concurrent = bloomery.load(path, concurrent=True, verify_checksums=False)
        assert opens.count() == 1
    finally:
        opens.close()
    assert type(g) is type(own) is cls and type(g_concurrent) is cls
    assert g_concurrent.concurrent and not g.concurrent
    assert g.contains_many(urls("once", 500)).all()
    assert type(bloomery.loads(f.tobytes())) is cls


@pytest.mark.parametrize("cls", [bloomery.BlockedFilter, bloomery.WindowedFilter])
def test_map_reads_and_writes_the_file(tmp_path, cls):
    path = str(tmp_path / "mapped.bloom")
    f = cls(10_000, 0.01)  # a window of 10,000 adds: nothing here expires
    f.update(urls("map", 1_000))
    f.save(path)
    reader = cls.map(path)
    assert reader.contains_many(urls("map", 1_000)).all()
    writer = cls.map(path, writable=True)
    writer.add("added through the mapping")
    writer.flush()
    assert "added through the mapping" in cls.load(path)


def test_bad_files_raise_clear_exceptions(tmp_path):
    with pytest.raises(FileNotFoundError):
        bloomery.BlockedFilter.load(str(tmp_path / "missing.bloom"))
    junk = tmp_path / "junk.bloom"
    junk.write_bytes(b"this is not a filter file at all" * 10)
    with pytest.raises(bloomery.FormatError):
        bloomery.BlockedFilter.load(str(junk))
    with pytest.raises(bloomery.FormatError):
        bloomery.load(str(junk))
    with pytest.raises(bloomery.FormatError):
        bloomery.loads(b"junk" * 100)
    f = bloomery.BlockedFilter(1_000, 0.01)
    f.update(range(100))
    data = bytearray(f.tobytes())
    data[-1] ^= 0x10  # one payload bit: the checksum catches it
    with pytest.raises(bloomery.FormatError, match="checksum"):
        bloomery.BlockedFilter.frombytes(bytes(data))
    with pytest.raises(bloomery.FormatError):  # another kind's file
        bloomery.ClassicFilter.frombytes(f.tobytes())
    with pytest.raises(MemoryError):
        bloomery.BlockedFilter.frombytes(f.tobytes(), max_bytes=64)
    assert isinstance(bloomery.FormatError("x"), ValueError)


@pytest.mark.skipif(not os.environ.get("BLOOMERY_CLI"), reason="the CLI is not built")
def test_files_are_the_clis(kind, tmp_path):
    cli = os.environ["BLOOMERY_CLI"]
    keys = urls("cli", 3_000)
    absent = urls("cli-absent", 3_000)
    f = KINDS[kind]()
    f.update(keys)
    path = str(tmp_path / "py.bloom")
    f.save(path)
    info = json.loads(subprocess.run([cli, "info", path, "--json"], check=True,
                                     capture_output=True, text=True).stdout)
    assert info["kind"] == kind
    assert abs(info["estimated_count"] - 3_000) < 100
    query = subprocess.run([cli, "query", path], input="\n".join(keys + absent) + "\n",
                           check=True, capture_output=True, text=True).stdout.splitlines()
    assert query == [k for k in keys + absent if k in f]  # the CLI answers as Python does
    # And the other way: a file the CLI builds, read from Python.
    lines = tmp_path / "lines.txt"
    lines.write_text("\n".join(keys) + "\n")
    built = str(tmp_path / "cli.bloom")
    subprocess.run([cli, "build", "--kind", kind, "--capacity", "3000", "-o", built, str(lines)],
                   check=True, capture_output=True)
    g = bloomery.load(built)
    assert isinstance(g, CLASSES[kind])
    assert g.contains_many(keys).all()


def test_fpr_on_urls_is_within_plan():
    planned = 0.01
    f = bloomery.BlockedFilter(100_000, planned)
    f.update(urls("fpr-in", 100_000))
    absent = urls("fpr-out", 200_000)
    false_positives = f.contains_many(absent, count=True)
    assert within_binomial_bound(false_positives, len(absent), f.error_rate)
    assert f.error_rate <= planned
    assert abs(f.estimated_fpr() - f.error_rate) < f.error_rate * 0.1
    s = bloomery.ScalableFilter(1_000, planned)
    s.update(urls("fpr-in", 100_000))
    assert s.contains_many(absent, count=True) <= len(absent) * planned * 1.2


def test_threads_add_concurrently_and_lose_nothing(kind):
    f = KINDS[kind](concurrent=True)
    per_thread = [urls(f"t{t}", 5_000) for t in range(4)]

    def work(keys):
        for k in keys[:2_500]:
            f.add(k)
        f.add_many(keys[2_500:])

    threads = [threading.Thread(target=work, args=(keys,)) for keys in per_thread]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(f.contains_many(keys).all() for keys in per_thread)


def test_single_writer_filters_are_safe_from_threads():
    # concurrent=False: batches release the GIL but hold the filter's lock, so mixing batch and
    # single-key calls from threads still loses nothing.
    f = bloomery.BlockedFilter(200_000, 0.01)
    batches = [np.arange(t * 50_000, (t + 1) * 50_000, dtype=np.uint64) for t in range(3)]
    singles = urls("single", 5_000)
    threads = [threading.Thread(target=f.add_many, args=(b,)) for b in batches]
    threads.append(threading.Thread(target=lambda: [f.add(k) for k in singles]))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(f.contains_many(b).all() for b in batches)
    assert f.contains_many(singles).all()


def test_memory_is_the_filters_bytes():
    f = bloomery.BlockedFilter(1_000_000, 0.01)
    assert f.memory_bytes == f.num_bits // 8
    assert f.memory_bytes < 1_000_000 * 1.6  # ~12 bits/key at 1%; nothing per key in Python


@pytest.mark.parametrize("kind", ["blocked", "scalable"])
def test_pickle_and_copy_keep_concurrent(kind):
    # Regression: the file format does not record `concurrent`, and unpickled (copy.copy'd)
    # filters used to come back single-writer.
    for concurrent in (True, False):
        f = KINDS[kind](concurrent=concurrent)
        f.add("kept")
        for g in (pickle.loads(pickle.dumps(f)), copy.copy(f), copy.deepcopy(f), f.copy()):
            assert g.concurrent is concurrent
            assert "kept" in g


# WindowedFilter: W = capacity adds in key-count mode, G = generations. A key is present for at
# least W*(G-1)/G later counted adds and gone (a false positive at most) W adds later.
W, G = 4_000, 4


def test_windowed_keys_live_the_guaranteed_part_and_expire_after_the_window():
    f = bloomery.WindowedFilter(W, 0.01, generations=G)
    assert (f.capacity, f.generations, f.window, f.refresh) == (W, G, 0.0, "on_insert")
    keys = urls("window", 3 * W)
    guaranteed = W * (G - 1) // G
    for end in range(500, len(keys) + 1, 500):
        f.add_many(keys[end - 500:end])
        assert f.contains_many(keys[max(0, end - guaranteed):end]).all()
    assert f.epoch > 0
    # The first W keys are W*2 adds old: only false positives remain.
    gone = f.contains_many(keys[:W], count=True)
    assert gone <= W * f.error_rate * 2 + 5


@pytest.mark.parametrize("refresh,refreshed", [("on_insert", True), ("keep_first_seen", False)])
def test_windowed_refresh_policies(refresh, refreshed):
    f = bloomery.WindowedFilter(W, 0.01, refresh=refresh)
    tracked = urls("tracked", 100)
    f.add_many(tracked)
    others = urls("other", 3 * W)
    readded_as_new = 0
    for start in range(0, len(others), 500):
        f.add_many(others[start:start + 500])
        readded_as_new += sum(not f.add(k) for k in tracked)  # add() is True if present
    if refreshed:
        assert readded_as_new == 0  # re-adding every 500 adds keeps every key alive
    else:
        assert readded_as_new >= len(tracked)  # each expired at least once and came back new


def test_windowed_batch_equals_single():
    single = bloomery.WindowedFilter(W, 0.01, refresh="keep_first_seen")
    batch = bloomery.WindowedFilter(W, 0.01, refresh="keep_first_seen")
    keys = urls("wbatch", 2 * W) + urls("wbatch", W // 2)  # repeats, across rotations
    new_single = sum(not single.add(k) for k in keys)
    assert batch.add_many(keys) == new_single
    probe = urls("wbatch", 3 * W) + urls("wabsent", 1_000)
    assert batch.contains_many(probe).tolist() == [k in single for k in probe]
    assert len(batch) == len(single) > 0
    ints = np.arange(5_000, dtype=np.uint64)
    assert batch.add_many(ints) == sum(not single.add(int(k)) for k in ints)
    assert batch.contains_many(ints).tolist() == [int(k) in single for k in ints]


def test_windowed_duration_window():
    import datetime
    f = bloomery.WindowedFilter(1_000, 0.01, window=datetime.timedelta(hours=1), concurrent=True)
    assert f.window == 3600.0 and f.concurrent
    assert bloomery.WindowedFilter(1_000, window=3600).window == 3600.0
    assert f.add("a") is False and f.add("a") is True
    f.advance()  # an hour has not passed
    assert "a" in f


def test_windowed_files_and_pickles_keep_the_window_going(tmp_path):
    # Mid-window in key-count mode: the copy expires at the very add the original does.
    f = bloomery.WindowedFilter(W, 1e-9, refresh="keep_first_seen")
    keys = urls("wfile", W + W // 8)  # epoch 4 after W adds, half a generation into it
    f.add_many(keys)
    path = str(tmp_path / "w.bloom")
    f.save(path)
    assert bloomery.info(path)["kind"] == "windowed"
    copies = [bloomery.WindowedFilter.load(path), bloomery.load(path), pickle.loads(pickle.dumps(f)),
              copy.copy(f), f.copy(), bloomery.loads(f.tobytes())]
    more = urls("wmore", W)
    expected = [not f.add(k) for k in more]
    for g in copies:
        assert type(g) is bloomery.WindowedFilter
        assert (g.epoch, g.generations, g.refresh, g.capacity) == (4, G, "keep_first_seen", W)
        assert [not g.add(k) for k in more] == expected
        assert g.epoch == f.epoch
        assert g.contains_many(keys).tolist() == f.contains_many(keys).tolist()
        assert g.tobytes() == f.tobytes()
    # A duration window saved and loaded within its hour keeps its keys.
    timed = bloomery.WindowedFilter(1_000, 0.01, window=3600)
    timed.add("kept")
    assert "kept" in bloomery.loads(timed.tobytes())
    assert (timed | bloomery.WindowedFilter.frombytes(timed.tobytes())).window == 3600.0


@pytest.mark.parametrize("options,message", [
    ({"capacity": 0}, "capacity"),
    ({"capacity": 100, "error_rate": 1.5}, "fpr"),
    ({"capacity": 100, "generations": 1}, "generations"),
    ({"capacity": 100, "window": -1.0}, "window"),
    ({"capacity": 100, "window": float("nan")}, "window"),
    ({"capacity": 100, "hashes": 17}, "hashes"),
    ({"capacity": 100, "refresh": "never"}, "refresh"),
])
def test_windowed_bad_options_are_value_errors(options, message):
    with pytest.raises(ValueError, match=message):
        bloomery.WindowedFilter(**options)


# The stubs (__init__.pyi) are what type checkers and editors show: every public name they give a
# class exists on it, and every public attribute the extension has is in them.
@pytest.mark.parametrize(
    "name", ["BlockedFilter", "ClassicFilter", "CountingFilter", "ScalableFilter", "WindowedFilter"]
)
def test_stubs_name_what_the_classes_have(name):
    import ast

    stub = os.path.join(os.path.dirname(bloomery.__file__), "__init__.pyi")
    with open(stub) as source:
        classes = {n.name: n for n in ast.parse(source.read()).body if isinstance(n, ast.ClassDef)}

    def declared(class_name):
        node = classes[class_name]
        names = set()
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id in classes:
                names |= declared(base.id)
        for item in node.body:
            if isinstance(item, ast.FunctionDef):
                names.add(item.name)
            elif isinstance(item, ast.AnnAssign):
                names.add(item.target.id)
        return names

    cls = getattr(bloomery, name)
    stubbed = declared(name)
    assert sorted(m for m in stubbed if not hasattr(cls, m)) == []
    assert sorted(m for m in dir(cls) if not m.startswith("_") and m not in stubbed) == []


def run_isolated(code):
    """Runs `code` in a fresh interpreter (with this bloomery), so that a crash fails the test
    instead of killing pytest. Returns the CompletedProcess."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120, env=os.environ.copy())


@pytest.mark.parametrize("kind", ["blocked", "counting", "scalable"])
def test_whole_filter_calls_wait_for_concurrent_batches(kind):
    # Regression: on a concurrent filter, clear/tobytes/copy/pickle/save/union ran alongside
    # add_many in another thread: a scalable filter's clear() freed stages under the batch
    # (SIGSEGV), and snapshots failed their own checksums.
    result = run_isolated(f"""
        import pickle, threading, time
        import numpy as np
        import bloomery
        make = {{"blocked": lambda: bloomery.BlockedFilter(200_000, 0.01, concurrent=True),
                 "counting": lambda: bloomery.CountingFilter(200_000, 0.01, concurrent=True),
                 "scalable": lambda: bloomery.ScalableFilter(1_000, 0.01, concurrent=True)}}
        f = make["{kind}"]()
        stop = False

        def batches(seed):
            keys = np.arange(seed, seed + 200_000, dtype=np.uint64)
            while not stop:
                f.add_many(keys)
                f.add_many([f"k{{i}}" for i in range(seed, seed + 20_000)])

        threads = [threading.Thread(target=batches, args=(s * 10**6,)) for s in range(2)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 3
        try:
            while time.monotonic() < deadline:
                type(f).frombytes(f.tobytes())
                f.copy()
                pickle.loads(pickle.dumps(f))
                f |= make["{kind}"]()
                len(f)
                f.clear()
        finally:
            stop = True
            for t in threads:
                t.join()
        print("ok")
    """)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-2000:]


@pytest.mark.parametrize("cls", sorted(CLASSES) + ["windowed"])
def test_methods_of_an_uninitialised_instance_are_type_errors(cls):
    # Regression: cls.__new__(cls) without __init__ crashed in nearly every pybind11 method.
    result = run_isolated(f"""
        import pickle
        import bloomery
        cls = {{"blocked": bloomery.BlockedFilter, "classic": bloomery.ClassicFilter,
                "counting": bloomery.CountingFilter, "scalable": bloomery.ScalableFilter,
                "windowed": bloomery.WindowedFilter}}["{cls}"]
        f = cls.__new__(cls)
        calls = [len, bool, repr, lambda f: f.tobytes(), lambda f: f.seed, lambda f: f.clear(),
                 lambda f: f.memory_bytes, lambda f: f.add_many([1]), lambda f: f.copy(),
                 lambda f: f.contains_many([1]), lambda f: f.estimated_fpr(), pickle.dumps,
                 lambda f: f.capacity, lambda f: f | f, lambda f: f.add(1), lambda f: 1 in f,
                 lambda f: cls.__new__(cls).union(f)]
        for call in calls:
            try:
                call(f)
            except TypeError as error:
                assert "not initialised" in str(error), error
            else:
                raise AssertionError(f"no TypeError from {{call}}")
        print("ok")
    """)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-2000:]


@pytest.mark.parametrize("window", ["None", "[1]", "'60'", "numpy.timedelta64(5, 's')", "1j"])
def test_windowed_window_must_be_seconds_or_a_timedelta(window):
    # Regression: None, [1] and numpy.timedelta64 crashed; '60' was taken as 60 s.
    result = run_isolated(f"""
        import numpy, bloomery
        try:
            bloomery.WindowedFilter(1000, window={window})
        except TypeError:
            print("ok")
    """)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-2000:]


def test_windowed_window_takes_numbers_and_timedeltas():
    import datetime
    import decimal

    for window in (60, 60.0, np.float32(60), np.int64(60), decimal.Decimal(60),
                   datetime.timedelta(minutes=1)):
        assert bloomery.WindowedFilter(1000, window=window).window == 60.0


def test_cxx_batch_seconds_refuses_strided_arrays():
    # Regression: a strided view was read as contiguous memory (wrong keys, or out of bounds).
    from bloomery import _native

    f = bloomery.BlockedFilter(10_000, 0.01)
    keys = np.arange(2_000, dtype=np.uint64)
    for strided in (keys[::2], keys[::-1]):
        with pytest.raises(TypeError):
            _native._cxx_batch_seconds(f, strided, True)
    _native._cxx_batch_seconds(f, keys[::2].copy(), True)
    assert f.contains_many(keys[::2].copy()).all()


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.uint32, np.int64, np.uint64])
@pytest.mark.parametrize("integer_hash", ["xxh3", "mix"])
def test_numpy_integer_scalars_are_the_int_keys(dtype, integer_hash):
    # Regression: a NumPy scalar (what iterating an array yields) was hashed as its raw bytes,
    # so `x in f` missed the keys add_many(array) had inserted, and the reverse.
    keys = np.arange(200, dtype=dtype)
    f = bloomery.BlockedFilter(10_000, 0.001, integer_hash=integer_hash)
    f.add_many(keys)
    assert all(x in f for x in keys)
    assert f.contains_many(list(keys)).all()
    g = bloomery.BlockedFilter(10_000, 0.001, integer_hash=integer_hash)
    for x in keys:
        g.add(x)
    assert g.tobytes() == f.tobytes()
    assert bloomery.hash_key(keys[7], integer_hash=integer_hash) == bloomery.hash_key(
        7, integer_hash=integer_hash)


def test_numpy_scalars_that_are_not_uint64_ints_are_refused_like_their_python_values():
    f = bloomery.BlockedFilter(1_000, 0.01)
    for bad in (np.float64(1.5), np.float32(2.0), np.bool_(True), np.complex128(1),
                np.timedelta64(5, "s"), np.datetime64("2026-01-01")):
        with pytest.raises(TypeError):
            f.add(bad)
        with pytest.raises(TypeError):
            f.add_many([bad])
    with pytest.raises(OverflowError):
        f.add(np.int64(-1))
    # NumPy's str and bytes scalars are str and bytes.
    f.add(np.str_("a")), f.add(np.bytes_(b"b"))
    assert "a" in f and b"b" in f


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_len_of_a_saturated_filter_is_an_int(kind):
    # Regression: every bit set makes the estimate +inf, and len()/bool() raised OverflowError.
    f = {"blocked": lambda: bloomery.BlockedFilter(bits=512, hashes=4),
         "classic": lambda: bloomery.ClassicFilter(bits=512, hashes=4),
         "counting": lambda: bloomery.CountingFilter(bits=512, hashes=4),
         "scalable": lambda: bloomery.ScalableFilter(1_000, 0.01)}[kind]()
    f.update(range(100_000))
    assert 0 < len(f) <= 8 * f.memory_bytes
    assert bool(f)


def test_paths_with_a_nul_are_value_errors_and_path_likes_work(tmp_path):
    # Regression: the C API cut a path at an embedded NUL, so save("a\0.bak") wrote "a".
    import pathlib

    f = bloomery.BlockedFilter(1_000, 0.01)
    f.add("k")
    target = tmp_path / "state.bloom"
    for call in (lambda p: f.save(p), bloomery.BlockedFilter.load, bloomery.BlockedFilter.map,
                 bloomery.info, bloomery.load):
        with pytest.raises(ValueError):
            call(str(target) + "\0.bak")
    assert not target.exists()
    f.save(target)  # os.PathLike and bytes paths are taken as open() takes them
    assert "k" in bloomery.load(pathlib.Path(target))
    assert "k" in bloomery.BlockedFilter.map(os.fsencode(target))
    assert bloomery.info(target)["kind"] == "blocked"


@pytest.mark.parametrize("cls", [bloomery.BlockedFilter, bloomery.WindowedFilter])
def test_save_onto_its_own_writable_mapping_is_refused(tmp_path, cls):
    # Regression: the rename replaced the file under the mapping, whose later adds (and flush)
    # went to the unlinked old file.
    path = tmp_path / "mapped.bloom"
    cls(1_000, 0.01).save(path)
    writer = cls.map(path, writable=True)
    with pytest.raises(ValueError, match="flush"):
        writer.save(path)
    writer.save(tmp_path / "other.bloom")  # another file is fine
    writer.flush()
    del writer
    cls.map(path).save(path)  # and so is a read-only (copy-on-write) mapping's
    writer = cls.map(path, writable=True)
    writer.add("after")
    writer.flush()
    assert "after" in cls.load(path)


MAPPABLE = {
    "blocked": lambda: bloomery.BlockedFilter(1_000, 0.01),
    "classic": lambda: bloomery.ClassicFilter(1_000, 0.01),
    "counting": lambda: bloomery.CountingFilter(1_000, 0.01),
    "windowed": lambda: bloomery.WindowedFilter(1_000, 0.01),
}


def map_writable(tmp_path, kind):
    """A new filter of `kind` saved to tmp_path/lk.bf and mapped read-write: (make, cls, path, mapping)."""
    make = MAPPABLE[kind]
    cls = type(make())
    path = tmp_path / "lk.bf"
    make().save(path)
    return make, cls, path, cls.map(path, writable=True)


@pytest.mark.parametrize("kind", sorted(MAPPABLE))
def test_save_onto_a_file_another_filter_maps_writable_is_refused(tmp_path, kind):
    # Regression (#30): save() took no lock, so it renamed a new file over a read-write mapping
    # held by another filter of this process; the mapping's adds and flush() went on, successful,
    # into the unlinked old file, and the file at the path never had them.
    make, cls, path, mapped = map_writable(tmp_path, kind)
    for saver in (make(), bloomery.ScalableFilter(100, 0.01)):  # every kind's save() locks
        with pytest.raises(BlockingIOError, match=f"{re.escape(str(path))} is locked by pid {os.getpid()}"):
            saver.save(path)
    mapped.add("kept?")
    mapped.flush()
    assert "kept?" in cls.load(path)
    del mapped
    # Not mapped: saving over the file works, again and again; so does saving a new file.
    make().save(path)
    make().save(path)
    assert "kept?" not in cls.load(path)
    make().save(tmp_path / "new.bf")
    cls.map(path).add("private")  # a read-only (copy-on-write) mapping holds no lock
    make().save(path)


def test_save_onto_a_file_another_process_maps_writable_names_it(tmp_path):
    path = tmp_path / "lk.bf"
    bloomery.BlockedFilter(1_000, 0.01).save(path)
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys
            import bloomery
            m = bloomery.BlockedFilter.map({str(path)!r}, writable=True)
            print("mapped", flush=True)
            sys.stdin.read()
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=os.environ.copy())
    try:
        assert holder.stdout.readline().strip() == "mapped"
        with pytest.raises(BlockingIOError, match=f"{re.escape(str(path))} is locked by pid {holder.pid}"):
            bloomery.BlockedFilter(1_000, 0.01).save(path)
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    bloomery.BlockedFilter(1_000, 0.01).save(path)  # the mapping ended: saving works again


@pytest.mark.parametrize("kind", sorted(MAPPABLE))
def test_flush_after_another_file_replaced_the_mapped_one_raises(tmp_path, kind):
    # Regression (#30): flush() returned success while its file was no longer the one the path
    # names (a writer that takes no lock renamed another file over it).
    make, cls, path, mapped = map_writable(tmp_path, kind)
    mapped.add("before")
    mapped.flush()
    make().save(tmp_path / "other.bf")
    os.replace(tmp_path / "other.bf", path)
    mapped.add("kept?")
    with pytest.raises(ValueError, match="no longer names the mapped file"):
        mapped.flush()
    assert "kept?" not in cls.load(path)
    mapped.save(tmp_path / "kept.bf")  # the adds are still in the filter: a save keeps them
    assert "kept?" in cls.load(tmp_path / "kept.bf")


@pytest.mark.parametrize("path", ["copy", "copy.copy", "copy.deepcopy", "pickle", "union"])
def test_scalable_copies_keep_max_memory(path):
    # Regression (#30): copies were loaded with no cap, so a full filter's copy grew past it (to
    # 949,632 bytes for a cap of 65,536).
    f = bloomery.ScalableFilter(100, 0.01, max_memory=65_536, concurrent=True, huge_pages=False)
    with pytest.raises(bloomery.FilterFullError):
        f.update(f"k{i}" for i in range(100_000))
    assert f.full and f.memory_bytes <= 65_536
    g = {"copy": lambda: f.copy(), "copy.copy": lambda: copy.copy(f),
         "copy.deepcopy": lambda: copy.deepcopy(f), "pickle": lambda: pickle.loads(pickle.dumps(f)),
         "union": lambda: f | f}[path]()
    assert g.max_memory == 65_536 and g.concurrent
    assert (g.stages, g.memory_bytes) == (f.stages, f.memory_bytes)
    with pytest.raises(bloomery.FilterFullError):
        g.update(f"new{i}" for i in range(100_000))
    assert g.full and g.memory_bytes == f.memory_bytes
    assert all(f"k{i}" in g for i in range(len(f)))


def test_scalable_pickle_of_the_earlier_state_still_loads():
    f = bloomery.ScalableFilter(100, 0.01, concurrent=True)
    f.update(range(1_000))
    g = type(f).__new__(type(f))
    g.__setstate__((f.tobytes(), True))  # (bytes, concurrent): pickles made before max_memory
    assert g.concurrent and g.max_memory == 0 and all(i in g for i in range(1_000))


def test_scalable_filter_that_cannot_be_planned_is_a_value_error_not_full():
    # Issue #30: a first stage with no plan was MemoryError "filter is full".
    with pytest.raises(ValueError, match="first stage cannot be planned") as refused:
        bloomery.ScalableFilter(100, 1e-300)
    assert "full" not in str(refused.value)


# pybloom-live's BloomFilter and ScalableBloomFilter (issue #28), checked against
# pybloom_live/pybloom.py: add() raises IndexError once count reaches capacity (checked before
# each key), count/len() are the new keys.


def test_bloomfilter_refuses_the_key_past_capacity_like_pybloom():
    f = bloomery.BloomFilter(5, 0.01)
    assert [f.add(f"item_{i}") for i in range(5)] == [False] * 5
    assert f.count == len(f) == 5
    with pytest.raises(IndexError, match="BloomFilter is at capacity"):
        f.add("overflow_item")
    with pytest.raises(IndexError, match="BloomFilter is at capacity"):
        f.add("item_0")  # checked before the key: a duplicate is refused too
    assert "overflow_item" not in f and f.count == 5
    # The C++-named kind keeps its behaviour: capacity is a plan, not a limit.
    g = bloomery.BlockedFilter(5, 0.01)
    assert [g.add(f"item_{i}") for i in range(7)] == [False] * 7


def test_bloomfilter_duplicates_do_not_count_towards_capacity():
    f = bloomery.BloomFilter(3, 0.01)
    for _ in range(10):
        assert f.add("same") in (False, True)
    assert f.count == 1
    f.add("b")
    f.add("c")
    with pytest.raises(IndexError):
        f.add("d")


@pytest.mark.parametrize(
    "batch",
    [
        lambda n: [f"url{i}" for i in range(n)],
        lambda n: (f"url{i}" for i in range(n)),
        lambda n: np.arange(n, dtype=np.uint64),
        lambda n: np.arange(n + 1, dtype=np.uint32)[1:],  # a view at an offset, sliced in place
    ],
    ids=["list", "generator", "uint64_array", "uint32_view"],
)
def test_bloomfilter_batches_past_capacity_stop_where_add_would(batch):
    keys = list(batch(2_500))
    f = bloomery.BloomFilter(1_000, 0.01)
    f.add_many(batch(300))
    assert f.count == 300
    with pytest.raises(IndexError, match="BloomFilter is at capacity"):
        f.add_many(batch(2_500))
    # The keys before the one that found the filter full are in, none after it was counted.
    assert f.count == 1_000
    assert all(k in f for k in keys[:1_000])
    assert f.contains_many(keys[1_000:], count=True) < 100  # false positives only (~1%)
    with pytest.raises(IndexError):
        f.update(batch(2))
    assert f.add_many([]) == 0  # no key, no refusal (pybloom's loop would not call add)


def test_bloomfilter_batch_within_capacity_counts_the_new_keys():
    f = bloomery.BloomFilter(100, 0.01)
    assert f.add_many(["a", "b", "a", "c"]) == 3
    f.update(np.arange(97, dtype=np.uint64))
    assert f.count == 100
    with pytest.raises(IndexError):
        f.add("z")


def test_bloomfilter_count_survives_copies_pickles_and_unions():
    f = bloomery.BloomFilter(4, 0.01)
    f.update(["a", "b", "c", "d"])
    for g in (f.copy(), copy.copy(f), copy.deepcopy(f), pickle.loads(pickle.dumps(f)), f | f,
              f.union(f), f & f):
        assert type(g) is bloomery.BloomFilter
        assert g.count == 4 and "a" in g
        with pytest.raises(IndexError):
            g.add("e")
    h = bloomery.BloomFilter.frombytes(f.tobytes())  # the file keeps no count: estimated
    assert type(h) is bloomery.BloomFilter and h.count == 4
    with pytest.raises(IndexError):
        h.add("e")


def test_bloomfilter_error_rate_is_the_rate_asked_for():
    f = bloomery.BloomFilter(capacity=1_000, error_rate=0.001)
    assert f.error_rate == 0.001  # was the predicted 0.000939...
    assert bloomery.BloomFilter(500, 0.05).error_rate == 0.05
    assert 0 < f.predicted_error_rate <= 0.001
    assert f.predicted_error_rate == bloomery.BlockedFilter(1_000, 0.001).error_rate
    f.add("a")
    for g in (f.copy(), pickle.loads(pickle.dumps(f)), f | f, f & f):
        assert g.error_rate == 0.001
    # The file keeps only the geometry: a loaded filter answers the predicted rate.
    assert bloomery.BloomFilter.frombytes(f.tobytes()).error_rate == f.predicted_error_rate


@pytest.mark.parametrize("error_rate", [0.1, 0.01, 0.001])
def test_bloomfilter_tofile_keeps_the_rate_asked_for_and_the_count(error_rate, tmp_path):
    # pybloom-live's own suite: fromfile gave back the planned rate (0.01 -> 0.0092, 0.001 ->
    # 0.00094, 0.1 -> 0.0997) and an estimated count.
    f = bloomery.BloomFilter(1_000, error_rate)
    keys = urls("tofile", 700)
    f.update(keys)
    assert f.predicted_error_rate != error_rate  # what fromfile answered before
    other = bloomery.BloomFilter(50, error_rate)
    other.update(["x", "y"])
    # pybloom-live's way: filters one after another in one file, each read back with its length.
    path = tmp_path / "filters.pybloom"
    with open(path, "wb") as out:
        f.tofile(out)
        length = out.tell()
        other.tofile(out)
    buffer = io.BytesIO()
    f.tofile(buffer)
    buffer.seek(0)
    with open(path, "rb") as stream:
        loaded = [bloomery.BloomFilter.fromfile(stream, length),
                  bloomery.BloomFilter.fromfile(stream),
                  bloomery.BloomFilter.fromfile(buffer)]
    for g, original in zip(loaded, (f, other, f)):
        assert type(g) is bloomery.BloomFilter
        assert g.error_rate == error_rate
        assert g.count == len(g) == original.count
        assert g.capacity == original.capacity
        assert g.predicted_error_rate == original.predicted_error_rate
    assert loaded[0].contains_many(keys).all() and "x" in loaded[1]
    # The file starts with pybloom-live's header: its error_rate as asked, its count.
    assert buffer.getvalue()[:40] == struct.pack("<dQQQQ", error_rate, f.hashes, 0, 1_000, f.count)
    assert buffer.getvalue()[40:] == f.tobytes()


def test_bloomfilter_fromfile_reads_files_written_before_the_pybloom_header():
    f = bloomery.BloomFilter(1_000, 0.01)
    keys = urls("old file", 300)
    f.update(keys)
    old = io.BytesIO()
    bloomery.BlockedFilter.tofile(f, old)  # what BloomFilter.tofile wrote before
    assert old.getvalue() == f.tobytes()
    old.seek(0)
    g = bloomery.BloomFilter.fromfile(old)
    # The file keeps only the geometry: the predicted rate, the count estimated from the bits.
    assert type(g) is bloomery.BloomFilter and g.error_rate == f.predicted_error_rate
    assert g.count == min(bloomery.BlockedFilter.__len__(f), 1_000)
    assert g.contains_many(keys).all()


def test_bloomfilter_fromfile_refuses_bad_headers():
    # pybloom-live's own files are read: test_pybloom_files.py.
    with pytest.raises(bloomery.FormatError):
        bloomery.BloomFilter.fromfile(io.BytesIO(b""))
    f = bloomery.BloomFilter(100, 0.01)
    f.update(["a", "b"])
    for rate, hashes, capacity, count in ((0.0, f.hashes, 100, 2), (float("nan"), f.hashes, 100, 2),
                                          (0.01, f.hashes + 1, 100, 2), (0.01, f.hashes, 99, 2),
                                          (0.01, f.hashes, 100, 101)):
        header = struct.pack("<dQQQQ", rate, hashes, 0, capacity, count)
        with pytest.raises(bloomery.FormatError, match="does not describe the filter"):
            bloomery.BloomFilter.fromfile(io.BytesIO(header + f.tobytes()))


def test_scalable_bloomfilter_tofile_keeps_the_rate_asked_for():
    # Its file keeps the chain's bound as asked (the stages' shares are derived from it).
    for error_rate in (0.1, 0.01, 0.001):
        s = bloomery.ScalableBloomFilter(100, error_rate)
        s.update(range(1_000))
        buffer = io.BytesIO()
        s.tofile(buffer)
        buffer.seek(0)
        loaded = bloomery.ScalableBloomFilter.fromfile(buffer)
        assert type(loaded) is bloomery.ScalableBloomFilter
        assert loaded.error_rate == error_rate
        assert [(g.capacity, g.count, g.error_rate) for g in loaded.filters] == \
            [(g.capacity, g.count, g.error_rate) for g in s.filters]


def test_bloomfilter_bad_capacity_or_rate_is_a_value_error_like_pybloom():
    for capacity in (-100, 0):
        with pytest.raises(ValueError, match="Capacity must be > 0"):
            bloomery.BloomFilter(capacity=capacity, error_rate=0.01)  # -100 was TypeError
    for rate in (0, 1.0, -0.1):
        with pytest.raises(ValueError, match="Error_Rate must be between 0 and 1"):
            bloomery.BloomFilter(capacity=100, error_rate=rate)


def test_bloomfilter_add_skip_check_counts_without_looking():
    f = bloomery.BloomFilter(3, 0.01)
    assert f.add("a") is False
    assert f.add("a", skip_check=True) is False  # was TypeError
    assert f.count == 2 and "a" in f
    assert f.add("b", skip_check=True) is False and "b" in f
    with pytest.raises(IndexError):
        f.add("c", skip_check=True)


def test_bloomfilter_add_takes_pybloom_arguments_only():
    # add is a C method (as fast as BlockedFilter.add): its argument handling is its own.
    f = bloomery.BloomFilter(10, 0.01)
    assert f.add("a", True) is False and f.add("a", 0) is True  # skip_check by position
    with pytest.raises(TypeError):
        f.add()
    with pytest.raises(TypeError):
        f.add("a", False, True)
    with pytest.raises(TypeError, match="unexpected keyword argument 'check'"):
        f.add("a", check=True)
    with pytest.raises(TypeError, match="unexpected keyword argument 'skip_check'"):
        f.add("a", True, skip_check=True)
    with pytest.raises(TypeError):
        f.add(1.5)  # not a key: nothing counted
    assert f.count == 1 and len(f) == 1
    with pytest.raises(TypeError):
        f.count = -1
    assert f.count == 1


def test_scalable_bloomfilter_grows_x4_by_default_and_names_it_scale():
    s = bloomery.ScalableBloomFilter()
    assert s.scale == s.mode == bloomery.ScalableBloomFilter.LARGE_SET_GROWTH == 4
    assert (s.initial_capacity, s.error_rate) == (100, 0.001)
    assert bloomery.ScalableBloomFilter.SMALL_SET_GROWTH == 2
    small = bloomery.ScalableBloomFilter(10, 0.01, mode=bloomery.ScalableBloomFilter.SMALL_SET_GROWTH)
    assert small.scale == 2
    assert bloomery.ScalableFilter().mode == 2  # the C++-named kind keeps its default
    s = bloomery.ScalableBloomFilter(initial_capacity=10)
    s.update(range(50))  # 10 + 40: two stages x4, three x2
    assert s.stages == 2 and s.capacity == 50
    assert isinstance(s, bloomery.ScalableFilter) and all(i in s for i in range(50))


def test_scalable_bloomfilter_lists_its_filters_like_pybloom():
    s = bloomery.ScalableBloomFilter(initial_capacity=10, error_rate=0.01)
    assert s.filters == []  # pybloom-live makes its first filter at the first add
    s.add("first")
    assert [(f.capacity, f.count, len(f)) for f in s.filters] == [(10, 1, 1)]
    s.update(range(100))  # 10 + 40 + 160
    assert [f.capacity for f in s.filters] == [10, 40, 160]
    assert sum(f.count for f in s.filters) == len(s) > 95  # 101 less false positives
    assert s.capacity == sum(f.capacity for f in s.filters)
    assert [f.count for f in s.filters][:2] == [10, 40]
    shares = [f.error_rate for f in s.filters]
    assert shares == sorted(shares, reverse=True) and sum(shares) < s.error_rate
    assert all(f.num_bits % 512 == 0 and f.num_slices > 0 for f in s.filters)
    s.clear()
    assert s.filters == []


def test_scalable_bloomfilter_union_like_pybloom():
    a = bloomery.ScalableBloomFilter(10, 0.01, mode=bloomery.ScalableBloomFilter.SMALL_SET_GROWTH)
    b = bloomery.ScalableBloomFilter(10, 0.01, mode=bloomery.ScalableBloomFilter.SMALL_SET_GROWTH)
    a.update(range(50))
    b.update(range(50, 100))
    for u in (a | b, a.union(b)):  # both grew past their first stage: refused before
        assert type(u) is bloomery.ScalableBloomFilter and u.scale == 2
        assert all(i in u for i in range(100))
        assert len(u.filters) > len(a.filters)
    # Copies and loads are of pybloom's class too, with its filters.
    buffer = io.BytesIO()
    a.tofile(buffer)
    buffer.seek(0)
    for c in (a.copy(), copy.copy(a), copy.deepcopy(a), pickle.loads(pickle.dumps(a)),
              bloomery.ScalableBloomFilter.fromfile(buffer),
              bloomery.ScalableBloomFilter.frombytes(a.tobytes())):
        assert type(c) is bloomery.ScalableBloomFilter
        assert [(f.capacity, f.count) for f in c.filters] == [(f.capacity, f.count)
                                                               for f in a.filters]
    for other in (bloomery.ScalableBloomFilter(20, 0.01, mode=2),
                  bloomery.ScalableBloomFilter(10, 0.001, mode=2),
                  bloomery.ScalableBloomFilter(10, 0.01, mode=4)):
        with pytest.raises(ValueError, match="same mode, initial capacity and error rate"):
            a.union(other)
        with pytest.raises(ValueError, match="same mode, initial capacity and error rate"):
            a | other


def test_bloomfilter_union_of_another_capacity_or_rate_says_so_like_pybloom():
    f = bloomery.BloomFilter(100, 0.01)
    for other in (bloomery.BloomFilter(200, 0.01), bloomery.BloomFilter(100, 0.001)):
        with pytest.raises(ValueError, match="same capacity and error rate"):
            f.union(other)
        with pytest.raises(ValueError, match="same capacity and error rate"):
            f | other
        with pytest.raises(ValueError, match="equal capacity and error rate"):
            f.intersection(other)
    f.add("a")
    assert "a" in f.union(bloomery.BloomFilter(100, 0.01))


@pytest.mark.parametrize("kind", ["BlockedFilter", "ClassicFilter", "CountingFilter"])
def test_a_geometry_that_cannot_hold_its_capacity_is_refused_at_creation(kind):
    """4096 bits for a million keys (a typo, 4K for 4G) was accepted; then tobytes, save, copy,
    pickle and | failed ("planned fpr outside [0, 1)"). Refused when asked for, naming the numbers."""
    cls = getattr(bloomery, kind)
    with pytest.raises(ValueError, match="4096 bits cannot hold 1000000 keys"):
        cls(capacity=10**6, bits=4096, hashes=4)
    layouts = ["word64", "block256", "line512"] if kind == "BlockedFilter" else [None]
    for layout in layouts:
        options = {} if layout is None else {"layout": layout}
        with pytest.raises(ValueError, match="cannot hold"):
            cls(capacity=10**6, bits=4096, hashes=4, **options)
    # A poor geometry that still plans an FPR below 1 is kept, and everything that saves works.
    f = cls(capacity=3000, bits=4096, hashes=4)
    assert 0.5 < f.error_rate < 1
    assert pickle.loads(pickle.dumps(f)).tobytes() == f.tobytes()
    assert f.copy().tobytes() == f.tobytes()


@pytest.mark.parametrize("kind", ["BlockedFilter", "ClassicFilter", "CountingFilter"])
def test_a_filter_sized_by_bits_and_hashes_reports_the_capacity_its_fpr_is_planned_at(kind):
    """Python said capacity 0 and error_rate 0 for BlockedFilter(bits=4096, hashes=4); C++ said 709
    keys (4096 ln 2 / 4) and planned no FPR there. Both say 709 keys and the FPR at 709 keys now."""
    f = getattr(bloomery, kind)(bits=1 << 20, hashes=7)
    cells = (1 << 20) // (f.counter_bits if kind == "CountingFilter" else 1)
    assert f.capacity == int(cells * math.log(2) / 7)
    assert 0.005 < f.error_rate < 0.02
    f.update(f"key{i}" for i in range(f.capacity))
    absent = 200_000
    hits = sum(f"absent{i}" in f for i in range(absent))
    sd = math.sqrt(absent * f.error_rate * (1 - f.error_rate))
    assert abs(hits - absent * f.error_rate) <= 6 * sd + 1
    assert type(f).frombytes(f.tobytes()).error_rate == f.error_rate


HEALTH_FIELDS = {"state", "capacity", "inserted", "estimated_count", "estimated_count_error",
                 "fill_ratio", "planned_fpr", "estimated_fpr", "estimated_fpr_error", "sampled"}


@pytest.mark.parametrize("cls", [bloomery.BlockedFilter, bloomery.ClassicFilter,
                                 bloomery.CountingFilter])
def test_health_goes_ok_near_over_as_a_fixed_filter_fills_past_capacity(cls):
    states = []
    for percent in (50, 95, 130):
        f = cls(20_000, 0.01)
        f.update(range(20_000 * percent // 100))
        h = f.health()
        assert set(h) == HEALTH_FIELDS
        assert h["capacity"] == f.capacity and h["planned_fpr"] == f.error_rate
        assert h["inserted"] is None  # these kinds count nothing on insert
        assert h["estimated_fpr"] == pytest.approx(f.estimated_fpr(), rel=1e-12)  # read whole
        assert h["estimated_fpr_error"] == 0 and h["sampled"] is False
        truth = 20_000 * percent // 100
        assert abs(h["estimated_count"] - truth) <= max(0.03 * truth, h["estimated_count_error"])
        assert 0 < h["fill_ratio"] < 1
        states.append(h["state"])
    assert states == ["ok", "near_limit", "over_limit"]


def test_health_of_a_scalable_chain_counts_its_keys_and_stays_ok_while_it_grows():
    f = bloomery.ScalableFilter(1_000, 0.01)
    f.update(range(5_000))
    h = f.health()
    assert set(h) == HEALTH_FIELDS
    assert h["state"] == "ok"
    assert h["capacity"] == f.capacity > 5_000
    assert 4_950 <= h["inserted"] <= 5_000  # the stages' counts: keys reported added
    assert abs(h["estimated_count"] - 5_000) <= 150
    assert h["estimated_fpr"] <= h["planned_fpr"] == 0.01


def test_health_of_windows_key_count_stays_ok_a_duration_window_overfills():
    by_keys = bloomery.WindowedFilter(1_000, 0.01)
    by_keys.update(range(5_000))  # five windows' worth: rotation keeps one
    assert by_keys.health()["state"] == "ok"
    by_time = bloomery.WindowedFilter(1_000, 0.01, window=3600)
    by_time.update(range(100))
    assert by_time.health()["state"] == "ok"
    by_time.update(range(1_000))  # a window's keys within one generation's time
    h = by_time.health()
    assert h["state"] == "over_limit" and h["estimated_fpr"] > h["planned_fpr"]


def test_health_of_a_large_filter_is_sampled_with_a_stated_error():
    f = bloomery.BlockedFilter(6_000_000, 0.01)  # ~7 MiB: above the 4 MiB read whole
    f.update(np.arange(3_000_000, dtype=np.uint64))
    h = f.health()
    assert h["sampled"] is True and h["estimated_fpr_error"] > 0
    assert abs(h["estimated_fpr"] - f.estimated_fpr()) <= h["estimated_fpr_error"]
    assert abs(h["estimated_count"] - 3_000_000) <= h["estimated_count_error"]
    assert f.health() == h  # a fixed seed: the same bits, the same reading


@pytest.mark.parametrize("layout", ["line512", "block256", "word64"])
def test_folded_shrinks_an_over_sized_filter_within_the_fpr_and_keeps_every_key(layout):
    f = bloomery.BlockedFilter(1_000_000, 0.01, layout=layout)
    f.update(range(10_000))
    g = f.folded(0.01)
    assert type(g) is bloomery.BlockedFilter
    assert g.layout == layout and g.num_slices == f.num_slices and g.seed == f.seed
    assert g.memory_bytes * 32 <= f.memory_bytes
    assert g.estimated_fpr() <= 0.01 and g.error_rate <= 0.01
    assert 10_000 <= g.capacity <= f.capacity
    assert all(k in g for k in range(10_000))
    assert g.health()["state"] == "ok"
    # The fold is a filter like any other: it round-trips and merges with its own size.
    assert bloomery.BlockedFilter.frombytes(g.tobytes()).tobytes() == g.tobytes()
    assert f.folded(0.01).tobytes() == g.tobytes()  # the same answer twice
    with pytest.raises(ValueError, match="already"):
        g.folded(g.estimated_fpr() / 2)
    with pytest.raises(ValueError, match="cannot halve"):
        bloomery.BlockedFilter(bits=512 * 1001, hashes=6).folded(0.5)
    with pytest.raises(ValueError):
        f.folded(1.5)
    assert not hasattr(bloomery.ScalableFilter(1000, 0.01), "folded")


def test_classic_folded_halves_its_slices_and_keeps_every_key():
    f = bloomery.ClassicFilter(1_000_000, 0.01)
    f.update(range(10_000))
    g = f.folded(0.01)
    assert type(g) is bloomery.ClassicFilter
    assert g.memory_bytes * 32 <= f.memory_bytes
    assert g.estimated_fpr() <= 0.01 and g.error_rate <= 0.01
    assert all(k in g for k in range(10_000))


@pytest.mark.parametrize("make", [lambda: bloomery.BlockedFilter(10_000, 0.001),
                                  lambda: bloomery.ScalableFilter(1_000, 0.001),
                                  lambda: bloomery.CountingFilter(10_000, 0.001),
                                  lambda: bloomery.BloomFilter(10_000, 0.001)])
def test_add_many_present_answers_in_adds_sense(make):
    f = make()
    keys = [f"k{i}" for i in range(3_000)]
    first = f.add_many(keys[:2_000], present=True)
    assert first.dtype == bool and first.shape == (2_000,)
    assert first.sum() <= 10  # new keys: False, but for false positives within the batch
    again = f.add_many(iter(keys[1_000:]), present=True)  # unknown length: collected
    assert again.shape == (2_000,)
    assert again[:1_000].all()  # already present, as add() says
    # One by one, add() gives the same answers on a copy of the same history.
    g = make()
    g.add_many(keys[:2_000])
    if isinstance(g, bloomery.BloomFilter):
        expected = [g.add(k) for k in keys[1_000:]]
    else:
        expected = [k in g or (g.add(k) and False) for k in keys[1_000:]]
    assert list(again) == expected
    if isinstance(f, bloomery.BloomFilter):
        assert f.count == g.count == 4_000 - int(first.sum()) - int(again.sum())


def test_bloomfilter_add_many_present_stops_at_capacity_as_add_does():
    f = bloomery.BloomFilter(100, 0.001)
    with pytest.raises(IndexError):
        f.add_many(range(150), present=True)
    assert f.count == 100
    assert f.add_many([], present=True).shape == (0,)


@pytest.mark.parametrize("make", [lambda: bloomery.BlockedFilter(1_000_000, 0.01),
                                  lambda: bloomery.BlockedFilter(1_000_000, 0.01, layout="word64"),
                                  lambda: bloomery.ClassicFilter(1_000_000, 0.01)])
def test_folded_under_max_memory_is_refused_only_for_a_result_over_it(make):
    # Issue #50: max_memory=4096 refused a 1,920-byte result, naming the first halving's bytes.
    f = make()
    f.update(range(2_000))
    result = f.folded(0.01).memory_bytes
    assert result * 64 <= f.memory_bytes  # halvings far over the result came before it
    g = f.folded(0.01, max_memory=result)
    assert g.memory_bytes == result and g.tobytes() == f.folded(0.01).tobytes()
    assert all(k in g for k in range(2_000))
    with pytest.raises(MemoryError, match=f"{result} bytes") as refused:
        f.folded(0.01, max_memory=result - 1)
    assert f"{f.memory_bytes // 2} bytes" not in str(refused.value)
