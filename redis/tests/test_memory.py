# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""Filter memory counts as any other key's: INFO memory's used_memory grows by a filter's bytes,
maxmemory's eviction policies evict for it, and with noeviction the commands that allocate are
refused (deny-oom) once the server is over its limit."""
import time

import pytest
import redis
from test_acl import WRITES

BIG = ("0.001", "10000000")  # a 26 MiB filter, far over a 2 MiB maxmemory
STRINGS = 50


def used_memory(r):
    return r.info("memory")["used_memory"]


def info_size(r, key):
    fields = r.execute_command("BF.INFO", key)
    return dict(zip(fields[::2], fields[1::2]))[b"Size"]


def test_used_memory_grows_by_the_filter_and_shrinks_when_it_goes(r):
    before = used_memory(r)
    r.execute_command("BF.RESERVE", "f", *BIG)
    size = info_size(r, "f")
    grown = used_memory(r) - before
    usage = r.memory_usage("f")
    # What the allocator holds: the filter's bytes up to its size class above, and MEMORY USAGE
    # says so to within the server's own bookkeeping (the key, client buffers).
    assert size <= grown <= 1.25 * size + (64 << 10), (grown, size)
    assert abs(usage - grown) < 0.01 * grown, (usage, grown)

    # A scalable filter's stages grow through the same allocator.
    r.execute_command("BF.RESERVE", "g", "0.01", "1000")
    one_stage = r.memory_usage("g")
    r.execute_command("BF.MADD", "g", *[f"key {i}" for i in range(20000)])
    fields = r.execute_command("BF.INFO", "g")
    assert dict(zip(fields[::2], fields[1::2]))[b"Number of filters"] >= 4
    assert r.memory_usage("g") > 10 * one_stage

    # Loading (DEBUG RELOAD: the RDB, as at a restart) allocates the same way.
    at_save = used_memory(r)
    r.execute_command("DEBUG", "RELOAD")
    assert abs(used_memory(r) - at_save) < 0.05 * grown
    assert abs(r.memory_usage("f") - usage) < 64 << 10

    r.delete("f", "g")
    assert used_memory(r) - before < 0.05 * grown


def test_a_windowed_filter_counts_too(r):
    before = used_memory(r)
    r.execute_command("BFW.RESERVE", "w", "0.001", "10000000", "WINDOW", "7d")
    fields = r.execute_command("BFW.INFO", "w")
    size = dict(zip(fields[::2], fields[1::2]))[b"Size"]
    grown = used_memory(r) - before
    assert size <= grown <= 1.25 * size + (64 << 10), (grown, size)
    assert abs(r.memory_usage("w") - grown) < 0.01 * grown
    r.delete("w")
    assert used_memory(r) - before < 0.05 * grown


def evict_until_under(r, limit):
    """Eviction runs before each command, a bounded effort each time: a few commands suffice."""
    deadline = time.monotonic() + 10
    while used_memory(r) > limit:
        assert time.monotonic() < deadline, r.info("memory")
        r.ping()
        time.sleep(0.01)


def test_allkeys_lru_evicts_others_for_a_filter(make_server):
    r = make_server(config=["--maxmemory", "48mb", "--maxmemory-policy", "allkeys-lru"]).client()
    for i in range(30):
        r.set(f"page:{i}", "x" * (1 << 20))
    assert r.info("stats")["evicted_keys"] == 0
    time.sleep(2.1)  # the LRU clock counts whole seconds: the strings are now older than the filter
    r.execute_command("BF.RESERVE", "f", *BIG)
    evict_until_under(r, 48 << 20)
    # The least recently used strings made room; the filter, just used, stays.
    assert r.info("stats")["evicted_keys"] >= 5
    assert r.exists("f") == 1
    assert r.execute_command("BF.ADD", "f", "a") == 1


def test_allkeys_lru_evicts_a_filter_over_the_limit(make_server):
    r = make_server(config=["--maxmemory", "2mb", "--maxmemory-policy", "allkeys-lru"]).client()
    for i in range(STRINGS):
        r.set(f"page:{i}", "x" * 1000)
    r.execute_command("BF.RESERVE", "f", *BIG)  # under the limit when it starts: accepted
    evict_until_under(r, 2 << 20)
    # The filter alone is over the limit: it went, with whatever strings were sampled before it.
    assert r.exists("f") == 0
    assert r.info("stats")["evicted_keys"] >= 1


def test_noeviction_refuses_what_allocates_once_over_the_limit(make_server):
    r = make_server(config=["--maxmemory", "2mb", "--maxmemory-policy", "noeviction"]).client()
    r.execute_command("BF.RESERVE", "f", "0.01", "100")
    r.execute_command("BF.ADD", "f", "a")
    r.execute_command("BF.RESERVE", "full", *BIG)  # under the limit when it starts: accepted
    assert used_memory(r) > 2 << 20
    # Every write (test_acl's list) and BF.SCANDUMP, which copies the filter.
    for command in WRITES + [("BF.SCANDUMP", "f", 0)]:
        with pytest.raises(redis.exceptions.ResponseError, match="^OOM command not allowed"):
            r.execute_command(*command)
    # Reads still answer, and a freed filter makes room again.
    assert r.execute_command("BF.EXISTS", "f", "a") == 1
    assert r.execute_command("BF.CARD", "f") == 1
    r.delete("full")
    assert r.execute_command("BF.RESERVE", "g", "0.01", "100") == b"OK"
    assert r.execute_command("BF.ADD", "f", "b") == 1


def madd(r, key, keys, command="BF.MADD"):
    pipe = r.pipeline(transaction=False)
    for start in range(0, len(keys), 10000):
        pipe.execute_command(command, key, *keys[start:start + 10000])
    return [answer for reply in pipe.execute() for answer in reply]


@pytest.mark.parametrize("capacity", [50, 1_000_000])
def test_a_new_filter_in_reused_memory_is_empty(r, capacity):
    """The allocator hands a new filter memory a deleted one filled (jemalloc reuses it), which
    the module zeroes without writing it page by page: every bit must start clear."""
    keys = [f"old {i}" for i in range(capacity)]
    for _ in range(2):
        r.execute_command("BF.RESERVE", "f", "0.01", capacity, "NONSCALING")
        assert sum(madd(r, "f", keys)) > 0.9 * capacity
        r.delete("f")
    r.execute_command("BF.RESERVE", "f", "0.01", capacity, "NONSCALING")
    assert float(r.execute_command("BF.INFO", "f", "FPR")[0]) == 0
    assert sum(madd(r, "f", keys, "BF.MEXISTS")) == 0
