"""One call per public signature of bloomery, typed: test_stubs.py type-checks this file against
python/bloomery/__init__.pyi with mypy --strict, and runs it against the extension, so a call
the library accepts and the stubs reject (or the reverse) fails the suite."""

import datetime
import io
import os
from typing import Literal

import numpy as np
import numpy.typing as npt

import bloomery


def fixed_size(directory: str) -> None:
    f = bloomery.BlockedFilter(10_000, 0.01, seed=7, integer_hash="mix", concurrent=False,
                               max_memory=0, huge_pages=False, populate=False, layout="word64")
    auto = bloomery.BlockedFilter(10_000, 0.01, layout="auto", prefer="fastest")
    sized = bloomery.BlockedFilter(bits=1 << 16, hashes=4, integer_hash="seeded-mix")
    new: bool = f.add("a")
    present: bool = b"a" in f
    added: int = f.add_many(["b", b"c", 3])
    answers: npt.NDArray[np.bool_] = f.add_many(np.arange(10, dtype=np.uint64), present=True)
    f.update([bytearray(b"d"), memoryview(b"e")])
    hits: npt.NDArray[np.bool_] = f.contains_many(["a", "z"])
    count: int = f.contains_many(["a", "z"], count=True)
    columns: int = f.add_many(np.array([b"ab", b"c"], "S4"))  # fixed-width bytes, 'U', object
    in_columns: npt.NDArray[np.bool_] = f.contains_many(np.array(["ab", "é"]))
    f.update(np.array(["ab", b"c"], dtype=object))
    either = f.contains_many(["a"], count=False)
    size: int = len(f)
    fpr: float = f.estimated_fpr()
    state: Literal["ok", "near_limit", "over_limit"] = f.health()["state"]
    other = bloomery.BlockedFilter(10_000, 0.01, seed=7, integer_hash="mix", layout="word64")
    f.union_update(other)
    f |= other
    both: bloomery.BlockedFilter = f | other
    union: bloomery.BlockedFilter = f.union(other)
    common: bloomery.BlockedFilter = f.intersection(other)
    f.intersection_update(other)
    f &= other
    meet: bloomery.BlockedFilter = f & other
    facts: tuple[int, float, int, str, bool, int, int, int, int] = (
        f.capacity, f.error_rate, f.seed, f.integer_hash, f.concurrent, f.memory_bytes,
        f.num_bits, f.hashes, f.num_slices)
    layout: Literal["line512", "block256", "word64", "partitioned"] = f.layout
    path = os.path.join(directory, "blocked.bloom")
    f.save(path)
    loaded = bloomery.BlockedFilter.load(path, concurrent=False, max_bytes=0,
                                         verify_checksums=True, allow_dirty=False)
    mapped = bloomery.BlockedFilter.map(path, writable=True, max_bytes=0, allow_dirty=False)
    mapped.add("mapped")
    mapped.flush()
    data: bytes = f.tobytes()
    again = bloomery.BlockedFilter.frombytes(data, concurrent=False, max_bytes=0)
    buffer = io.BytesIO()
    f.tofile(buffer)
    buffer.seek(0)
    from_file = bloomery.BlockedFilter.fromfile(buffer)
    copied: bloomery.BlockedFilter = f.copy()
    big = bloomery.BlockedFilter(1_000_000, 0.01)
    big.add_many(range(100))
    folded: bloomery.BlockedFilter = big.folded(0.01, max_memory=1 << 20)
    f.clear()
    classic = bloomery.ClassicFilter(1_000_000, 0.01)
    classic.add("a")
    classic_folded: bloomery.ClassicFilter = classic.folded(0.01, max_memory=1 << 20)
    partitioned: Literal["line512", "block256", "word64", "partitioned"] = classic.layout
    assert partitioned == "partitioned"
    del (new, present, added, answers, hits, count, either, size, fpr, state, both, union, common,
         meet, facts, layout, loaded, again, from_file, copied, folded, classic_folded, auto, sized)


def counting() -> None:
    c = bloomery.CountingFilter(10_000, 0.01, counter_bits=8, seed=1, integer_hash="xxh3",
                                concurrent=False, max_memory=0, huge_pages=False, populate=False)
    c.add("a")
    removed: bool = c.remove("a")
    removed_many: int = c.remove_many(["a", "b"])
    times: int = c.count("a")
    bits: int = c.counter_bits
    del removed, removed_many, times, bits


def scalable() -> None:
    s = bloomery.ScalableFilter(100, 0.01, bloomery.ScalableFilter.LARGE_SET_GROWTH,
                                tightening=0.8, seed=3, integer_hash="mix", concurrent=False,
                                max_memory=0, max_stages=32, scaling=True, huge_pages=False,
                                layout="partitioned")
    s.add_many(range(1000))
    layout: Literal["line512", "block256", "word64", "partitioned"] = s.layout
    assert layout == "partitioned"
    growth: int = bloomery.ScalableFilter.SMALL_SET_GROWTH
    facts: tuple[int, int, int, bool, int, float] = (
        s.initial_capacity, s.mode, s.stages, s.full, s.max_memory, s.planned_error_rate)
    sb = bloomery.ScalableBloomFilter(100, 0.01, 4, layout="partitioned")
    sb.add("a")
    scale: int = sb.scale
    stages: list[object] = sb.filters
    joined: bloomery.ScalableFilter = sb.union(bloomery.ScalableBloomFilter(100, 0.01, 4,
                                                                           layout="partitioned"))
    del growth, facts, scale, stages, joined


def windowed(directory: str) -> None:
    w = bloomery.WindowedFilter(1000, 0.01, window=datetime.timedelta(hours=1), generations=4,
                                refresh="keep_first_seen", hashes=4, seed=5, integer_hash="xxh3",
                                concurrent=False, max_memory=0, huge_pages=False,
                                layout="auto", prefer="smallest")
    w.add("a")
    w.advance()
    facts: tuple[float, int, str, int, str, int] = (
        w.window, w.generations, w.refresh, w.hashes, w.layout, w.epoch)
    del facts


def pybloom() -> None:
    b = bloomery.BloomFilter(1000, 0.01, bits=1 << 14, hashes=4, seed=1, integer_hash="xxh3",
                             concurrent=False, max_memory=0, huge_pages=False, populate=False)
    was: bool = b.add("a", skip_check=False)
    n: int = b.add_many(["b"])
    flags: npt.NDArray[np.bool_] = b.add_many(["c"], present=True)
    rates: tuple[int, float, float] = (b.count, b.error_rate, b.predicted_error_rate)
    del was, n, flags, rates


def module(directory: str) -> None:
    f = bloomery.BlockedFilter(1000, 0.01)
    path = os.path.join(directory, "module.bloom")
    f.save(path)
    header: dict[str, object] = bloomery.info(path)
    header_bytes: dict[str, object] = bloomery.info_bytes(f.tobytes())
    any_kind = bloomery.load(path, concurrent=False, max_bytes=0, verify_checksums=True,
                             allow_dirty=False)
    from_bytes = bloomery.loads(f.tobytes(), concurrent=False, max_bytes=0)
    pair: tuple[int, int] = bloomery.hash_key("a", 0, "xxh3")
    version: str = bloomery.__version__
    try:
        bloomery.loads(b"not a filter")
    except bloomery.FormatError:
        pass
    full = bloomery.ScalableFilter(10, 0.01, max_stages=1)
    try:
        full.add_many(range(1000))
    except bloomery.FilterFullError:
        pass
    del header, header_bytes, any_kind, from_bytes, pair, version


def main(directory: str) -> None:
    fixed_size(directory)
    counting()
    scalable()
    windowed(directory)
    pybloom()
    module(directory)


if __name__ == "__main__":
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        main(sys.argv[1] if len(sys.argv) > 1 else scratch)
