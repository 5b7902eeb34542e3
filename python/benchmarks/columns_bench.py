# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""ns/key of add_many and contains_many for one batch of URL-like keys in each container.

    PYTHONPATH=python:build/python /usr/bin/python3 python/benchmarks/columns_bench.py [--keys N] [--repeat R]

The same N keys (URL-like str of 20-60 bytes, 1M by default) as a list[str], a NumPy 'S' array
(bytes), a NumPy 'U' array (UCS-4, encoded to UTF-8 per call), a NumPy object array of str, and,
for comparison, a NumPy uint64 array of N integers. Each figure is the median of R calls (5 by
default) on a BlockedFilter planned for N keys at 1%, cleared before each add_many; contains_many
looks up the keys added (all present). Prints a Markdown table of wall-clock ns/key and, after a
slash, the calling thread's CPU ns/key (time.thread_time: the batch runs in the calling thread with
the GIL released), which a machine shared with other work inflates less.
"""

import argparse
import gc
import statistics
import time

import numpy as np

import bloomery


def url_keys(n):
    """n distinct URL-like str keys, 20 to 60 bytes long (lengths spread evenly)."""
    filler = "catalog/item?ref=list&page=7&sort=price&q=abcdefghijklmnopqrstuvwxyz"
    keys = []
    for i in range(n):
        head = f"https://x.io/{i:x}/"  # distinct, at most 20 bytes up to 16**6 keys
        keys.append((head + filler)[: max(len(head), 20 + (i * 7919) % 41)])
    return keys


def median_ns(fn, n, repeat, before=None):
    """(wall, thread CPU) ns per key of fn(), each the median of `repeat` calls."""
    wall, cpu = [], []
    for _ in range(repeat):
        if before is not None:
            before()
        gc.collect()
        start, start_cpu = time.perf_counter(), time.thread_time()
        fn()
        cpu.append(time.thread_time() - start_cpu)
        wall.append(time.perf_counter() - start)
    return statistics.median(wall) / n * 1e9, statistics.median(cpu) / n * 1e9


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    n, repeat = args.keys, args.repeat
    keys = url_keys(n)
    lengths = [len(k) for k in keys]
    assert min(lengths) >= 20 and max(lengths) <= 60, (min(lengths), max(lengths))
    containers = {
        "list[str]": keys,
        "NumPy 'S' array": np.array([k.encode() for k in keys]),
        "NumPy 'U' array": np.array(keys),
        "NumPy object array (str)": np.array(keys, dtype=object),
        "NumPy uint64 array": np.arange(n, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15),
    }
    f = bloomery.BlockedFilter(n, 0.01)
    print(f"{n} keys, {statistics.mean(lengths):.0f} bytes on average; BlockedFilter "
          f"{f.memory_bytes} bytes; median of {repeat}")
    print()
    print("| keys as | add_many ns/key (wall / CPU) | contains_many ns/key (wall / CPU) |")
    print("|---|---:|---:|")
    for name, batch in containers.items():
        add = median_ns(lambda: f.add_many(batch), n, repeat, before=f.clear)
        found = median_ns(lambda: f.contains_many(batch), n, repeat)
        assert f.contains_many(batch, count=True) == n
        print(f"| {name} | {add[0]:.1f} / {add[1]:.1f} | {found[0]:.1f} / {found[1]:.1f} |")


if __name__ == "__main__":
    main()
