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

    /usr/bin/python3 benchmarks/redis_bench.py build/redis/bloomery_redis.so --layouts \
        [--filled 1000000,100000000] [--error 0.01] [--samples N] [--batch N] [--batches N]

compares instead the module's default filter (BF.RESERVE key error capacity) with the same reserve
LAYOUT line512, both in the one server, filled with N keys each, operation by operation, each
operation's commands to the two filters in slices taken in turns, --rounds rounds; per operation it
prints the median over rounds of
  - single round trips (BF.EXISTS of present keys, of absent keys, BF.ADD of new keys): the median
    round trip in us, and the server's own time per call (INFO commandstats' usec / calls);
  - BF.MEXISTS of absent keys and BF.MADD of new keys, --batch keys per command, one command per
    round trip: the median round trip and the server's time, both in ns per key;
with the ratio default / line512 of each. Commands go as prebuilt RESP through a plain socket, so
the client's share of a round trip is small and the same for both filters. The capacity reserved is
N plus the keys the rounds add, so that the adds stay in the filter's one stage.
"""
import argparse
import gc
import hashlib
import os
import random
import socket
import statistics
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


LAYOUTS = ("default", "line512")
FILL_CHUNK = 10_000  # keys per BF.MADD while filling
FILL_PIPELINE = 10  # BF.MADD chunks per filter per send while filling
KEY_DIGITS = 10  # filled keys are k0000000000, k0000000001, ...
LAYOUT_SLICES = 10  # turns each filter takes per measurement
# Per operation: its name, the command, whether it is batched, the key prefix of its round's keys
# (None: present keys, drawn from the filled ones).
LAYOUT_OPS = (
    ("EXISTS present", "BF.EXISTS", False, None),
    ("EXISTS absent", "BF.EXISTS", False, b"a"),
    ("ADD new", "BF.ADD", False, b"n"),
    ("MEXISTS absent", "BF.MEXISTS", True, b"b"),
    ("MADD new", "BF.MADD", True, b"m"),
)


def resp(*args):
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        arg = arg if isinstance(arg, bytes) else str(arg).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(parts)


def raw_connection(r):
    kwargs = r.connection_pool.connection_kwargs
    sock = socket.create_connection((kwargs["host"], kwargs["port"]))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.settimeout(300)
    return sock


def recv_exact(sock, size):
    data = bytearray()
    try:
        while len(data) < size:
            chunk = sock.recv(min(size - len(data), 1 << 20))
            if not chunk:
                raise ConnectionError("server closed the connection")
            data += chunk
    except socket.timeout:
        raise RuntimeError(f"short reply ({len(data)} of {size} bytes): {bytes(data[:200])!r}")
    return bytes(data)


def integers_reply_size(count):
    # An array of count integers, each :0 or :1 (RESP2).
    return len(b"*%d\r\n" % count) + 4 * count


def filled_keys_body(start, count):
    # The bulk strings of keys start .. start + count - 1, formatted in one go.
    item = f"${KEY_DIGITS + 1}\r\nk%0{KEY_DIGITS}d\r\n"
    return ((item * count) % tuple(range(start, start + count))).encode()


def fill(sock, keys, n):
    # Pipelined BF.MADD chunks of the same keys into each filter; the next send is formatted while
    # the server works through the last one.
    start_time = time.perf_counter()
    done = pending = 0
    next_report = max(n // 10, 1)
    while done < n or pending:
        payload, expected = [], 0
        for _ in range(FILL_PIPELINE):
            if done >= n:
                break
            count = min(FILL_CHUNK, n - done)
            body = filled_keys_body(done, count)
            for key in keys:
                payload.append(b"*%d\r\n$7\r\nBF.MADD\r\n$%d\r\n%s\r\n"
                               % (count + 2, len(key), key))
                payload.append(body)
                expected += integers_reply_size(count)
            done += count
        if pending:
            reply = recv_exact(sock, pending)
            if not reply.startswith(b"*") or b"-" in reply:
                raise RuntimeError(f"BF.MADD failed: {reply[:200]!r}")
        if payload:
            sock.sendall(b"".join(payload))
        pending = expected
        if done >= next_report or (done >= n and payload):
            seconds = time.perf_counter() - start_time
            print(f"  filled {done:,} of {n:,} keys into each, {seconds:.1f} s", flush=True)
            next_report = done + max(n // 10, 1)
    return time.perf_counter() - start_time


def decoded(value):
    return value.decode() if isinstance(value, bytes) else value


def flat_map(reply):
    return {decoded(reply[i]): decoded(reply[i + 1]) for i in range(0, len(reply), 2)}


def describe_filters(r, keys):
    for layout, key in zip(LAYOUTS, keys):
        size = r.execute_command("BF.INFO", key, "SIZE")[0]
        stages = [line.decode() for line in r.execute_command("BF.DEBUG", key)[1:]]
        usage = r.memory_usage(key)
        print(f"  {layout}: BF.INFO SIZE {size:,} bytes, MEMORY USAGE {usage:,} bytes; "
              f"BF.DEBUG {'; '.join(stages)}")
        print(f"    BF.INFO {flat_map(r.execute_command('BF.INFO', key))}")


def round_commands(command, key, items, batch):
    if batch is None:
        return [resp(command, key, item) for item in items]
    return [resp(command, key, *items[i:i + batch]) for i in range(0, len(items), batch)]


def server_time(r, command):
    # The server's usec and calls of command since the last CONFIG RESETSTAT.
    stats = r.info("commandstats").get(f"cmdstat_{command.lower()}", {"usec": 0, "calls": 0})
    return stats["usec"], stats["calls"]


def measure(r, sock, commands, command, reply_size, order):
    # One command per round trip, the two filters' commands in LAYOUT_SLICES slices taken in turns
    # (order, then the other way round, ...) so that a burst of noise hits both alike. Per filter:
    # each round trip's seconds, the replies, the server's usec and calls (INFO commandstats, reset
    # before each slice).
    out = {layout: ([], [], [0, 0]) for layout in order}
    size = -(-len(commands[order[0]]) // LAYOUT_SLICES)
    gc.disable()
    try:
        for slice_ in range(LAYOUT_SLICES):
            for layout in (order if slice_ % 2 == 0 else order[::-1]):
                times, replies, server = out[layout]
                r.config_resetstat()
                for message in commands[layout][slice_ * size:(slice_ + 1) * size]:
                    start = time.perf_counter()
                    sock.sendall(message)
                    replies.append(recv_exact(sock, reply_size))
                    times.append(time.perf_counter() - start)
                usec, calls = server_time(r, command)
                server[0] += usec
                server[1] += calls
    finally:
        gc.enable()
    return out


def layout_round(r, sock, keys, n, args, round_, rng, results, counts):
    order = LAYOUTS if round_ % 2 == 0 else LAYOUTS[::-1]
    for name, command, batched, prefix in LAYOUT_OPS:
        total = args.batches * args.batch if batched else args.samples
        if prefix is None:
            items = [b"k%0*d" % (KEY_DIGITS, rng.randrange(n)) for _ in range(total)]
        else:
            items = [b"%s%d_%09d" % (prefix, round_, i) for i in range(total)]
        batch = args.batch if batched else None
        reply_size = integers_reply_size(args.batch) if batched else 4
        commands = {layout: round_commands(command, keys[LAYOUTS.index(layout)], items, batch)
                    for layout in order}
        measured = measure(r, sock, commands, command, reply_size, order)
        for layout in order:
            times, replies, (usec, calls) = measured[layout]
            if any(reply[:1] not in (b"*", b":") for reply in replies) or calls != len(times):
                raise RuntimeError(f"{command} failed: {replies[0][:200]!r}, {calls} calls counted")
            ones = sum(reply.count(b":1") for reply in replies)
            counts[(name, layout)] = [a + b for a, b in zip(counts.get((name, layout), (0, 0)),
                                                            (ones, total))]
            if batched:  # ns per key
                client = statistics.median(times) * 1e9 / args.batch
                server = usec * 1e3 / calls / args.batch
            else:  # us per command
                client, server = statistics.median(times) * 1e6, usec / calls
            results.setdefault(name, {}).setdefault(layout, []).append((client, server))


def layout_table(rows):
    header = ("filled", "operation", "unit", "default", "line512", "ratio", "server default",
              "server line512", "server ratio")
    lines = [header] + rows
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for line in lines:
        print("  " + "  ".join(cell.rjust(width) for cell, width in zip(line, widths)))


def layout_comparison(r, args):
    sock = raw_connection(r)
    rng = random.Random(2026)
    all_rows = []
    start_all = time.perf_counter()
    for n in [int(text) for text in args.filled.split(",")]:
        added = args.rounds * (args.samples + args.batches * args.batch)
        capacity = n + added
        keys = [f"lay:{layout}:{n}".encode() for layout in LAYOUTS]
        print(f"N = {n:,}: BF.RESERVE {args.error} {capacity:,} ({n:,} filled + {added:,} added by "
              f"the rounds), default vs LAYOUT line512", flush=True)
        r.execute_command("BF.RESERVE", keys[0], args.error, capacity)
        r.execute_command("BF.RESERVE", keys[1], args.error, capacity, "LAYOUT", "line512")
        fill_s = fill(sock, keys, n)
        print(f"  fill: {fill_s:.1f} s for 2 x {n:,} keys "
              f"({fill_s * 1e9 / (2 * n):.0f} ns per key)", flush=True)
        describe_filters(r, keys)
        results, counts = {}, {}
        for round_ in range(args.rounds):
            round_start = time.perf_counter()
            layout_round(r, sock, keys, n, args, round_, rng, results, counts)
            seconds = time.perf_counter() - round_start
            print(f"  round {round_ + 1} of {args.rounds}: {seconds:.1f} s, "
                  + ", ".join(f"{name} {results[name]['default'][-1][0]:.3g}/"
                              f"{results[name]['line512'][-1][0]:.3g}" for name, *_ in LAYOUT_OPS)
                  + " (default/line512, round trip)", flush=True)
        for layout in LAYOUTS:
            present = counts[("EXISTS present", layout)]
            absent = counts[("EXISTS absent", layout)]
            batch_absent = counts[("MEXISTS absent", layout)]
            stages = r.execute_command("BF.INFO", keys[LAYOUTS.index(layout)], "FILTERS")[0]
            positives, tried = absent[0] + batch_absent[0], absent[1] + batch_absent[1]
            print(f"  {layout}: present keys found {present[0]:,} of {present[1]:,}; "
                  f"false positives {positives:,} of {tried:,} absent keys "
                  f"({positives / tried:.4%}); "
                  f"{stages} stage(s) after the rounds")
        rows = []
        for name, _, batched, _ in LAYOUT_OPS:
            unit = "ns/key" if batched else "us/cmd"
            per = {layout: results[name][layout] for layout in LAYOUTS}
            row = [f"{n:,}", name, unit]
            for which in (0, 1):
                values = [statistics.median(v[which] for v in per[layout]) for layout in LAYOUTS]
                row += [f"{value:.3f}" if value < 10 else f"{value:.1f}" for value in values]
                row.append(f"{values[0] / values[1]:.3f}")
            rows.append(row)
            ratios = [d[0] / l[0] for d, l in zip(per["default"], per["line512"])]
            server_ratios = [d[1] / l[1] for d, l in zip(per["default"], per["line512"])]
            print(f"  {name}: round ratios default/line512 {min(ratios):.3f}-{max(ratios):.3f}, "
                  f"server {min(server_ratios):.3f}-{max(server_ratios):.3f}")
        layout_table(rows)
        all_rows += rows
        r.delete(*keys)
    sock.close()
    print(f"Median over {args.rounds} rounds; round trips {args.samples:,} single commands or "
          f"{args.batches:,} batches of {args.batch:,} keys per filter per round; ratio default / "
          f"line512; {time.perf_counter() - start_all:.0f} s in all")
    layout_table(all_rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("module")
    parser.add_argument("--urls", type=int, default=50_000, help="URLs per round")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--batch", type=int, default=1000,
                        help="URLs per pipeline / BF.MADD; "
                             "with --layouts, keys per BF.MADD / BF.MEXISTS")
    parser.add_argument("--round-trips", type=int, default=10_000)
    parser.add_argument("--layouts", action="store_true",
                        help="compare the default filter with LAYOUT line512 instead")
    parser.add_argument("--filled", default="1000000,100000000",
                        help="--layouts: comma list of keys filled into each filter")
    parser.add_argument("--error", type=float, default=0.01, help="--layouts: error rate reserved")
    parser.add_argument("--samples", type=int, default=20_000,
                        help="--layouts: single-command round trips per measurement")
    parser.add_argument("--batches", type=int, default=200,
                        help="--layouts: BF.MEXISTS / BF.MADD round trips per measurement")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        process, r = start_server(os.path.abspath(args.module), directory)
        try:
            if args.layouts:
                layout_comparison(r, args)
                return
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
