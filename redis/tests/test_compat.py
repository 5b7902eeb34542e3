# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""Values saved by the bloomery 0.1 module load into this one and answer unchanged.

tests/fixtures/v0.1/redis_values.json holds, for BF.* keys of every layout (one grown to four
stages) and BFW.* keys, the old module's DUMP payload, its BF.SCANDUMP chunks, its BF.INFO and
the false positives among 2,000 absent keys (README.md there says how they were made). Restored
here, by RESTORE and by BF.LOADCHUNK, each must find its keys, answer the absent ones exactly as
before, describe itself as before and DUMP to the old payload byte for byte. A key made now with a
blocked LAYOUT saves an image of the fields probe's layout code (docs/FORMAT.md, "Layout codes").
"""
import json
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "..", "tests", "fixtures", "v0.1", "redis_values.json")

with open(FIXTURE) as f:
    RECORD = json.load(f)
VALUES = sorted(RECORD["values"])
BF_VALUES = [key for key in VALUES if "scandump" in RECORD["values"][key]]
ABSENT = [f"absent-{i}" for i in range(2000)]
assert RECORD["absent"] == "absent-0..absent-1999"


def family(key):
    return "BF" if "scandump" in RECORD["values"][key] else "BFW"


def pairs(reply):
    return {(k.decode() if isinstance(k, bytes) else k):
            (v.decode() if isinstance(v, bytes) else v) for k, v in zip(reply[::2], reply[1::2])}


def check_answers(r, key, value):
    name = family(key)
    inserted = [f"key-{i}" for i in range(value["key_count"])]
    assert all(r.execute_command(f"{name}.MEXISTS", key, *inserted)), key
    answers = r.execute_command(f"{name}.MEXISTS", key, *ABSENT)
    assert [a for a, hit in zip(ABSENT, answers) if hit] == value["false_positives"], key
    info = pairs(r.execute_command(f"{name}.INFO", key))
    for field, old in value["info"].items():
        if name == "BFW" and field == "Size":
            # The value's memory: the filter's bytes plus sizeof(WindowedValue), a struct of this
            # build (the bits are the same: DUMP says so below).
            continue
        assert info[field] == old, f"{key}: {name}.INFO {field}: {info[field]!r}, was {old!r}"
    probe = "none" if info["Layout"] == "partitioned" else \
        "fields" if info["Layout"] == "word64" else "salted"
    assert info["Probe"] == probe, key
    if name == "BF":
        debug = [line.decode() for line in r.execute_command("BF.DEBUG", key)]
        assert debug == value["debug"], key


def scandump(r, key):
    chunks = []
    it = 0
    while True:
        it, data = r.execute_command("BF.SCANDUMP", key, it)
        if it == 0:
            return chunks
        chunks.append([it, data])


@pytest.mark.parametrize("key", VALUES)
def test_restore_of_an_old_dump(r, key):
    value = RECORD["values"][key]
    payload = bytes.fromhex(value["dump"])
    assert r.restore(key, 0, payload)
    check_answers(r, key, value)
    assert r.dump(key) == payload, f"{key}: DUMP differs from the old module's"
    if family(key) == "BF":
        assert [[it, data.hex()] for it, data in scandump(r, key)] == value["scandump"], key


@pytest.mark.parametrize("key", BF_VALUES)
def test_loadchunk_of_old_scandump_chunks(r, key):
    value = RECORD["values"][key]
    for it, data in value["scandump"]:
        reply = r.execute_command("BF.LOADCHUNK", key, it, bytes.fromhex(data))
        assert reply in (b"OK", "OK", True), reply
    check_answers(r, key, value)
    assert r.dump(key) == bytes.fromhex(value["dump"]), f"{key}: DUMP differs from the old module's"


def test_the_old_images_hold_the_old_layout_codes():
    """The fixtures themselves: 0.1's images carry codes 0, 1, 3 (blocked) and 4 (partitioned)."""
    codes = {"bf_default": 4, "bf_line512": 0, "bf_line512_grown": 0, "bf_block256": 1,
             "bf_block256_grown": 1, "bf_word64": 3}
    for key in BF_VALUES:
        chunks = RECORD["values"][key]["scandump"]
        image = image_of([[it, bytes.fromhex(data)] for it, data in chunks])
        assert image_layout_code(image) == codes[key], key


def image_of(chunks):
    """The bloomery file image of SCANDUMP chunks: the first is the 16-byte prefix, "BLMRDUMP" and
    the image's length (u64 little-endian); the others are the image, in order (docs/REDIS.md)."""
    (_, prefix), *rest = chunks
    assert len(prefix) == 16 and prefix[:8] == b"BLMRDUMP", prefix
    image = b"".join(data for _, data in rest)
    assert len(image) == int.from_bytes(prefix[8:], "little")
    return image


def image_layout_code(image):
    """The layout field of a bloomery file image: offset 128, u32 little-endian (docs/FORMAT.md)."""
    assert image[:8] == b"BLOOMERY" and int.from_bytes(image[12:16], "little") == 3, image[:16]
    return int.from_bytes(image[128:132], "little")


@pytest.mark.parametrize("layout, code", [("line512", 5), ("block256", 6), ("word64", 3)])
def test_a_key_made_now_saves_the_fields_probe_code(make_server, layout, code):
    # Uncompressed RDB strings, so the DUMP payload holds the image as it is.
    r = make_server(config=["--rdbcompression", "no"]).client()
    assert r.execute_command("BF.RESERVE", "new", 0.01, 1000, "LAYOUT", layout)
    r.execute_command("BF.MADD", "new", *[f"key-{i}" for i in range(1000)])
    image = image_of(scandump(r, "new"))
    assert image_layout_code(image) == code
    payload = r.dump("new")
    start = payload.find(b"BLOOMERY")
    assert start >= 0 and payload[start:start + len(image)] == image
    assert image_layout_code(payload[start:]) == code
    info = pairs(r.execute_command("BF.INFO", "new"))
    assert info["Layout"] == layout and info["Probe"] == "fields"
