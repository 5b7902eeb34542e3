# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""The BFW.* windowed family (redis/windowed.h): commands and their errors, expiry by time (the
master's clock stepped with the module's TESTING-CLOCK offset) and by key count, persistence (RDB,
AOF replay and rewrite, DUMP/RESTORE, COPY, a hostile RESTORE), and determinism: a replica, an AOF
replay and a restarted server hold exactly what the master holds, whatever their own clocks say,
on a single server and on a 3-master Redis Cluster with a replica."""
import os
import subprocess
import time

import pytest
import redis
from redis.cluster import RedisCluster

from conftest import SERVER, free_cluster_port
from test_cluster import CLUSTER_CONFIG
from test_hostile import reseal
from test_commands import wire
from test_persistence import digest, rewrite_aof, wait_for_sync

TESTING = ["TESTING-CLOCK", "1"]
HOUR_MS = 3_600_000
OLD = [f"https://example.com/old/{i}" for i in range(300)]
NEW = [f"https://example.com/new/{i}" for i in range(300)]
NEVER = [f"https://example.org/never/{i}" for i in range(300)]


def info(r, key):
    return dict(zip(*[iter(r.execute_command("BFW.INFO", key))] * 2))


def answers(r, key):
    """What a reader sees of a windowed filter: every probe's answer."""
    return [r.execute_command("BFW.MEXISTS", key, *items) for items in (OLD, NEW, NEVER)]


def step_clock(r, ms):
    r.execute_command("BFW.TESTING-CLOCK-OFFSET", ms)


def test_commands_and_replies(make_server):
    r = make_server(module_args=TESTING).client()
    assert r.execute_command("BFW.RESERVE", "w", 0.01, 1000, "WINDOW", "1h") == b"OK"
    assert r.execute_command("BFW.MADD", "w", "a", "b", "a") == [1, 1, 0]
    assert r.execute_command("BFW.ADD", "w", "a") == 0
    assert r.execute_command("BFW.ADD", "w", "c") == 1
    assert r.execute_command("BFW.EXISTS", "w", "a") == 1
    assert r.execute_command("BFW.MEXISTS", "w", "a", "b", "zz") == [1, 1, 0]
    assert r.execute_command("BFW.EXISTS", "missing", "a") == 0
    fields = info(r, "w")
    assert fields[b"Mode"] == b"WINDOW" and fields[b"Window ms"] == HOUR_MS
    assert fields[b"Generations"] == 4 and fields[b"Refresh"] == b"ON_INSERT"
    assert fields[b"Capacity"] == 1000 and float(fields[b"Error rate"]) == 0.01
    assert fields[b"Number of items inserted"] == 3 and fields[b"Epoch"] == 0
    assert 0 < fields[b"Size"] <= r.memory_usage("w")  # MEMORY USAGE adds the key's own
    for window, ms in (("1500ms", 1500), ("90s", 90_000), ("30m", 1_800_000), ("12h", 43_200_000),
                       ("7d", 604_800_000), ("2500", 2500), ("7D", 604_800_000)):
        r.execute_command("BFW.RESERVE", f"d{window}", 0.01, 100, "WINDOW", window)
        assert info(r, f"d{window}")[b"Window ms"] == ms
    r.execute_command("BFW.RESERVE", "k", 0.001, 500, "KEYS", 500, "GENERATIONS", 8, "REFRESH",
                      "keep_first_seen")
    fields = info(r, "k")
    assert fields[b"Mode"] == b"KEYS" and fields[b"Window keys"] == 500
    assert fields[b"Generations"] == 8 and fields[b"Refresh"] == b"KEEP_FIRST_SEEN"
    # BFW.INSERT creates with its options, or refuses to without a window.
    assert r.execute_command("BFW.INSERT", "i", "WINDOW", "7d", "CAPACITY", 50, "ERROR", 0.001,
                             "ITEMS", "x", "y", "x") == [1, 1, 0]
    assert info(r, "i")[b"Capacity"] == 50
    assert r.execute_command("BFW.INSERT", "i", "ITEMS", "x", "z") == [0, 1]
    assert r.execute_command("BFW.INSERT", "ik", "KEYS", 10, "ITEMS", "x") == [1]
    assert info(r, "ik")[b"Window keys"] == 10
    with pytest.raises(redis.ResponseError, match="^not found"):
        r.execute_command("BFW.INSERT", "nope", "NOCREATE", "WINDOW", "1h", "ITEMS", "x")
    with pytest.raises(redis.ResponseError, match="needs WINDOW duration or KEYS n"):
        r.execute_command("BFW.INSERT", "nope", "ITEMS", "x")
    assert r.exists("nope") == 0


@pytest.mark.parametrize("args, message", [
    (("0.01", "1000"), "needs WINDOW duration or KEYS n"),  # not an arity error: what is missing
    (("0.01",), "wrong number of arguments"),
    (("0.01", "1000", "WINDOW"), "wrong number of arguments"),
    (("0.01", "1000", "GENERATIONS", "4"), "needs WINDOW duration or KEYS n"),
    (("2", "1000", "WINDOW", "1h"), r"\(0 < error rate range < 1\)"),
    (("x", "1000", "WINDOW", "1h"), "bad error rate"),
    (("0.01", "0", "WINDOW", "1h"), r"\(capacity should be larger than 0\)"),
    (("0.01", "1000", "WINDOW", "7x"), "bad window"),
    (("0.01", "1000", "WINDOW", "0s"), "bad window"),
    (("0.01", "1000", "WINDOW", "-5m"), "bad window"),
    (("0.01", "1000", "WINDOW", "999999999999d"), "bad window"),
    (("0.01", "1000", "KEYS", "0"), "bad KEYS window"),
    (("0.01", "1000", "KEYS", "999"), "capacity must equal n"),
    (("0.01", "1000", "WINDOW", "1h", "KEYS", "1000"), "give one WINDOW or KEYS"),
    (("0.01", "1000", "WINDOW", "1h", "GENERATIONS", "1"), r"range \[2, 64\]"),
    (("0.01", "1000", "WINDOW", "1h", "GENERATIONS", "65"), r"range \[2, 64\]"),
    (("0.01", "1000", "WINDOW", "1h", "REFRESH", "SOMETIMES"), "ON_INSERT or KEEP_FIRST_SEEN"),
    (("0.01", "1000", "WINDOW", "1h", "EXPANSION", "2"), "unknown argument"),
    (("0.01", "1000", "WINDOW", "1h", "LAYOUT", "fancy"),
     r"bad layout \(line512, block256 or word64\)"),
    (("0.01", "1000", "WINDOW", "1h", "LAYOUT", "partitioned"), "bad layout"),
    (("0.01", "1000", "WINDOW", "1h", "LAYOUT"), "wrong number of arguments"),
    (("0.000001", str(10**15), "WINDOW", "1h"), ""),  # over MAX_BYTES
])
def test_reserve_errors(server, args, message):
    r = server.client()
    with pytest.raises(redis.ResponseError, match=message):
        r.execute_command("BFW.RESERVE", "bad", *args)
    assert r.exists("bad") == 0


def test_key_errors_and_types(make_server):
    r = make_server(module_args=TESTING).client()
    r.execute_command("BFW.RESERVE", "w", 0.01, 100, "WINDOW", "1h")
    r.execute_command("BF.RESERVE", "b", 0.01, 100)
    r.set("s", "string")
    with pytest.raises(redis.ResponseError, match="item exists"):
        r.execute_command("BFW.RESERVE", "w", 0.01, 100, "WINDOW", "1h")
    with pytest.raises(redis.ResponseError, match="^not found"):
        r.execute_command("BFW.ADD", "missing", "a")
    with pytest.raises(redis.ResponseError, match="^not found"):
        r.execute_command("BFW.INFO", "missing")
    for key in ("b", "s"):
        for command in (("BFW.ADD", key, "a"), ("BFW.MEXISTS", key, "a"), ("BFW.INFO", key),
                        ("BFW.RESERVE", key, 0.01, 100, "WINDOW", "1h")):
            with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
                r.execute_command(*command)
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        r.execute_command("BF.ADD", "w", "a")
    for command in (("BFW.ADD", "w"), ("BFW.ADD", "w", "a", "b"), ("BFW.MADD", "w"),
                    ("BFW.EXISTS", "w"), ("BFW.INFO",), ("BFW.INSERT", "w", "ITEMS")):
        with pytest.raises(redis.ResponseError, match="wrong number of arguments"):
            r.execute_command(*command)
    # BFW.AT is the replication form: a client's time would move every replica's window.
    with pytest.raises(redis.ResponseError, match="carries the master's time"):
        r.execute_command("BFW.AT", 5, "BFW.ADD", "w", "a")
    assert r.execute_command("BFW.EXISTS", "w", "a") == 0


def test_key_specs_and_flags(server):
    """Cluster routing and ACL key permissions read these: readers RO, writers RW; BFW.AT's key is
    its fourth argument."""
    r = server.client()
    r.set_response_callback("COMMAND", lambda response, **options: response)  # the raw reply

    def keys_and_flags(*command):
        return [(key, set(flags)) for key, flags in
                r.execute_command("COMMAND", "GETKEYSANDFLAGS", *command)]

    assert keys_and_flags("BFW.MEXISTS", "w", "a", "b") == [(b"w", {b"RO", b"access"})]
    assert keys_and_flags("BFW.INFO", "w") == [(b"w", {b"RO", b"access"})]
    assert keys_and_flags("BFW.MADD", "w", "a", "b") == [(b"w", {b"RW", b"insert"})]
    assert keys_and_flags("BFW.AT", 5, "BFW.ADD", "w", "a") == [(b"w", {b"RW", b"update"})]
    for command in ("bfw.reserve", "bfw.add", "bfw.madd", "bfw.insert", "bfw.at"):
        flags = r.execute_command("COMMAND", "INFO", command)[0][2]
        assert b"write" in flags and b"denyoom" in flags
    for command in ("bfw.exists", "bfw.mexists", "bfw.info"):
        assert b"readonly" in r.execute_command("COMMAND", "INFO", command)[0][2]


def test_info_is_a_map_in_resp3(server):
    """BFW.INFO answers as BF.INFO does: a map that RESP3 clients read as a dict, and in RESP2 the
    flat array of its pairs."""
    server.client().execute_command("BFW.RESERVE", "w", 0.01, 100, "KEYS", 100)
    resp3 = wire(server, b"HELLO 3", b"BFW.INFO w")
    assert b"%18\r\n+Mode\r\n+KEYS\r\n+Window keys\r\n:100\r\n+Generations\r\n:4\r\n" in resp3
    assert b"+Error rate\r\n,0.01\r\n" in resp3, resp3
    resp2 = wire(server, b"BFW.INFO w")
    assert resp2.startswith(b"*36\r\n+Mode\r\n+KEYS\r\n+Window keys\r\n:100\r\n"), resp2
    assert b"+Error rate\r\n$4\r\n0.01\r\n" in resp2, resp2


@pytest.mark.parametrize("family", ["BF", "BFW"])
def test_lookups_reply_alike_in_both_families(server, family):
    """EXISTS and MEXISTS, raw replies in RESP2 and RESP3, over more items than one stack chunk
    of the lookup (128) holds, present and absent ones across the chunk boundaries, and on a
    missing key (all 0)."""
    r = server.client()
    reserve = ["BF.RESERVE", "k", 1e-6, 1000] if family == "BF" else \
        ["BFW.RESERVE", "k", 1e-6, 1000, "KEYS", 1000]
    r.execute_command(*reserve)
    items = [f"item{i}" for i in range(300)]
    present = [i % 3 == 0 or 120 <= i < 140 for i in range(300)]
    r.execute_command(f"{family}.MADD", "k", *[x for x, p in zip(items, present) if p])
    mexists = f"{family}.MEXISTS k {' '.join(items)}".encode()
    answers = b"".join(b":1\r\n" if p else b":0\r\n" for p in present)
    missing = f"{family}.MEXISTS nokey {' '.join(items)}".encode()
    exists = f"{family}.EXISTS k item0".encode(), f"{family}.EXISTS k item1".encode()
    for hello in ((), (b"HELLO 3",)):
        raw = wire(server, *hello, mexists, missing, *exists)
        assert raw.endswith(b"*300\r\n" + answers + b"*300\r\n" + b":0\r\n" * 300 +
                            b":1\r\n:0\r\n"), raw


def test_testing_clock_needs_the_module_argument(server):
    with pytest.raises(redis.ResponseError, match="unknown command"):
        server.client().execute_command("BFW.TESTING-CLOCK-OFFSET", 1000)


def test_testing_clock_offset_stays_within_the_times_bfw_at_accepts(make_server):
    """An offset that would take the clock before 1970 or past BFW.AT's last time (2^63 - 1 ns) is
    refused, so no write replicates at a time its replicas refuse, and none overflows the filters'
    nanoseconds (2^62 ms did: BFW.ADD answered 1 and BFW.EXISTS 0)."""
    master = make_server("master", module_args=TESTING,
                         config=["--appendonly", "yes", "--aof-use-rdb-preamble", "no"])
    m = master.client()
    m.execute_command("BFW.RESERVE", "w", 0.01, 1000, "WINDOW", "1h")
    for offset in (2**62, -2**62, 2**63 - 1, -(2**63)):
        with pytest.raises(redis.ResponseError, match="within the times BFW.AT accepts"):
            step_clock(m, offset)
    assert m.execute_command("BFW.ADD", "w", "a") == 1
    assert m.execute_command("BFW.EXISTS", "w", "a") == 1
    # The furthest offset allowed, a few seconds short of the last time: writes still replicate.
    last_ms = (2**63 - 1) // 1_000_000
    step_clock(m, last_ms - int(time.time() * 1000) - 5_000)
    replica = make_server("replica", module_args=TESTING,
                          config=["--replicaof", "127.0.0.1", str(master.port)])
    rr = wait_for_sync(replica)
    assert m.execute_command("BFW.ADD", "w", "late") == 1
    # "a" was written 292 years earlier: long expired.
    assert m.execute_command("BFW.MEXISTS", "w", "a", "late") == [0, 1]
    assert info(m, "w")[b"Time ms"] <= last_ms
    m.wait(1, 10_000)
    assert rr.execute_command("BFW.MEXISTS", "w", "late") == [1]
    assert digest(rr, "w") == digest(m, "w")
    value = digest(m, "w")
    master.restart()  # the AOF's BFW.AT at that time replays
    assert digest(master.client(), "w") == value


def test_duration_window_expires_by_the_masters_clock(make_server):
    """A 1-hour window of 4 generations: a key lives between 45 and 60 minutes. Reads on the
    master expire it on time without a write."""
    r = make_server(module_args=TESTING).client()
    for key, refresh in (("on", "ON_INSERT"), ("first", "KEEP_FIRST_SEEN")):
        r.execute_command("BFW.RESERVE", key, 0.0001, 2000, "WINDOW", "1h", "REFRESH", refresh)
        assert r.execute_command("BFW.MADD", key, *OLD) == [1] * len(OLD)
    step_clock(r, 44 * 60_000)
    for key in ("on", "first"):
        assert all(r.execute_command("BFW.MEXISTS", key, *OLD))
        r.execute_command("BFW.MADD", key, *NEW)
    # Seen again: ON_INSERT restarts OLD's age, KEEP_FIRST_SEEN does not (and answers 0: seen).
    assert r.execute_command("BFW.MADD", "on", *OLD[:100]) == [0] * 100
    assert r.execute_command("BFW.MADD", "first", *OLD[:100]) == [0] * 100
    step_clock(r, 61 * 60_000)
    # No write since the step: the master's read is at its clock.
    assert r.execute_command("BFW.MEXISTS", "first", *OLD) == [0] * len(OLD)
    assert r.execute_command("BFW.MEXISTS", "on", *OLD[:100]) == [1] * 100
    assert r.execute_command("BFW.MEXISTS", "on", *OLD[100:]) == [0] * 200
    for key in ("on", "first"):
        assert all(r.execute_command("BFW.MEXISTS", key, *NEW))
        assert info(r, key)[b"Epoch"] == 4
    # Gone means new again.
    assert r.execute_command("BFW.ADD", "first", OLD[0]) == 1
    step_clock(r, 2 * HOUR_MS)
    assert not any(r.execute_command("BFW.MEXISTS", "on", *OLD, *NEW))


def test_key_count_window(server):
    """KEYS 400 with 4 generations of 100 inserts: the first 100 keys are kept through the next
    300 inserts, and their generation is cleared by the one after."""
    r = server.client()
    r.execute_command("BFW.RESERVE", "k", 0.0001, 400, "KEYS", 400)
    r.execute_command("BFW.MADD", "k", *OLD[:100])
    r.execute_command("BFW.MADD", "k", *NEW)
    assert all(r.execute_command("BFW.MEXISTS", "k", *OLD[:100]))
    r.execute_command("BFW.MADD", "k", *NEVER[:100])
    assert not any(r.execute_command("BFW.MEXISTS", "k", *OLD[:100]))
    assert all(r.execute_command("BFW.MEXISTS", "k", *NEVER[:100]))


def fill_windowed(r, key="w"):
    """A 1-hour window filled at three times, with expiry in between; returns what a reader sees."""
    r.execute_command("BFW.RESERVE", key, 0.0001, 2000, "WINDOW", "1h")
    r.execute_command("BFW.MADD", key, *OLD)
    step_clock(r, 30 * 60_000)
    r.execute_command("BFW.MADD", key, *NEW[:150])
    step_clock(r, 70 * 60_000)
    r.execute_command("BFW.MADD", key, *NEW[150:])
    seen = answers(r, key)
    assert not any(seen[0]) and all(seen[1]) and not any(seen[2])
    return seen


def test_layout_shapes_the_generations_info_shows_it_and_it_persists(make_server):
    """Issue #26: LAYOUT l (BF.RESERVE's) on BFW.RESERVE and BFW.INSERT; BFW.INFO's Layout; a
    restart and DUMP/RESTORE keep it (the RDB and the AOF rewrite carry the filter's file)."""
    server = make_server()
    r = server.client()
    r.execute_command("BFW.RESERVE", "line", 0.01, 1000, "WINDOW", "1h")
    assert r.execute_command("BFW.RESERVE", "w64", 0.01, 1000, "KEYS", 1000, "LAYOUT",
                             "word64") == b"OK"
    r.execute_command("BFW.INSERT", "b256", "CAPACITY", 1000, "WINDOW", "1h", "layout",
                      "BLOCK256", "ITEMS", "a", "b")
    expected = {"line": b"line512", "w64": b"word64", "b256": b"block256"}
    for key, layout in expected.items():
        r.execute_command("BFW.MADD", key, *NEW)
        assert info(r, key)[b"Layout"] == layout
        assert info(r, key)[b"Probe"] == b"fields"
    # The same window in word64 takes more bytes than the line (a word's FPR is higher).
    r.execute_command("BFW.RESERVE", "l1000", 0.01, 1000, "KEYS", 1000)
    assert info(r, "w64")[b"Size"] > info(r, "l1000")[b"Size"]
    before = {key: answers(r, key) for key in expected}
    assert all(before[key][1] == [1] * 300 for key in expected)  # NEW: all present
    assert r.restore("w64copy", 0, r.dump("w64")) == b"OK"
    assert info(r, "w64copy")[b"Layout"] == b"word64"
    r.save()
    server.restart()
    r = server.client()
    for key, layout in expected.items():
        assert info(r, key)[b"Layout"] == layout
        assert answers(r, key) == before[key]


def test_rdb_restart_dump_restore_and_copy(make_server):
    server = make_server(module_args=TESTING)
    r = server.client()
    before = fill_windowed(r)
    value = digest(r, "w")
    r.save()
    # The restarted server's clock is 70 minutes behind the master's: it must not bring OLD back.
    server.restart()
    r = server.client()
    assert answers(r, "w") == before and digest(r, "w") == value
    assert r.restore("copy", 0, r.dump("w")) == b"OK"
    assert answers(r, "copy") == before and digest(r, "copy") == value
    assert r.copy("w", "c2") is True
    assert answers(r, "c2") == before and digest(r, "c2") == value
    r.execute_command("BFW.ADD", "c2", "only in c2")
    assert r.execute_command("BFW.EXISTS", "w", "only in c2") == 0


@pytest.mark.parametrize("rewrite", [False, True])
def test_aof_replay_applies_the_masters_times(make_server, rewrite):
    """The AOF holds BFW.AT commands (or, rewritten, BFW.AT ... BFW.IMAGE): replayed by a server
    whose clock is 70 minutes behind, it expires exactly what the master expired."""
    server = make_server(module_args=TESTING,
                         config=["--appendonly", "yes", "--aof-use-rdb-preamble", "no"])
    r = server.client()
    before = fill_windowed(r)
    if rewrite:
        rewrite_aof(r)
    value = digest(r, "w")
    server.restart()
    r = server.client()
    assert answers(r, "w") == before and digest(r, "w") == value


def test_hostile_restore_is_refused(server):
    r = server.client()
    r.execute_command("BFW.RESERVE", "w", 0.01, 1000, "WINDOW", "1h")
    r.execute_command("BFW.MADD", "w", *OLD)
    payload = r.dump("w")
    body = payload[:-8]
    for position in (30, 60, len(body) // 2, len(body) - 40):
        corrupted = body[:position] + bytes([body[position] ^ 0x10]) + body[position + 1:]
        with pytest.raises(redis.ResponseError):
            r.restore("k", 0, reseal(corrupted))
        assert r.exists("k") == 0
    for cut in (12, len(body) // 2):
        with pytest.raises(redis.ResponseError):
            r.restore("k", 0, reseal(body[:cut] + body[-2:]))
    assert r.restore("k", 0, payload) == b"OK"
    assert all(r.execute_command("BFW.MEXISTS", "k", *OLD))


def test_replica_follows_the_masters_clock(make_server):
    """Only the master's clock is stepped; the replica (full sync, then the BFW.AT stream) holds the
    same bits. Before the master's next write the replica may still report what the master's clock
    already expired (never the reverse); after it they answer the same, key by key."""
    master = make_server("master", module_args=TESTING)
    m = master.client()
    m.execute_command("BFW.RESERVE", "w", 0.0001, 2000, "WINDOW", "1h")
    m.execute_command("BFW.MADD", "w", *OLD)
    replica = make_server("replica", module_args=TESTING,
                          config=["--replicaof", "127.0.0.1", str(master.port)])
    rr = wait_for_sync(replica)
    step_clock(m, 30 * 60_000)
    m.execute_command("BFW.MADD", "w", *NEW[:150])
    m.execute_command("BFW.RESERVE", "k", 0.0001, 300, "KEYS", 300)
    m.execute_command("BFW.MADD", "k", *OLD, *NEW[:100])
    step_clock(m, 70 * 60_000)
    assert not any(m.execute_command("BFW.MEXISTS", "w", *OLD))
    m.wait(1, 10_000)
    assert all(rr.execute_command("BFW.MEXISTS", "w", *OLD))  # as of the master's last write
    replica_value = digest(rr, "w")
    m.execute_command("BFW.ADD", "w", NEW[150])
    m.wait(1, 10_000)
    for key in ("w", "k"):
        assert answers(rr, key) == answers(m, key)
        assert digest(rr, key) == digest(m, key)
    assert replica_value != digest(rr, "w")
    assert not any(answers(rr, "w")[0]) and not any(answers(rr, "k")[0][:100])
    # Reads on the replica write nothing, even with its own clock stepped far ahead.
    step_clock(rr, 10 * HOUR_MS)
    value = digest(rr, "w")
    answers(rr, "w")
    info(rr, "w")
    assert digest(rr, "w") == value == digest(m, "w")


def wait_until_cluster_ok(nodes):
    deadline = time.monotonic() + 60
    for node in nodes:
        while node.client().cluster("info")["cluster_state"] != "ok":
            assert time.monotonic() < deadline, node.log()
            time.sleep(0.1)


def test_cluster_with_a_replica_expires_as_the_masters_do(make_server):
    """3 masters and a replica of one of them, on loopback. Windowed filters spread over the
    masters; every master's clock is stepped past the window (not the replica's), and each filter
    written again: the replica, and a restarted master, answer as the masters do, key by key."""
    started = time.monotonic()
    nodes = [make_server(f"node{i}", module_args=TESTING, config=CLUSTER_CONFIG,
                         port=free_cluster_port()) for i in range(4)]
    masters, spare = nodes[:3], nodes[3]
    cli = os.path.join(os.path.dirname(SERVER), "redis-cli")
    subprocess.run([cli, "--cluster", "create", *[f"127.0.0.1:{n.port}" for n in masters],
                    "--cluster-yes"], check=True, stdout=subprocess.DEVNULL, timeout=60)
    master = masters[0]
    master_id = master.client().cluster("myid")
    spare.client().execute_command("CLUSTER", "MEET", "127.0.0.1", master.port)
    deadline = time.monotonic() + 60
    while True:
        try:
            spare.client().execute_command("CLUSTER", "REPLICATE", master_id)
            break
        except redis.ResponseError:  # the replica does not know the master yet
            assert time.monotonic() < deadline, spare.log()
            time.sleep(0.1)
    wait_until_cluster_ok(nodes)
    wait_for_sync(spare)

    rc = RedisCluster(host="127.0.0.1", port=master.port)
    keys = [f"window:{i}" for i in range(30)]
    for i, key in enumerate(keys):
        rc.execute_command("BFW.RESERVE", key, 0.0001, 2000, "WINDOW", "1h")
        rc.execute_command("BFW.MADD", key, *[f"{key}:{item}" for item in OLD])
    assert all(node.client().dbsize() > 3 for node in masters)
    for node in masters:
        step_clock(node.client(), 40 * 60_000)
    for key in keys:
        rc.execute_command("BFW.MADD", key, *[f"{key}:{item}" for item in NEW])
    for node in masters:
        step_clock(node.client(), 70 * 60_000)
    for key in keys:
        rc.execute_command("BFW.ADD", key, "after the window")
    master.client().wait(1, 10_000)

    def probe(r, key):
        return r.execute_command("BFW.MEXISTS", key, *[f"{key}:{item}" for item in OLD + NEW])

    owned = [key for key in keys if rc.get_node_from_key(key).port == master.port]
    assert owned
    replica = spare.client()
    replica.execute_command("READONLY")
    m = master.client()
    for key in owned:
        expected = probe(m, key)
        assert not any(expected[:len(OLD)]) and all(expected[len(OLD):])
        assert probe(replica, key) == expected
        assert digest(replica, key) == digest(m, key)
    # Every filter, through the cluster client, expired OLD and kept NEW.
    for key in keys:
        seen = probe(rc, key)
        assert not any(seen[:len(OLD)]) and all(seen[len(OLD):])
    # A restarted master (its clock 70 minutes behind its former self) answers the same.
    before = {key: (probe(m, key), digest(m, key)) for key in owned}
    m.save()
    master.restart()
    wait_until_cluster_ok([master])
    m = master.client()
    for key in owned:
        assert (probe(m, key), digest(m, key)) == before[key]
    print(f"cluster test: {time.monotonic() - started:.1f} s")
