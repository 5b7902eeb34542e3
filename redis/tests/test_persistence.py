# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""A filter survives SAVE + restart, DEBUG RELOAD, an AOF rewrite without the RDB preamble,
DUMP/RESTORE and COPY, and reaches a replica by full sync and by later writes."""
import os
import resource
import shutil
import time

import conftest
import pytest
import redis
from test_hostile import dump_chunks

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


def rewrite_aof(r):
    """BGREWRITEAOF, waiting (at most 60 s) until the rewrite has finished."""
    r.bgrewriteaof()
    deadline = time.monotonic() + 60
    while r.info("persistence")["aof_rewrite_in_progress"] or r.info("persistence")[
            "aof_rewrite_scheduled"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)


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


def test_any_expansion_survives_reload_and_dump_restore(server):
    # Growth 1 and 3 (issue #28) are valid in the saved image, and grow on after a reload.
    r = server.client()
    for expansion in (1, 3, 32768):
        key = f"x{expansion}"
        before = fill(r, key=key, capacity=100, expansion=expansion)
        assert before[0][before[0].index(b"Number of filters") + 1] >= 2
        r.restore(f"{key}:copy", 0, r.dump(key))
        assert snapshot(r, f"{key}:copy") == before
    assert r.execute_command("DEBUG", "RELOAD") == b"OK"
    for expansion in (1, 3, 32768):
        key = f"x{expansion}"
        assert snapshot(r, key) == snapshot(r, f"{key}:copy")
        info = dict(zip(*[iter(r.execute_command("BF.INFO", key))] * 2))
        assert info[b"Expansion rate"] == expansion


def test_aof_rewrite_without_rdb_preamble(make_server):
    server = make_server(config=["--appendonly", "yes", "--aof-use-rdb-preamble", "no"])
    r = server.client()
    before = fill(r)
    rewrite_aof(r)
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


def test_layout_survives_reload_and_dump_restore(server):
    r = server.client()
    r.execute_command("BF.RESERVE", "w", "0.01", "100", "LAYOUT", "word64")
    r.execute_command("BF.MADD", "w", *[f"k{i}" for i in range(300)])
    before = r.execute_command("BF.INFO", "w")
    assert r.restore("w2", 0, r.dump("w")) == b"OK"
    r.execute_command("DEBUG", "RELOAD")
    for key in ("w", "w2"):
        assert r.execute_command("BF.INFO", key) == before
        assert r.execute_command("BF.INFO", key, "LAYOUT") == [b"word64"]
        assert all(r.execute_command("BF.MEXISTS", key, *[f"k{i}" for i in range(300)]))


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
    if conftest.PRELOAD:
        pytest.skip("under ASan the server's shadow memory needs far more address space than "
                    "any limit this test sets")
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
    rewrite_aof(r)  # its child fails the same way: no AOF leaves the key out
    assert r.info("persistence")["aof_last_bgrewrite_status"] == "err"
    assert server.alive(), server.log()
    assert "bloomery: cannot serialize a filter" in server.log()
    assert r.execute_command("BF.EXISTS", "big", "present") == 1
    assert r.get("bystander") == b"still here"


LOW_CAP = 1 << 20  # MAX_BYTES under the filters below
BIG_KEYS = 7_000_000  # a ~8.4 MB non-scaling filter at 1%


def wait_for_sync(replica):
    rr = replica.client()
    deadline = time.monotonic() + 60
    while rr.info("replication").get("master_link_status") != "up":
        assert time.monotonic() < deadline and replica.alive(), replica.log()
        time.sleep(0.05)
    return rr


def digest(r, key):
    return r.execute_command("DEBUG", "DIGEST-VALUE", key)


def grow(r, key, batches, start=0):
    """BF.MADDs `batches` x 10,000 new keys; returns the replies' last entries."""
    last = []
    for batch in range(start, start + batches):
        last.append(r.execute_command("BF.MADD", key, *[f"g{batch}:{i}" for i in range(10000)])[-1])
    return last


def everything(r):
    """What a client sees of every key: the plain one, and each filter's answers and digest."""
    return (r.get("plain"), snapshot(r, "big"), snapshot(r, "growing"), digest(r, "big"),
            digest(r, "growing"))


def test_replica_with_a_lower_max_bytes_follows_its_master(make_server):
    """The replica's MAX_BYTES is below the master's filter: the full sync loads it anyway (with
    a warning naming MAX_BYTES and the key), and the master's later writes, which grow another
    filter past the replica's cap, are applied as the master applied them."""
    master = make_server("master")
    m = master.client()
    m.set("plain", "a plain key")
    m.execute_command("BF.RESERVE", "big", 0.01, BIG_KEYS, "NONSCALING")
    m.execute_command("BF.MADD", "big", *ITEMS)
    assert m.execute_command("BF.INFO", "big", "SIZE")[0] > 7 * LOW_CAP
    fill(m, "growing", capacity=20000)
    replica = make_server("replica", module_args=["MAX_BYTES", str(LOW_CAP)],
                          config=["--replicaof", "127.0.0.1", str(master.port)])
    rr = wait_for_sync(replica)
    assert everything(rr) == everything(m)
    # On the master (no cap) "growing" passes the replica's cap: the replica follows.
    assert not [x for x in grow(m, "growing", 70) if isinstance(x, Exception)]
    assert m.execute_command("BF.INFO", "growing", "SIZE")[0] > LOW_CAP
    assert m.execute_command("WAIT", 1, 30000) == 1
    assert replica.alive(), replica.log()
    assert everything(rr) == everything(m)
    assert f"key 'big' holds a filter of" in replica.log()
    assert f"over MAX_BYTES ({LOW_CAP})" in replica.log()
    # A client's RESTORE of the same payload on the replica's cap is still refused (on a
    # writable server: a read-only replica takes no client writes at all).
    payload = m.dump("big")
    capped = make_server("capped", module_args=["MAX_BYTES", str(LOW_CAP)])
    with pytest.raises(redis.ResponseError):
        capped.client().restore("big", 0, payload)
    assert capped.client().exists("big") == 0
    assert "bloomery: refusing a saved filter" in capped.log()


@pytest.mark.parametrize("persistence", ["rdb", "aof"])
def test_restart_with_a_lower_max_bytes_keeps_every_key(make_server, persistence):
    """A master restarted with MAX_BYTES below its filters starts and keeps every key, from its
    RDB or its AOF (BF.LOADCHUNKs replayed); clients' writes still never take a filter over the
    cap, and a client's payload of the same filter is refused."""
    config = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no"] if persistence == "aof" else []
    server = make_server(config=config)
    r = server.client()
    r.set("plain", "a plain key")
    r.execute_command("BF.RESERVE", "big", 0.01, BIG_KEYS, "NONSCALING")
    r.execute_command("BF.MADD", "big", *ITEMS)
    fill(r, "growing", capacity=20000)
    grow(r, "growing", 70)
    assert r.execute_command("BF.INFO", "growing", "SIZE")[0] > LOW_CAP
    if persistence == "aof":
        rewrite_aof(r)
    else:
        r.save()
    before = everything(r)
    payload = r.dump("big")

    server.module_args = ["MAX_BYTES", str(LOW_CAP)]
    server.restart()
    r = server.client()
    assert everything(r) == before
    log = server.log()
    for key in ("big", "growing"):
        assert f"key '{key}' holds a filter of" in log, log
    assert f"over MAX_BYTES ({LOW_CAP})" in log
    # The keys work: keys fitting the stages they have are added; a key that needs a new stage
    # is refused by name of the cap, and the filter does not grow.
    assert r.execute_command("BF.ADD", "big", "new in big") == 1
    size = r.execute_command("BF.INFO", "growing", "SIZE")[0]
    refused = [x for x in grow(r, "growing", 100, start=1000) if isinstance(x, Exception)]
    assert refused and "MAX_BYTES" in str(refused[0])
    assert r.execute_command("BF.INFO", "growing", "SIZE")[0] == size
    assert all(r.execute_command("BF.MEXISTS", "growing", *ITEMS))
    # A client's payload of the same filter is still refused.
    with pytest.raises(redis.ResponseError):
        r.restore("restored", 0, payload)
    assert r.exists("restored") == 0
    assert "bloomery: refusing a saved filter" in server.log()
    with pytest.raises(redis.ResponseError):
        r.execute_command("BF.RESERVE", "new", 0.01, BIG_KEYS)


@pytest.mark.parametrize("layout", ["block256", "word64"])
def test_a_chain_of_any_layout_loaded_over_max_bytes_grows_no_further(make_server, layout):
    """A block256 or word64 chain grown past MAX_BYTES on a server without it, then loaded by one
    with it (its own data: loaded anyway): a client's key that needs the chain's next stage is
    refused with the module's MAX_BYTES error, and the chain keeps its layout, size and keys."""
    server = make_server()
    r = server.client()
    r.execute_command("BF.RESERVE", "growing", 0.01, 20000, "LAYOUT", layout)
    r.execute_command("BF.MADD", "growing", *ITEMS)
    assert not [x for x in grow(r, "growing", 70) if isinstance(x, Exception)]
    assert r.execute_command("BF.INFO", "growing", "SIZE")[0] > LOW_CAP
    r.save()

    server.module_args = ["MAX_BYTES", str(LOW_CAP)]
    server.restart()
    r = server.client()
    assert f"key 'growing' holds a filter of" in server.log()
    assert r.execute_command("BF.INFO", "growing", "LAYOUT") == [layout.encode()]
    size = r.execute_command("BF.INFO", "growing", "SIZE")[0]
    refused = [x for x in grow(r, "growing", 100, start=1000) if isinstance(x, Exception)]
    assert refused and "its next stage would take it over the module's MAX_BYTES" in str(refused[0])
    assert r.execute_command("BF.INFO", "growing", "SIZE")[0] == size
    assert all(r.execute_command("BF.MEXISTS", "growing", *ITEMS))


def test_digest_is_the_filters_content(make_server):
    master = make_server("master")
    m = master.client()
    for key in ("a", "b", "c"):
        m.execute_command("BF.RESERVE", key, 0.01, 1000)
    m.execute_command("BF.ADD", "a", "one")
    m.execute_command("BF.ADD", "b", "two")
    m.execute_command("BF.ADD", "c", "one")
    assert digest(m, "a") != digest(m, "b")
    assert digest(m, "a") == digest(m, "c")
    m.execute_command("BF.ADD", "c", "three")
    assert digest(m, "a") != digest(m, "c")
    replica = make_server("replica", config=["--replicaof", "127.0.0.1", str(master.port)])
    rr = wait_for_sync(replica)
    m.execute_command("BF.ADD", "a", "after the sync")
    assert m.execute_command("WAIT", 1, 10000) == 1
    for key in ("a", "b", "c"):
        assert digest(rr, key) == digest(m, key)
    assert rr.execute_command("DEBUG", "DIGEST") == m.execute_command("DEBUG", "DIGEST")


def test_a_write_refused_part_way_replicates_what_it_applied(make_server):
    """The master's cap refuses a BF.MADD part-way; its replica, with a larger cap, must not add
    the keys the master refused (a verbatim copy of the command would)."""
    master = make_server("master", module_args=["MAX_BYTES", str(LOW_CAP)])
    m = master.client()
    # The line's chain (tightening 0.9) stays well under its bound while it grows; RedisBloom's
    # series (the default's, 0.5) comes near it after three stages, on any server.
    m.execute_command("BF.RESERVE", "growing", 0.01, 20000, "LAYOUT", "line512")
    replica = make_server("replica", config=["--replicaof", "127.0.0.1", str(master.port)])
    rr = wait_for_sync(replica)
    last = grow(m, "growing", 100)
    assert any(isinstance(x, Exception) for x in last), "the master's cap refused nothing"
    assert m.execute_command("WAIT", 1, 30000) == 1
    assert digest(rr, "growing") == digest(m, "growing")
    # The same filter, field for field; but for its health, which is each server's: the master's
    # cap stops the chain (full, so near its limit), the replica's larger one does not.
    info = [rr.execute_command("BF.INFO", "growing"), m.execute_command("BF.INFO", "growing")]
    fields = [dict(zip(reply[::2], reply[1::2])) for reply in info]
    assert info[0][:info[0].index(b"Health")] == info[1][:info[1].index(b"Health")]
    assert (fields[0][b"Health"], fields[1][b"Health"]) == (b"ok", b"near_limit")


def wait_for_offset(master, replica):
    """Until the replica has applied everything the master has sent."""
    m, rr = master.client(), replica.client()
    deadline = time.monotonic() + 30
    while rr.info("replication")["slave_repl_offset"] < m.info("replication")["master_repl_offset"]:
        assert time.monotonic() < deadline, replica.log()
        time.sleep(0.02)


def test_a_chunked_load_reaches_replicas_and_the_aof_only_once_validated(make_server):
    """BF.LOADCHUNK was replicated chunk by chunk before the image was checked: an image over the
    master's MAX_BYTES was refused there but loaded, uncapped, by its replica and by an AOF replay,
    so the two held different keys (and a later BF.ADD answered differently). Now nothing of a load
    leaves the master until the whole image is validated under its caps; the replica and the
    restarted AOF end exactly where the master does, for accepted and refused loads, for a replica
    attached while a load is half done, and across an AOF rewrite in the middle of a load."""
    source = make_server("source", module_args=["SCANDUMP_CHUNK_BYTES", "65536"]).client()
    source.execute_command("BF.RESERVE", "big", "0.01", "200000", "NONSCALING")  # ~240 KB
    source.execute_command("BF.RESERVE", "small", "0.01", "1000", "EXPANSION", "2")
    for key in ("big", "small"):
        source.execute_command("BF.MADD", key, *[f"{key}:{i}" for i in range(500)])
    big, small = dump_chunks(source, "big"), dump_chunks(source, "small")
    assert len(big) > 2  # a prefix and several chunks (SCANDUMP_CHUNK_BYTES below)

    master = make_server("master", module_args=["MAX_BYTES", "100000",
                                                "SCANDUMP_CHUNK_BYTES", "65536"],
                         config=["--appendonly", "yes", "--appendfsync", "always",
                                 "--aof-use-rdb-preamble", "no"])
    replica = make_server("replica", module_args=["MAX_BYTES", "100000"],
                          config=["--replicaof", "127.0.0.1", str(master.port)])
    m, rr = master.client(), wait_for_sync(replica)

    # Refused: over the master's MAX_BYTES, at the last chunk.
    for iterator, data in big[:-1]:
        assert m.execute_command("BF.LOADCHUNK", "big", iterator, data) == b"OK"
    with pytest.raises(redis.ResponseError, match="invalid dump"):
        m.execute_command("BF.LOADCHUNK", "big", *big[-1])
    assert m.exists("big") == 0

    # Accepted, with a replica attaching half-way (a full sync carries the pending load).
    half = len(small) // 2
    for iterator, data in small[:half]:
        m.execute_command("BF.LOADCHUNK", "small", iterator, data)
    rewrite_aof(m)  # the rewritten AOF holds the pending load's chunks; replay continues from them
    late = make_server("late", module_args=["MAX_BYTES", "100000"],
                       config=["--replicaof", "127.0.0.1", str(master.port)])
    lr = wait_for_sync(late)
    for iterator, data in small[half:]:
        assert m.execute_command("BF.LOADCHUNK", "small", iterator, data) == b"OK"
    assert m.execute_command("BF.ADD", "small", "after-load") == 1
    assert m.execute_command("BF.ADD", "big", "after-load") == 1  # a new default filter

    for follower in (replica, late):
        wait_for_offset(master, follower)
    # A restart replays the AOF (no RDB preamble): the commands as the master logged them.
    aof_server = make_server("aof", module_args=["MAX_BYTES", "100000"],
                             config=["--appendonly", "yes", "--aof-use-rdb-preamble", "no"])
    aof_dir = os.path.join(master.dir, "appendonlydir")
    shutil.copytree(aof_dir, os.path.join(aof_server.dir, "appendonlydir"), dirs_exist_ok=True)
    aof_server.restart()
    ar = aof_server.client()

    expected = {key: digest(m, key) for key in ("big", "small")}
    for r in (rr, lr, ar):
        assert sorted(r.keys()) == sorted(m.keys())
        for key, value in expected.items():
            assert digest(r, key) == value
        assert r.execute_command("BF.EXISTS", "big", "big:1") == m.execute_command(
            "BF.EXISTS", "big", "big:1")
    assert m.execute_command("BF.EXISTS", "small", "small:499") == 1
