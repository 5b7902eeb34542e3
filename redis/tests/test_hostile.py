# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""Hostile input: truncated, corrupted and reordered BF.LOADCHUNK chunks, RESTORE payloads with
valid checksums around corrupted filters, absurd capacities and error rates, wrong types. Each is
an error reply; the server keeps running and other keys are intact."""
import random
import struct

import pytest
import redis

MAX_BYTES = 64 << 20


def crc64(data):
    """Redis's CRC-64 (Jones polynomial, reflected), which seals DUMP payloads."""
    table = crc64.table
    if table is None:
        table = []
        for i in range(256):
            crc = i
            for _ in range(8):
                crc = (crc >> 1) ^ 0x95AC9329AC4BC9B5 if crc & 1 else crc >> 1
            table.append(crc)
        crc64.table = table
    crc = 0
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc


crc64.table = None


def reseal(body):
    """A DUMP payload for `body` (type, value and RDB version) with a correct checksum."""
    return body + struct.pack("<Q", crc64(body))


@pytest.fixture
def hostile(make_server):
    server = make_server(module_args=["MAX_BYTES", str(MAX_BYTES), "SCANDUMP_CHUNK_BYTES", "4096"])
    r = server.client()
    r.set("bystander", "still here")
    r.execute_command("BF.RESERVE", "good", 0.01, 20000)
    r.execute_command("BF.MADD", "good", *[f"item{i}" for i in range(20000)])
    yield server, r
    assert server.alive()
    assert r.get("bystander") == b"still here"
    assert all(r.execute_command("BF.MEXISTS", "good", *[f"item{i}" for i in range(20000)]))


def dump_chunks(r, key):
    chunks, iterator = [], 0
    while True:
        iterator, data = r.execute_command("BF.SCANDUMP", key, iterator)
        if iterator == 0:
            return chunks
        chunks.append((iterator, data))


def test_loadchunk_reordered_truncated_corrupted(hostile):
    server, r = hostile
    chunks = dump_chunks(r, "good")
    assert len(chunks) > 4  # prefix + several 4 KiB chunks

    # Out of order: the second data chunk first.
    r.execute_command("BF.LOADCHUNK", "k", *chunks[0])
    with pytest.raises(redis.ResponseError, match="out of order"):
        r.execute_command("BF.LOADCHUNK", "k", *chunks[2])
    assert r.exists("k") == 0  # a failed chunk drops the half-loaded key

    # Truncated: stops half-way. The key answers nothing but LOADCHUNK.
    for chunk in chunks[:3]:
        r.execute_command("BF.LOADCHUNK", "k", *chunk)
    with pytest.raises(redis.ResponseError, match="being loaded"):
        r.execute_command("BF.EXISTS", "k", "item1")
    with pytest.raises(redis.ResponseError, match="being loaded"):
        r.execute_command("BF.ADD", "k", "item1")
    r.delete("k")

    # A chunk longer than its place, or a last chunk cut short, never makes a filter.
    iterator, data = chunks[-1]
    for chunk in chunks[:-1]:
        r.execute_command("BF.LOADCHUNK", "k", *chunk)
    with pytest.raises(redis.ResponseError, match="out of order"):
        r.execute_command("BF.LOADCHUNK", "k", iterator, data[:-1])
    assert r.exists("k") == 0

    # One flipped byte anywhere in the image: the format's checksums refuse it.
    rng = random.Random(7)
    for _ in range(10):
        victim = rng.randrange(1, len(chunks))
        for index, (iterator, data) in enumerate(chunks):
            if index == victim:
                position = rng.randrange(len(data))
                data = data[:position] + bytes([data[position] ^ 0x20]) + data[position + 1:]
            try:
                r.execute_command("BF.LOADCHUNK", "k", iterator, data)
            except redis.ResponseError as error:
                assert "invalid dump" in str(error)
                break
        else:
            raise AssertionError("a corrupted dump was accepted")
        assert r.exists("k") == 0


def test_loadchunk_hostile_prefixes_and_garbage(hostile):
    server, r = hostile
    huge = b"BLMRDUMP" + struct.pack("<Q", 1 << 62)
    with pytest.raises(redis.ResponseError, match="max-bytes"):
        r.execute_command("BF.LOADCHUNK", "k", 1, huge)
    for payload in (b"", b"BLMRDUMP", b"x" * 16, b"BLMRDUMP" + struct.pack("<Q", 0)):
        with pytest.raises(redis.ResponseError, match="invalid dump"):
            r.execute_command("BF.LOADCHUNK", "k", 1, payload)
    with pytest.raises(redis.ResponseError, match="not found"):
        r.execute_command("BF.LOADCHUNK", "k", 100, b"data")
    with pytest.raises(redis.ResponseError, match="already loaded"):
        r.execute_command("BF.LOADCHUNK", "good", 100, b"data")
    with pytest.raises(redis.ResponseError):
        r.execute_command("BF.LOADCHUNK", "good", 1, dump_chunks(r, "good")[0][1])
    # Random sequences: a prefix announcing a small image, then random chunks.
    rng = random.Random(11)
    for trial in range(200):
        key = f"random{trial}"
        total = rng.randrange(1, 10000)
        r.execute_command("BF.LOADCHUNK", key, 1, b"BLMRDUMP" + struct.pack("<Q", total))
        received = 0
        for _ in range(rng.randrange(1, 5)):
            length = rng.randrange(1, 5000)
            iterator = received + length + 1 if rng.random() < 0.8 else rng.randrange(-5, 20000)
            try:
                r.execute_command("BF.LOADCHUNK", key, iterator, rng.randbytes(length))
                received += length
            except redis.ResponseError:
                break
        r.delete(key)


def test_restore_corrupted_payloads(hostile):
    server, r = hostile
    payload = r.dump("good")
    body = payload[:-8]
    # Redis's own checksum catches a plain flipped byte.
    with pytest.raises(redis.ResponseError, match="checksum"):
        r.restore("k", 0, body[:100] + bytes([body[100] ^ 1]) + body[101:] + payload[-8:])
    # Resealed: the checksum is right, so the module's validator is what refuses it.
    rng = random.Random(3)
    for _ in range(20):
        position = rng.randrange(40, len(body) - 2)
        corrupted = body[:position] + bytes([body[position] ^ 0x10]) + body[position + 1:]
        with pytest.raises(redis.ResponseError):
            r.restore("k", 0, reseal(corrupted))
        assert r.exists("k") == 0
    for cut in (20, len(body) // 2, len(body) - 3):
        truncated = body[:cut] + body[-2:]  # keep the RDB version trailer
        with pytest.raises(redis.ResponseError):
            r.restore("k", 0, reseal(truncated))
        assert r.exists("k") == 0
    assert r.restore("k", 0, payload) == b"OK"  # the intact payload still restores


def test_absurd_sizes_and_rates(hostile):
    server, r = hostile
    for args in (("0.01", str(10**18)), ("0.01", str(2**63 - 1)), ("1e-300", "1000000000"),
                 ("0.5", "-1"), ("inf", "10"), ("-0.1", "10"), ("0.01", "1e3"),
                 ("0.0000001", str(10**9))):
        with pytest.raises(redis.ResponseError):
            r.execute_command("BF.RESERVE", "absurd", *args)
        assert r.exists("absurd") == 0
    with pytest.raises(redis.ResponseError):
        r.execute_command("BF.INSERT", "absurd", "CAPACITY", 10**15, "ITEMS", "a")
    with pytest.raises(redis.ResponseError):
        r.execute_command("BF.INSERT", "absurd", "ERROR", "0", "ITEMS", "a")
    assert r.exists("absurd") == 0


def test_scaling_filter_stops_at_max_bytes(make_server):
    server = make_server(module_args=["MAX_BYTES", str(1 << 20)])
    r = server.client()
    r.execute_command("BF.RESERVE", "capped", 0.01, 10000)
    items = [f"k{i}" for i in range(2_000_000)]
    refused = None
    for start in range(0, len(items), 10000):
        reply = r.execute_command("BF.MADD", "capped", *items[start:start + 10000])
        if isinstance(reply[-1], redis.ResponseError):
            refused = reply[-1]
            break
    assert refused is not None, "a capped scaling filter grew forever"
    assert "non scaling" not in str(refused)
    size = r.execute_command("BF.INFO", "capped", "SIZE")[0]
    assert size <= (1 << 20) + 4096
    assert all(r.execute_command("BF.MEXISTS", "capped", *items[:start]))


@pytest.mark.parametrize("module_args", [["MAX_BYTES", "-5"], ["MAX_BYTES"], ["COLOUR", "1"],
                                         ["SCANDUMP_CHUNK_BYTES", "many"]])
def test_bad_module_arguments_refuse_to_load(make_server, module_args):
    with pytest.raises(RuntimeError, match="did not start"):
        make_server(module_args=module_args)


def test_scandump_across_writes_never_loads_a_wrong_filter(hostile):
    """SCANDUMP keeps no copy of the filter: a write between its calls would mix two states in one
    image, so the rest of that dump is refused; one begun again from 0 loads the filter as it is."""
    server, r = hostile
    items = [f"item{i}" for i in range(20000)]
    for trial in range(3):
        chunks, iterator = [], 0
        with pytest.raises(redis.ResponseError, match="written to since this dump began"):
            while True:
                iterator, data = r.execute_command("BF.SCANDUMP", "good", iterator)
                assert iterator != 0, "the dump ended across a write"
                chunks.append((iterator, data))
                if len(chunks) == 2 + trial:
                    r.execute_command("BF.ADD", "good", f"written during the dump {trial}")
        # Refused for good, not only once: the next chunk of the same dump is refused too.
        with pytest.raises(redis.ResponseError, match="start again from 0"):
            r.execute_command("BF.SCANDUMP", "good", iterator)
        key = f"again{trial}"
        for chunk in dump_chunks(r, "good"):
            r.execute_command("BF.LOADCHUNK", key, *chunk)
        assert all(r.execute_command("BF.MEXISTS", key, *items))
        assert r.execute_command("BF.EXISTS", key, f"written during the dump {trial}") == 1
        assert r.execute_command("DEBUG", "DIGEST-VALUE", key) == r.execute_command(
            "DEBUG", "DIGEST-VALUE", "good")


@pytest.mark.parametrize("layout,capacity", [("word64", 30_000_000), ("block256", 34_000_000)])
def test_a_first_stage_over_max_bytes_in_its_layout_is_refused_by_name(hostile, layout, capacity):
    """The line's first stage for `capacity` keys at 1% fits MAX_BYTES; the layout's own (more
    bits per key) does not: refused with the module's message naming the layout's bytes."""
    server, r = hostile
    with pytest.raises(redis.ResponseError, match="over the module's MAX_BYTES") as refused:
        r.execute_command("BF.RESERVE", "shaped", 0.01, capacity, "LAYOUT", layout)
    assert "full" not in str(refused.value)
    needs = int(str(refused.value).split("needs ")[1].split(" bytes")[0])
    assert needs > MAX_BYTES
    assert r.exists("shaped") == 0
    assert r.execute_command("BF.RESERVE", "line", 0.01, capacity) == b"OK"
    assert r.execute_command("BF.INFO", "line", "SIZE")[0] <= MAX_BYTES + 4096
    r.delete("line")


def test_error_texts_say_what_happened(hostile):
    server, r = hostile
    # Over the cap at creation: not "full", and names the cap.
    with pytest.raises(redis.ResponseError, match="over the module's MAX_BYTES") as refused:
        r.execute_command("BF.RESERVE", "huge", 0.01, 100_000_000)
    assert "full" not in str(refused.value)
    assert r.exists("huge") == 0
    # A corrupted last chunk: one "ERR", from the reply's code.
    chunks = dump_chunks(r, "good")
    iterator, data = chunks[-1]
    chunks[-1] = (iterator, data[:-1] + bytes([data[-1] ^ 1]))
    for iterator, data in chunks[:-1]:
        r.execute_command("BF.LOADCHUNK", "corrupt", iterator, data)
    with pytest.raises(redis.ResponseError, match="invalid dump") as refused:
        r.execute_command("BF.LOADCHUNK", "corrupt", *chunks[-1])
    assert str(refused.value).count("ERR") <= 1
    assert r.exists("corrupt") == 0


def rdb_length(n):
    if n < 64:
        return bytes([n])
    if n < 16384:
        return bytes([0x40 | (n >> 8), n & 0xFF])
    return b"\x80" + struct.pack(">I", n)


def test_restore_of_a_complete_pending_load_is_refused(hostile):
    server, r = hostile
    payload = r.dump("good")
    head, trailer = payload[:10], payload[-10:-8]  # type and module id; RDB version

    def pending(total, received):
        # The module's words: tag 1 (pending), the total, the bytes received; then its EOF.
        body = (b"\x02" + rdb_length(1) + b"\x02" + rdb_length(total) + b"\x05" +
                rdb_length(len(received)) + received + b"\x00")
        return reseal(head + body + trailer)

    assert r.restore("half", 0, pending(10, b"x" * 9)) == b"OK"
    with pytest.raises(redis.ResponseError, match="still being loaded"):
        r.execute_command("BF.EXISTS", "half", "a")
    # Every byte received yet pending: no LOADCHUNK could finish it, so it is never a key.
    with pytest.raises(redis.ResponseError):
        r.restore("stuck", 0, pending(10, b"x" * 10))
    assert r.exists("stuck") == 0


def test_scandump_chunk_bytes_zero_is_refused_by_name(make_server):
    with pytest.raises(RuntimeError, match="SCANDUMP_CHUNK_BYTES must be at least 1"):
        make_server(module_args=["SCANDUMP_CHUNK_BYTES", "0"])
