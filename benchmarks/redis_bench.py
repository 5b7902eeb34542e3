#!/usr/bin/python3
# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""bloomery_redis.so against the client-side Bloom filter of the Redis crawling recipes, one run,
one server, the two sides interleaved round by round so that machine noise hits both alike.

    /usr/bin/python3 benchmarks/redis_bench.py build/redis/bloomery_redis.so [--urls N]

Prints, per measurement, both rates and their ratio:
  - adds/s through one connection: pipelined BF.MADD batches of URLs vs the recipe's k = 6
    pipelined SETBITs per URL on a 2^30-bit string (offsets from one MD5 per URL, as the recipes
    derive their k hashes), same batch of URLs per pipeline;
  - single round trips/s: BF.ADD vs SET vs SADD, one command per round trip;
  - MEMORY USAGE of a filter vs its planned bits (BF.INFO's bits per item x capacity / 8).
"""
import argparse
import hashlib
import os
import socket
import subprocess
import tempfile
import time

import redis

SETBIT_BITS = 1 << 30
SETBIT_HASHES = 6


def urls(count, salt):
    return [f"https://site{i % 997}.example.com/{salt}/item/{i}/page-{(i * 7919) % 100003}.html"
            for i in range(count)]


def setbit_offsets(url):
    digest = hashlib.md5(url.encode()).digest()
    h1 = int.from_bytes(digest[:8], "little")
    h2 = int.from_bytes(digest[8:], "little") | 1
    return [(h1 + i * h2) % SETBIT_BITS for i in range(SETBIT_HASHES)]


def start_server(module, directory):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen(
        ["/usr/bin/redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", directory,
         "--save", "", "--appendonly", "no", "--loadmodule", module],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = redis.Redis(host="127.0.0.1", port=port)
    for _ in range(200):
        try:
            client.ping()
            return process, client
        except redis.ConnectionError:
            time.sleep(0.05)
    raise RuntimeError("redis-server did not start")


def timed(function):
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def bulk_adds(r, count, batch, rounds):
    r.execute_command("BF.RESERVE", "bench:bf", 0.01, count * rounds)
    module_s = setbit_s = 0.0
    for round_ in range(rounds):
        items = urls(count, f"r{round_}")

        def madd():
            pipe = r.pipeline(transaction=False)
            for start in range(0, count, batch):
                pipe.execute_command("BF.MADD", "bench:bf", *items[start:start + batch])
            pipe.execute()

        def setbits():
            for start in range(0, count, batch):
                pipe = r.pipeline(transaction=False)
                for url in items[start:start + batch]:
                    for offset in setbit_offsets(url):
                        pipe.setbit("bench:bits", offset, 1)
                pipe.execute()

        module_s += timed(madd)
        setbit_s += timed(setbits)
    total = count * rounds
    return total / module_s, total / setbit_s


def round_trips(r, count, rounds):
    r.execute_command("BF.RESERVE", "bench:rt", 0.01, count * rounds)
    rates = {"BF.ADD": 0.0, "SET": 0.0, "SADD": 0.0}
    for round_ in range(rounds):
        items = urls(count, f"rt{round_}")
        rates["BF.ADD"] += timed(lambda: [r.execute_command("BF.ADD", "bench:rt", u) for u in items])
        rates["SET"] += timed(lambda: [r.execute_command("SET", u, 1) for u in items])
        rates["SADD"] += timed(lambda: [r.execute_command("SADD", "bench:set", u) for u in items])
    return {name: count * rounds / seconds for name, seconds in rates.items()}


def memory(r, capacity):
    r.execute_command("BF.RESERVE", "bench:mem", 0.01, capacity, "NONSCALING")
    bits_per_item = float(r.execute_command("BF.INFO", "bench:mem", "BITSPERITEM")[0])
    planned = bits_per_item * capacity / 8
    return r.memory_usage("bench:mem"), planned


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("module")
    parser.add_argument("--urls", type=int, default=50_000, help="URLs per round")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--batch", type=int, default=1000, help="URLs per pipeline / BF.MADD")
    parser.add_argument("--round-trips", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        process, r = start_server(os.path.abspath(args.module), directory)
        try:
            module_rate, setbit_rate = bulk_adds(r, args.urls, args.batch, args.rounds)
            print(f"pipelined adds/s, batches of {args.batch} URLs: BF.MADD {module_rate:,.0f}, "
                  f"{SETBIT_HASHES} x SETBIT {setbit_rate:,.0f}, ratio {module_rate / setbit_rate:.1f}x")
            rates = round_trips(r, args.round_trips, args.rounds)
            print("single round trips/s: " + ", ".join(f"{k} {v:,.0f}" for k, v in rates.items())
                  + f"; BF.ADD / SET {rates['BF.ADD'] / rates['SET']:.3f}, "
                  f"BF.ADD / SADD {rates['BF.ADD'] / rates['SADD']:.3f}")
            usage, planned = memory(r, 1_000_000)
            print(f"MEMORY USAGE of a 1M-key 1% filter: {usage:,} bytes, planned {planned:,.0f} "
                  f"bytes, ratio {usage / planned:.4f}")
        finally:
            r.shutdown(nosave=True)
            process.wait(timeout=10)


if __name__ == "__main__":
    main()
