# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""Python-side cost of bloomery, as ratios to the C++ batch call and to a Python set.

    PYTHONPATH=python:build/python /usr/bin/python3 python/benchmarks/python_bench.py [--quick]

Prints per-key ns for
  - add(str) and `in` of URLs in an L2-sized filter (next to set.add / `in set`);
  - add_many / contains_many on a NumPy uint64 array, in cache and out of cache, next to the C++
    InsertMany / MayContainMany on the same keys (bloomery._native._cxx_batch_seconds times the C++
    call alone, in this process and run);
  - add_many / contains_many on a list of URL bytes (7M by default) next to the C++ batch;
  - memory: the filter's bytes next to a set's for the same URLs.
Each figure is the best of a few repetitions; on a shared machine compare the ratios, not the ns.
"""

import argparse
import gc
import platform
import sys
import time
import tracemalloc

import numpy as np

import bloomery
from bloomery import _native


def best_seconds(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def urls(n, prefix="https://www.example.com/"):
    return [f"{prefix}catalog/item/{i}?ref=list&page={i % 97}" for i in range(n)]


def row(name, ns, reference_name=None, reference_ns=None):
    ratio = f"{ns / reference_ns:6.2f}x {reference_name}" if reference_ns else ""
    print(f"  {name:<44} {ns:9.1f} ns/key   {ratio}")


def single_key(repeat):
    n = 20_000  # ~24 KiB of filter at 1%: in L2
    keys = urls(n)
    absent = urls(n, "https://absent.example.com/")
    f = bloomery.BlockedFilter(n, 0.01)
    add, s = f.add, set()
    print(f"single keys: {n} URL str, filter {f.memory_bytes} bytes (L2)")
    loop = best_seconds(lambda: [None for k in keys], repeat) / n * 1e9
    set_add = best_seconds(lambda: [s.add(k) for k in keys], repeat) / n * 1e9
    set_in = best_seconds(lambda: [k in s for k in absent], repeat) / n * 1e9
    row("empty Python loop", loop)
    row("set.add(str)", set_add)
    row("str in set", set_in)
    row("add(str)", best_seconds(lambda: [add(k) for k in keys], repeat) / n * 1e9, "set.add",
        set_add)
    row("str in filter (absent)",
        best_seconds(lambda: [k in f for k in absent], repeat) / n * 1e9, "in set", set_in)
    row("str in filter (present)",
        best_seconds(lambda: [k in f for k in keys], repeat) / n * 1e9, "in set", set_in)


def numpy_batches(n, label, repeat):
    keys = np.random.default_rng(1).integers(0, 2**63, size=n, dtype=np.uint64)
    absent = keys + np.uint64(1)
    f = bloomery.BlockedFilter(n, 0.01)
    print(f"NumPy uint64, {label}: {n} keys, filter {f.memory_bytes / 2**20:.1f} MiB")
    cxx_add = min(_native._cxx_batch_seconds(f, keys, True) for _ in range(repeat)) / n * 1e9
    py_add = best_seconds(lambda: f.add_many(keys), repeat) / n * 1e9
    cxx_in = min(_native._cxx_batch_seconds(f, absent, False) for _ in range(repeat)) / n * 1e9
    py_in = best_seconds(lambda: f.contains_many(absent), repeat) / n * 1e9
    py_count = best_seconds(lambda: f.contains_many(absent, count=True), repeat) / n * 1e9
    row("C++ InsertMany", cxx_add)
    row("add_many(array)", py_add, "C++", cxx_add)
    row("C++ MayContainMany", cxx_in)
    row("contains_many(array) -> bool array", py_in, "C++", cxx_in)
    row("contains_many(array, count=True)", py_count, "C++", cxx_in)


def bytes_batches(n, repeat):
    keys = [u.encode() for u in urls(n)]
    absent = [u.encode() for u in urls(n, "https://absent.example.com/")]
    f = bloomery.BlockedFilter(n, 0.01)
    print(f"URL bytes list: {n} keys, filter {f.memory_bytes / 2**20:.1f} MiB")
    cxx_add = min(_native._cxx_batch_seconds(f, keys, True) for _ in range(repeat)) / n * 1e9
    py_add = best_seconds(lambda: f.add_many(keys), repeat) / n * 1e9
    cxx_in = min(_native._cxx_batch_seconds(f, absent, False) for _ in range(repeat)) / n * 1e9
    py_in = best_seconds(lambda: f.contains_many(absent, count=True), repeat) / n * 1e9
    row("C++ InsertMany", cxx_add)
    row("add_many(list of bytes)", py_add, "C++", cxx_add)
    row("C++ MayContainMany", cxx_in)
    row("contains_many(list of bytes, count=True)", py_in, "C++", cxx_in)


def memory(n):
    keys = urls(n)
    tracemalloc.start()
    f = bloomery.BlockedFilter(n, 0.01)
    f.update(keys)
    filter_python_bytes = tracemalloc.get_traced_memory()[0]
    s = set(keys)
    set_bytes = tracemalloc.get_traced_memory()[0] - filter_python_bytes
    tracemalloc.stop()
    del s
    strings = sum(sys.getsizeof(k) for k in keys)
    print(f"memory: {n} URLs at 1%")
    print(f"  filter memory                   {f.memory_bytes / 2**20:9.2f} MiB "
          f"({f.memory_bytes * 8 / n:.2f} bits/key), Python objects it allocated: "
          f"{filter_python_bytes} bytes")
    print(f"  set of the same str (table only) {set_bytes / 2**20:9.2f} MiB; with the strings "
          f"{(set_bytes + strings) / 2**20:.1f} MiB ({(set_bytes + strings) / n:.0f} bytes/key)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--urls", type=int, default=7_000_000, help="keys of the bytes-list run")
    args = parser.parse_args()
    repeat = 2 if args.quick else 5
    print(f"bloomery Python benchmark; {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}")
    single_key(repeat)
    numpy_batches(1 << 14, "in cache", repeat * 4)
    numpy_batches(1 << 18 if args.quick else 1 << 25, "out of cache", repeat)
    bytes_batches(100_000 if args.quick else args.urls, max(2, repeat // 2))
    memory(100_000 if args.quick else 1_000_000)


if __name__ == "__main__":
    main()
