# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""A filter's health where Redis operators look (issue #40): BF.INFO and BFW.INFO answer the state,
the planned FPR, the FPR over planned, the fill and the count's error, in RESP2 and RESP3; INFO bf
answers the totals over every filter (filters, bytes, near and over their limit, the worst FPR
ratio), kept as writes happen, so that redis/bloomery_metrics.lua (which redis_exporter runs)
reads them without reading the filters."""
import time

import pytest
import redis

from test_commands import wire

HEALTH_FIELDS = [b"Health", b"Planned FPR", b"FPR over planned", b"Fill ratio",
                 b"Estimated items error"]


def info(r, command, key):
    reply = r.execute_command(command, key)
    return dict(zip(reply[::2], reply[1::2]))


def totals(r):
    section = r.info("bf")
    return {name: section[f"bf_{name}"] for name in
            ("filters", "bytes", "filters_near_limit", "filters_over_limit", "worst_fpr_ratio")}


def madd(r, command, key, keys):
    for start in range(0, len(keys), 5000):
        r.execute_command(command, key, *keys[start:start + 5000])


def test_bf_info_health_from_ok_to_near_limit_and_info_bf_totals(r):
    """A NONSCALING filter: ok while it holds few keys, near_limit past 90% of its capacity (it
    refuses keys past it, so it never goes over). A scaling chain stays ok as it grows: its bound
    holds however far it grows. INFO bf counts both, and forgets a deleted one."""
    assert totals(r)["filters"] == 0
    r.execute_command("BF.RESERVE", "fixed", 0.01, 10_000, "NONSCALING")
    r.execute_command("BF.RESERVE", "chain", 0.01, 1_000)
    h = info(r, "BF.INFO", "fixed")
    assert list(h)[:5] == [b"Capacity", b"Size", b"Number of filters", b"Number of items inserted",
                           b"Expansion rate"]  # RedisBloom's, first, as before
    assert all(field in h for field in HEALTH_FIELDS)
    assert h[b"Health"] == b"ok" and float(h[b"Fill ratio"]) == 0
    assert float(h[b"Planned FPR"]) == pytest.approx(0.01, rel=0.01)
    t = totals(r)
    assert t["filters"] == 2 and t["filters_near_limit"] == 0 and t["filters_over_limit"] == 0
    assert t["bytes"] >= info(r, "BF.INFO", "fixed")[b"Size"] - 4096

    madd(r, "BF.MADD", "fixed", [f"k{i}" for i in range(5_000)])
    h = info(r, "BF.INFO", "fixed")
    assert h[b"Health"] == b"ok"
    assert 0.01 < float(h[b"FPR over planned"]) < 0.8  # about 0.05 at half the capacity
    assert 0.2 < float(h[b"Fill ratio"]) < 0.5
    madd(r, "BF.MADD", "fixed", [f"k{i}" for i in range(5_000, 9_500)])
    # INFO bf sees it by the writes (every 1/64 of the capacity, at most ten times a second) and
    # the cron (within a second or two), before any BF.INFO.
    wait_for(lambda: totals(r)["filters_near_limit"] == 1)
    h = info(r, "BF.INFO", "fixed")
    assert h[b"Health"] == b"near_limit"
    assert r.execute_command("BF.INFO", "fixed", "HEALTH") == [b"near_limit"]
    assert totals(r)["worst_fpr_ratio"] == pytest.approx(float(h[b"FPR over planned"]))

    madd(r, "BF.MADD", "chain", [f"c{i}" for i in range(20_000)])  # five stages
    assert info(r, "BF.INFO", "chain")[b"Number of filters"] >= 4
    assert info(r, "BF.INFO", "chain")[b"Health"] == b"ok"
    t = totals(r)
    assert t["filters"] == 2 and t["filters_near_limit"] == 1
    r.delete("fixed")
    t = totals(r)
    assert t["filters"] == 1 and t["filters_near_limit"] == 0


def test_health_fields_in_resp3_and_alone(server):
    r = server.client()
    r.execute_command("BF.RESERVE", "k", 0.01, 100)
    resp3 = wire(server, b"HELLO 3", b"BF.INFO k")
    assert b"+Health\r\n+ok\r\n" in resp3 and b"+Fill ratio\r\n," in resp3, resp3
    assert wire(server, b"HELLO 3", b"BF.INFO k HEALTH").endswith(b"%1\r\n+Health\r\n+ok\r\n")
    assert wire(server, b"BF.INFO k FILL") == b"*1\r\n$1\r\n0\r\n"  # RESP2: a double as a string


def test_bfw_info_health_goes_over_when_one_window_takes_too_many_keys(r):
    """A duration window planned for 2,000 keys that takes 6,000 within one window: its FPR passes
    the planned one, BFW.INFO says over_limit and INFO bf counts it."""
    r.execute_command("BFW.RESERVE", "w", 0.01, 2_000, "WINDOW", "1h")
    assert info(r, "BFW.INFO", "w")[b"Health"] == b"ok"
    madd(r, "BFW.MADD", "w", [f"w{i}" for i in range(6_000)])
    h = info(r, "BFW.INFO", "w")
    assert h[b"Health"] == b"over_limit"
    assert float(h[b"FPR over planned"]) > 1
    t = totals(r)
    assert t["filters"] == 1 and t["filters_over_limit"] == 1
    assert t["worst_fpr_ratio"] == pytest.approx(float(h[b"FPR over planned"]))


def test_totals_follow_every_way_a_filter_comes_and_goes(make_server):
    """RESTORE, COPY, a completed LOADCHUNK and a restart's RDB load add a filter; DEL, FLUSHALL
    ASYNC (freed on the lazyfree thread) and an overwrite take it out. A pending LOADCHUNK is no
    filter yet."""
    server = make_server(config=["--save", "", "--appendonly", "no"])
    r = server.client()
    r.execute_command("BF.RESERVE", "a", 0.01, 1000)
    r.execute_command("BFW.RESERVE", "w", 0.01, 1000, "KEYS", 1000)
    assert totals(r)["filters"] == 2
    r.restore("b", 0, r.dump("a"))
    r.copy("a", "c")
    chunks, iterator = [], 0
    while True:
        iterator, data = r.execute_command("BF.SCANDUMP", "a", iterator)
        if iterator == 0:
            break
        chunks.append((iterator, data))
    r.execute_command("BF.LOADCHUNK", "d", *chunks[0])
    assert totals(r)["filters"] == 4  # d is pending
    for chunk in chunks[1:]:
        r.execute_command("BF.LOADCHUNK", "d", *chunk)
    assert totals(r)["filters"] == 5
    r.execute_command("SAVE")
    server.restart()
    r = server.client()
    assert totals(r)["filters"] == 5
    r.delete("b")
    assert totals(r)["filters"] == 4
    r.flushall(asynchronous=True)
    deadline = time.monotonic() + 10
    while totals(r)["filters"] != 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    t = totals(r)
    assert t["filters"] == 0 and t["bytes"] == 0 and t["worst_fpr_ratio"] == 0


def test_info_bf_with_many_filters_reads_no_filter(r):
    """INFO bf's totals are kept as filters come and go, not summed when INFO asks: 2,000 filters
    are counted, one by one, as they were reserved."""
    pipe = r.pipeline(transaction=False)
    for i in range(2_000):
        pipe.execute_command("BF.RESERVE", f"f{i}", 0.01, 1_000)
    pipe.execute()
    assert totals(r)["filters"] == 2_000


def wait_for(condition, seconds=5.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_info_bf_follows_filters_that_are_not_written_again(make_server):
    """INFO bf's totals were computed again only on writes: after the write that grew a chain
    bf_bytes kept the old size for as long as the key was idle, a few keys short of a state change
    never changed it, and a windowed filter whose overfull generations had expired stayed in
    bf_filters_over_limit. Now bytes are exact after every write, and a second's timer brings the
    rest up to date whether or not the key is written again."""
    server = make_server(module_args=["TESTING-CLOCK", "1"])
    r = server.client()

    # Bytes: a chain grows by a stage in a write too small to recompute its health.
    r.execute_command("BF.RESERVE", "chain", 0.01, 1000, "EXPANSION", 2)
    for start in range(0, 1000, 10):
        r.execute_command("BF.MADD", "chain", *[f"c{i}" for i in range(start, start + 10)])
    assert info(r, "BF.INFO", "chain")[b"Number of filters"] == 1
    one_stage = totals(r)["bytes"]
    r.execute_command("BF.MADD", "chain", *[f"c{i}" for i in range(1000, 1010)])
    assert info(r, "BF.INFO", "chain")[b"Number of filters"] == 2
    assert totals(r)["bytes"] > 2 * one_stage  # the new stage is planned for twice the keys

    # A state: 9,000 keys of 10,000 are ok; 150 more (below 1/64 of the capacity, so no
    # recomputation on the write) make it near_limit, and nothing writes it again.
    r.execute_command("BF.RESERVE", "fixed", 0.01, 10_000, "NONSCALING")
    madd(r, "BF.MADD", "fixed", [f"f{i}" for i in range(9_000)])
    assert totals(r)["filters_near_limit"] == 0
    r.execute_command("BF.MADD", "fixed", *[f"f{i}" for i in range(9_000, 9_150)])
    wait_for(lambda: totals(r)["filters_near_limit"] == 1)

    # A window: overfull, then its generations expire with no write.
    r.execute_command("BFW.RESERVE", "w", 0.01, 2_000, "WINDOW", "1h")
    madd(r, "BFW.MADD", "w", [f"w{i}" for i in range(6_000)])
    wait_for(lambda: totals(r)["filters_over_limit"] == 1)
    r.execute_command("BFW.TESTING-CLOCK-OFFSET", 2 * 3_600_000)
    wait_for(lambda: totals(r)["filters_over_limit"] == 0)
    assert totals(r)["worst_fpr_ratio"] < 1
