# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""A filter survives SAVE + restart, DEBUG RELOAD, an AOF rewrite without the RDB preamble,
DUMP/RESTORE and COPY, and reaches a replica by full sync and by later writes."""
import os
import resource
import time

import redis

ITEMS = [f"https://example.com/page/{i}" for i in range(5000)]
ABSENT = [f"https://example.org/other/{i}" for i in range(5000)]


def fill(r, key="f", capacity=1000, expansion=2):
    r.execute_command("BF.RESERVE", key, 0.01, capacity, "EXPANSION", expansion)
    r.execute_command("BF.MADD", key, *ITEMS)
    return snapshot(r, key)


def snapshot(r, key="f"):
    """Everything a user can observe of a filter: info and the answers for present and absent keys."""
    raw = r.execute_command("BF.INFO", key)
    return raw, r.execute_command("BF.MEXISTS", key, *ITEMS), r.execute_command(
        "BF.MEXISTS", key, *ABSENT)


def test_save_and_restart(server):
    r = server.client()
    before = fill(r)
    assert all(before[1])
    r.save()
    server.restart()
    assert snapshot(server.client()) == before
    # Still a live filter: it takes new keys.
    assert server.client().execute_command("BF.ADD", "f", "new key") == 1


def test_debug_reload(server):
    r = server.client()
    before = fill(r, expansion=4)
    assert r.execute_command("DEBUG", "RELOAD") == b"OK"
    assert snapshot(r) == before


def test_aof_rewrite_without_rdb_preamble(make_server):
    server = make_server(config=["--appendonly", "yes", "--aof-use-rdb-preamble", "no"])
    r = server.client()
    before = fill(r)
    r.bgrewriteaof()
    deadline = time.monotonic() + 60
    while r.info("persistence")["aof_rewrite_in_progress"] or r.info("persistence")[
            "aof_rewrite_scheduled"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    r.execute_command("BF.ADD", "f", "after the rewrite")
    server.restart()
    r = server.client()
    info, present, absent = snapshot(r)
    assert all(present)
    assert r.execute_command("BF.EXISTS", "f", "after the rewrite") == 1
    # The rewrite replays LOADCHUNK commands; one more key was added on top.
    assert info[7] == before[0][7] + 1
    assert absent == before[2]


def test_dump_restore_and_copy(server):
    r = server.client()
    before = fill(r)
    payload = r.dump("f")
    assert r.restore("g", 0, payload) == b"OK"
    assert snapshot(r, "g") == before
    assert r.copy("f", "h") is True
    assert snapshot(r, "h") == before
    # The copy is independent of its source.
    r.execute_command("BF.ADD", "h", "only in h")
    assert r.execute_command("BF.EXISTS", "h", "only in h") == 1
    assert r.execute_command("BF.EXISTS", "f", "only in h") == 0


def test_replica_full_sync_and_later_writes(make_server):
    master = make_server("master")
    m = master.client()
    before = fill(m)
    replica = make_server("replica", config=["--replicaof", "127.0.0.1", str(master.port)])
    rr = replica.client()
    deadline = time.monotonic() + 60
    while rr.info("replication").get("master_link_status") != "up":
        assert time.monotonic() < deadline, replica.log()
        time.sleep(0.05)
    assert snapshot(rr) == before
    m.execute_command("BF.MADD", "f", "later 1", "later 2")
    m.execute_command("BF.RESERVE", "new", "0.001", "50")
    m.execute_command("BF.ADD", "new", "x")
    assert m.execute_command("WAIT", 1, 10000) == 1
    assert rr.execute_command("BF.MEXISTS", "f", "later 1", "later 2") == [1, 1]
    assert rr.execute_command("BF.EXISTS", "new", "x") == 1
    assert snapshot(rr) == snapshot(m)
    assert snapshot(rr, "new") == snapshot(m, "new")
    try:
        rr.execute_command("BF.ADD", "f", "on the replica")
        raise AssertionError("a replica accepted a write")
    except redis.ReadOnlyError:
        pass


def vm_size(pid):
    with open(f"/proc/{pid}/status") as status:
        line = next(line for line in status if line.startswith("VmSize"))
    return int(line.split()[1]) * 1024


def test_no_memory_for_the_image_fails_the_save_not_the_server(make_server):
    """rdb_save copies the filter; under an address-space limit with room for the filter but not
    for its copy (a container without overcommit), that copy fails. A background save's child
    fails alone: the BGSAVE and the AOF rewrite fail, and the server keeps serving its keys. (In
    the server's own process, DUMP or SAVE, the module aborts as Redis does on its own
    out-of-memory, so that no unloadable RDB replaces the last good one: not tested here.)"""
    keys = 40_000_000  # a ~46 MiB filter at 1%
    probe = make_server("probe")
    before = vm_size(probe.process.pid)
    probe.client().execute_command("BF.RESERVE", "big", 0.01, keys, "NONSCALING")
    filter_bytes = vm_size(probe.process.pid) - before
    probe.stop()
    limit = before + filter_bytes + filter_bytes // 2 + (8 << 20)

    def limit_address_space():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    server = make_server("limited", preexec_fn=limit_address_space)
    r = server.client()
    r.execute_command("BF.RESERVE", "big", 0.01, keys, "NONSCALING")
    r.execute_command("BF.ADD", "big", "present")
    r.set("bystander", "still here")
    r.bgsave()
    deadline = time.monotonic() + 60
    while r.info("persistence")["rdb_bgsave_in_progress"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert r.info("persistence")["rdb_last_bgsave_status"] == "err"
    assert not [name for name in os.listdir(server.dir) if name.startswith("temp-")]
    r.bgrewriteaof()  # its child fails the same way: no AOF leaves the key out
    while r.info("persistence")["aof_rewrite_in_progress"] or r.info("persistence")[
            "aof_rewrite_scheduled"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert r.info("persistence")["aof_last_bgrewrite_status"] == "err"
    assert server.alive(), server.log()
    assert "bloomery: cannot serialize a filter" in server.log()
    assert r.execute_command("BF.EXISTS", "big", "present") == 1
    assert r.get("bystander") == b"still here"
