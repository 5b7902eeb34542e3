# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""pybloom-live 4.0's own files: read, answered, added to and written back as pybloom-live does.

The fixtures (../shared/fixtures/pybloom-live-4.0/, beside the repository; meson passes the folder
in BLOOMERY_PYBLOOM_FIXTURES) are five files written by pybloom-live's own tofile() and
expected.json, every answer pybloom-live gives for them. A missing folder fails every test here:
it is never skipped.
"""

import hashlib
import io
import json
import math
import os
import pickle
import struct
import subprocess

import pytest

import bloomery
from bloomery import _native
from bloomery.pybloom import (MigratingFilter, PybloomLiveBloomFilter,
                              PybloomLiveScalableBloomFilter)

_DEFAULT_FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                 "shared", "fixtures", "pybloom-live-4.0")
FIXTURES = os.environ.get("BLOOMERY_PYBLOOM_FIXTURES", _DEFAULT_FIXTURES)
ABSENT = [f"absent-{i}" for i in range(20_000)]


def fixture_path(name):
    path = os.path.join(FIXTURES, name)
    assert os.path.isfile(path), (
        f"{path} is missing: the pybloom-live fixtures live in shared/fixtures/pybloom-live-4.0/ "
        f"beside the repository (set BLOOMERY_PYBLOOM_FIXTURES to the folder)")
    return path


def expected():
    with open(fixture_path("expected.json")) as f:
        return json.load(f)


def case_names():
    # The parameters are the five files the fixtures' README lists; expected() fails if absent.
    return ["bloom-10-0.1.bin", "bloom-1000-0.001.bin", "bloom-1000000-0.000001.bin",
            "scalable-small.bin", "scalable-large.bin"]


def case(name):
    cases = {c["file"]: c for c in expected()["cases"]}
    assert name in cases, f"expected.json has no case for {name}"
    return cases[name]


def read_fixture(name):
    with open(fixture_path(name), "rb") as f:
        return f.read()


def open_fixture(name):
    """The file as pybloom-live's users open it: the class's fromfile on the open file."""
    cls = bloomery.BloomFilter if case(name)["class"] == "BloomFilter" else \
        bloomery.ScalableBloomFilter
    with open(fixture_path(name), "rb") as f:
        return cls.fromfile(f)


def present_keys(c):
    return [f"key-{i}" for i in range(c["present"]["count"])]


def test_the_fixtures_are_there():
    assert sorted(c["file"] for c in expected()["cases"]) == sorted(case_names())


@pytest.mark.parametrize("name", case_names())
def test_every_answer_is_pybloom_lives(name):
    c = case(name)
    f = open_fixture(name)
    if c["class"] == "BloomFilter":
        assert type(f) is PybloomLiveBloomFilter
        assert (f.capacity, f.error_rate, f.count) == (c["capacity"], c["error_rate"], c["count"])
        assert (f.num_slices, f.bits_per_slice) == (c["num_slices"], c["bits_per_slice"])
        assert len(f) == c["count"]
    else:
        assert type(f) is PybloomLiveScalableBloomFilter
        assert (f.initial_capacity, f.error_rate, f.scale) == \
            (c["initial_capacity"], c["error_rate"], c["mode"])
        assert f.count == len(f) == c["count"] and len(f.filters) == c["filters"]
    keys = present_keys(c)
    assert sum(key in f for key in keys) == len(keys)
    assert [key for key in ABSENT if key in f] == c["absent_true"]
    # bloomery.load opens it too, as the same filter.
    loaded = bloomery.load(fixture_path(name))
    assert type(loaded) is type(f) and loaded.tobytes() == f.tobytes()


def test_the_fixtures_use_the_hashes_pybloom_live_picks():
    # make_hashfuncs' choice by the bits a key's slices need (16-bit integers throughout, but the
    # 1e-6 file's 32-bit ones from two sha512 digests). sha384 and the others' 32-bit integers:
    # test_each_hash_and_integer_width_makes_pybloom_lives_bytes.
    names = set()
    for name in case_names():
        f = open_fixture(name)
        names.update(stage.hash_name for stage in getattr(f, "filters", [f]))
    assert names == {"xxh128", "sha1", "sha256", "sha512"}


# Written by pybloom-live at 089f006 (out of tree, with python3-bitarray and python3-xxhash):
# BloomFilter(capacity, error_rate), keys key-0 .. key-(min(capacity // 2, 1000) - 1), then 7
# and b"k"; the file's size and SHA-256.
PYBLOOM_LIVE_FILES = [
    # (capacity, error_rate, hash, num_slices, bits_per_slice, count, bytes, sha256)
    (20, 1e-6, "sha384", 20, 29, 12, 113,
     "77764605229283fb806ac4f010ce58d8a1cf410a518e0342dc89d8d4b853f284"),
    (100_000, 0.1, "xxh128", 4, 119_814, 1002, 59_947,
     "ea4e051e77eccbccf23648443289dc8301385dac31020e8b4099f7af047112fc"),
    (30_000, 0.05, "sha1", 5, 37_412, 1002, 23_423,
     "8af08593706e736a92f6b98e17284628dccc0553217cd2f63df2cb21a9016fae"),
    (40_000, 0.01, "sha256", 7, 54_772, 1002, 47_966,
     "cefb40c0f1c5efa1fb34a116073d5da8d07b50bd1889a4f36b11037a1313882e"),
    (5_000, 1e-5, "sha384", 17, 7_048, 1002, 15_017,
     "1c88312b3500c76141eb708683dd3b8ad1f2b6169269e34f14b4c392d732ad80"),
    (10, 1e-30, "sha512", 100, 15, 7, 228,  # 100 slices: four sha512 digests a key
     "f2fa8c76cd3546d3b3c7046dff9e8080103b74d5cf3cdb5c07b415abe5bb03d2"),
]


@pytest.mark.parametrize("row", PYBLOOM_LIVE_FILES, ids=lambda row: f"{row[0]}-{row[1]}")
def test_each_hash_and_integer_width_makes_pybloom_lives_bytes(row):
    capacity, error_rate, hash_name, slices, bits_per_slice, count, size, digest = row
    f = PybloomLiveBloomFilter(capacity, error_rate)
    assert (f.hash_name, f.num_slices, f.bits_per_slice) == (hash_name, slices, bits_per_slice)
    for i in range(min(capacity // 2, 1000)):
        f.add(f"key-{i}")
    f.add(7)
    f.add(b"k")
    data = f.tobytes()
    assert (f.count, len(data)) == (count, size)
    assert hashlib.sha256(data).hexdigest() == digest


@pytest.mark.parametrize("name", case_names())
def test_an_unmodified_fixture_is_written_back_byte_for_byte(name):
    f = open_fixture(name)
    out = io.BytesIO()
    f.tofile(out)
    assert out.getvalue() == read_fixture(name)
    assert pickle.loads(pickle.dumps(f)).tobytes() == read_fixture(name)


@pytest.mark.parametrize("name", case_names())
def test_the_same_keys_make_the_same_file_as_pybloom_live(name):
    # Built from nothing with the keys the fixture was written with: pybloom-live's bytes exactly
    # (its geometry, hashes, bit order, counts, stage growth and header fields).
    c = case(name)
    if c["class"] == "BloomFilter":
        f = PybloomLiveBloomFilter(c["capacity"], c["error_rate"])
    else:
        f = PybloomLiveScalableBloomFilter(c["initial_capacity"], c["error_rate"], c["mode"])
    for key in present_keys(c):
        f.add(key)
    assert f.tobytes() == read_fixture(name)


def pybloom_header(data):
    return struct.unpack_from("<dQQQQ", data)


@pytest.mark.parametrize("name", ["bloom-10-0.1.bin", "bloom-1000-0.001.bin",
                                  "bloom-1000000-0.000001.bin"])
def test_a_bloomfilter_takes_adds_and_writes_them_in_pybloom_lives_format(name, tmp_path):
    c = case(name)
    f = open_fixture(name)
    room = c["capacity"] - c["count"]
    new = [f"new-{i}" for i in range(min(room, 2_000))]
    added_new = sum(not f.add(key) for key in new)
    assert f.count == c["count"] + added_new
    path = tmp_path / "written.bin"
    with open(path, "wb") as out:
        f.tofile(out)
    data = path.read_bytes()
    # The format, read independently: the header's fields, then ceil(k m / 8) bytes of bits.
    error_rate, slices, bits_per_slice, capacity, count = pybloom_header(data)
    assert (error_rate, slices, bits_per_slice, capacity, count) == \
        (c["error_rate"], c["num_slices"], c["bits_per_slice"], c["capacity"], f.count)
    assert len(data) == 40 + (slices * bits_per_slice + 7) // 8
    assert data[40:] != read_fixture(name)[40:] or not added_new
    with open(path, "rb") as stream:
        g = bloomery.BloomFilter.fromfile(stream)
    assert type(g) is PybloomLiveBloomFilter and g.count == f.count
    keys = present_keys(c) + new
    assert all(key in g for key in keys)
    assert [key for key in ABSENT if key in g] == [key for key in ABSENT if key in f]
    assert set(c["absent_true"]) <= {key for key in ABSENT if key in g}


@pytest.mark.parametrize("name", ["scalable-small.bin", "scalable-large.bin"])
def test_a_scalable_filter_grows_in_pybloom_lives_format(name, tmp_path):
    c = case(name)
    f = open_fixture(name)
    stages = len(f.filters)
    new = [f"new-{i}" for i in range(12_000)]
    for key in new:
        f.add(key)
    assert len(f.filters) > stages
    # Each stage pybloom-live would add: scale times the capacity at 0.9 times the rate, sized by
    # its formula (k = ceil(log2(1/p)), m = ceil(n |ln p| / (k ln^2 2))).
    for before, after in zip(f.filters, f.filters[1:]):
        assert after.capacity == before.capacity * c["mode"]
        assert after.error_rate == before.error_rate * 0.9
        k = math.ceil(math.log2(1 / after.error_rate))
        assert after.num_slices == k
        assert after.bits_per_slice == math.ceil(
            after.capacity * abs(math.log(after.error_rate)) / (k * math.log(2) ** 2))
    path = tmp_path / "grown.bin"
    with open(path, "wb") as out:
        f.tofile(out)
    data = path.read_bytes()
    scale, ratio, initial_capacity, error_rate, count = struct.unpack_from("<idQdl", data)
    assert (scale, ratio, initial_capacity, error_rate, count) == \
        (c["mode"], 0.9, c["initial_capacity"], c["error_rate"], len(f.filters))
    lengths = struct.unpack_from(f"<{count}Q", data, 32)
    assert list(lengths) == [40 + (s.num_bits + 7) // 8 for s in f.filters]
    assert len(data) == 32 + 8 * count + sum(lengths)
    # The stage files follow, one after another, each pybloom-live's BloomFilter file.
    at = 32 + 8 * count
    for stage, length in zip(f.filters, lengths):
        assert data[at:at + length] == stage.tobytes()
        assert pybloom_header(data[at:])[4] == stage.count
        at += length
    with open(path, "rb") as stream:
        g = bloomery.ScalableBloomFilter.fromfile(stream)
    assert type(g) is PybloomLiveScalableBloomFilter and g.count == f.count
    assert all(key in g for key in present_keys(c) + new)
    assert [key for key in ABSENT if key in g] == [key for key in ABSENT if key in f]


def test_xxh128_digest_is_python_xxhashs():
    # python-xxhash's xxh128(data).hexdigest() for these inputs (big-endian canonical form).
    assert _native._xxh128_digest(b"").hex() == "99aa06d3014798d86001c324468d497f"
    assert _native._xxh128_digest(b"a").hex() == "a96faf705af16834e6c632b61e964e1f"
    assert _native._xxh128_digest(b"abc" * 30).hex() == "768cbd49d337177228cb454de71c83fc"
    # And the library's own XXH3-128 (bloomery.hash_key, seed 0: (low, high)) in that order.
    for data in (b"", b"key-1", bytes(range(256)) * 5):
        low, high = bloomery.hash_key(data, seed=0)
        assert _native._xxh128_digest(data) == high.to_bytes(8, "big") + low.to_bytes(8, "big")


def test_keys_are_hashed_as_pybloom_live_4_hashes_them():
    # A str as UTF-8; anything else as the UTF-8 of str(key): 7 is "7", b"k" is the text "b'k'".
    f = PybloomLiveBloomFilter(1_000, 0.01)
    f.add(7)
    f.add(b"k")
    f.add("ключ")
    assert "7" in f and "b'k'" in f and "ключ" in f
    g = PybloomLiveBloomFilter(1_000, 0.01)
    g.add("ключ")
    assert "ключ".encode() not in PybloomLiveBloomFilter(1_000, 0.01)
    assert g.tobytes()[40:] == (g | PybloomLiveBloomFilter(1_000, 0.01)).tobytes()[40:]


def test_add_answers_and_capacity_like_pybloom_live():
    f = PybloomLiveBloomFilter(3, 0.1)
    assert f.add("a") is False and f.add("a") is True
    assert f.add("b", skip_check=True) is False and f.count == 2
    f.add("c")
    with pytest.raises(IndexError, match="BloomFilter is at capacity"):
        f.add("d")
    with pytest.raises(ValueError, match="Error_Rate"):
        PybloomLiveBloomFilter(10, 1.5)
    with pytest.raises(ValueError, match="Capacity"):
        PybloomLiveBloomFilter(0, 0.1)


def test_union_intersection_and_copy_of_the_same_geometry():
    a = PybloomLiveBloomFilter(1_000, 0.001)
    b = PybloomLiveBloomFilter(1_000, 0.001)
    for i in range(300):
        a.add(f"a-{i}")
        b.add(f"b-{i}")
    a.add("both")
    b.add("both")
    union, both = a | b, a & b
    assert all(f"a-{i}" in union and f"b-{i}" in union for i in range(300))
    assert "both" in both and sum(f"a-{i}" in both for i in range(300)) < 10
    assert union.count == both.count == a.count
    assert bytes(union._bits) == bytes(x | y for x, y in zip(a._bits, b._bits))
    copy = a.copy()
    copy.add("only in the copy")
    assert "only in the copy" not in a and copy.count == a.count + 1
    with pytest.raises(ValueError, match="same capacity and error rate"):
        a | PybloomLiveBloomFilter(1_000, 0.01)
    with pytest.raises(ValueError, match="equal capacity and error rate"):
        a & PybloomLiveBloomFilter(999, 0.001)
    with pytest.raises(TypeError, match="hashed differently"):
        a | bloomery.BloomFilter(1_000, 0.001)


def test_scalable_union_is_pybloom_lives_stage_by_stage():
    small = open_fixture("scalable-small.bin")
    other = PybloomLiveScalableBloomFilter(100, 0.001, PybloomLiveScalableBloomFilter
                                           .SMALL_SET_GROWTH)
    for i in range(150):
        other.add(f"other-{i}")
    union = small | other
    assert len(union.filters) == len(small.filters)
    assert all(f"other-{i}" in union for i in range(150))
    assert all(key in union for key in present_keys(case("scalable-small.bin")))
    assert union.count == small.count  # the counts of the filter with more stages
    with pytest.raises(ValueError, match="same mode, initial capacity and error rate"):
        small | open_fixture("scalable-large.bin")


def test_streams_hold_several_files_as_in_pybloom_live():
    small, scalable = read_fixture("bloom-10-0.1.bin"), read_fixture("scalable-large.bin")
    stream = io.BytesIO(small + scalable + small)
    first = bloomery.BloomFilter.fromfile(stream, len(small))
    second = bloomery.ScalableBloomFilter.fromfile(stream)  # exactly its bytes
    third = bloomery.BloomFilter.fromfile(stream)
    assert first.tobytes() == third.tobytes() == small and second.tobytes() == scalable
    sized = bloomery.ScalableBloomFilter.fromfile(io.BytesIO(scalable + small), len(scalable))
    assert sized.tobytes() == scalable


def test_bad_files_say_what_they_are():
    small = read_fixture("bloom-10-0.1.bin")
    with pytest.raises(bloomery.FormatError, match="holds 6 bytes of bits after its header; "
                                                   "this one has 2"):
        bloomery.BloomFilter.fromfile(io.BytesIO(small[:-4]))
    with pytest.raises(bloomery.FormatError, match=r"pybloom-live file \(ScalableBloomFilter, "
                                                   r"initial capacity 100.*ScalableBloomFilter"
                                                   r"\.fromfile"):
        bloomery.BloomFilter.fromfile(io.BytesIO(read_fixture("scalable-small.bin")))
    with pytest.raises(bloomery.FormatError, match=r"pybloom-live file \(BloomFilter, capacity "
                                                   r"1000, .*BloomFilter\.fromfile"):
        bloomery.ScalableBloomFilter.fromfile(io.BytesIO(read_fixture("bloom-1000-0.001.bin")))
    with pytest.raises(bloomery.FormatError, match="stage 4: the file ends"):
        bloomery.ScalableBloomFilter.fromfile(io.BytesIO(read_fixture("scalable-small.bin")[:-1]))
    with pytest.raises(bloomery.FormatError, match="BloomFilter file"):
        bloomery.BloomFilter.fromfile(io.BytesIO(b""))
    # The library names them too, so bloomery.info and the CLI say what to call.
    with pytest.raises(bloomery.FormatError, match=r"a pybloom-live file \(BloomFilter, capacity "
                                                   r"10, error rate 0\.1, count 8, 4 slices of "
                                                   r"12 bits\): open it with bloomery\.BloomFilter"
                                                   r"\.fromfile in Python"):
        bloomery.info(fixture_path("bloom-10-0.1.bin"))
    with pytest.raises(TypeError, match="takes no options"):
        bloomery.load(fixture_path("bloom-10-0.1.bin"), concurrent=True)


def test_load_opens_what_bloomfilter_tofile_writes(tmp_path):
    f = bloomery.BloomFilter(1_000, 0.01)
    f.update(["a", "b", "c"])
    path = tmp_path / "tofile.bin"
    with open(path, "wb") as out:
        f.tofile(out)
    g = bloomery.load(path)
    assert type(g) is bloomery.BloomFilter
    assert (g.count, g.error_rate, g.capacity) == (3, 0.01, 1_000) and "b" in g
    assert bloomery.load(str(path), concurrent=True).concurrent
    with pytest.raises(bloomery.FormatError, match=r"a bloomery\.BloomFilter\.tofile\(\) file "
                                                   r"\(pybloom-live's 40-byte header: capacity "
                                                   r"1000, error rate 0\.01, count 3"):
        bloomery.info(path)


@pytest.mark.skipif("BLOOMERY_CLI" not in os.environ, reason="the CLI is not built (tools=false)")
def test_the_cli_says_what_pybloom_files_are(tmp_path):
    wrapped = tmp_path / "tofile.bin"
    f = bloomery.BloomFilter(1_000, 0.01)
    with open(wrapped, "wb") as out:
        f.tofile(out)
    for path, words in ((fixture_path("bloom-1000000-0.000001.bin"),
                         "a pybloom-live file (BloomFilter, capacity 1000000, error rate 1e-06, "
                         "count 50000, 20 slices of 1437759 bits): open it with "
                         "bloomery.BloomFilter.fromfile in Python"),
                        (fixture_path("scalable-large.bin"),
                         "a pybloom-live file (ScalableBloomFilter, initial capacity 100, error "
                         "rate 0.001, scale 4, 4 filters): open it with "
                         "bloomery.ScalableBloomFilter.fromfile in Python"),
                        (str(wrapped), "a bloomery.BloomFilter.tofile() file")):
        run = subprocess.run([os.environ["BLOOMERY_CLI"], "info", str(path)],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 1 and words in run.stderr, run.stderr


def test_migrating_filter_answers_from_both_and_adds_to_the_new_one():
    old = open_fixture("bloom-1000-0.001.bin")
    new = bloomery.BloomFilter(10_000, 0.001)
    seen = MigratingFilter(new, old)
    assert "key-5" in seen and "key-5" not in new  # the old file's keys answer
    assert seen.add("key-5") is True and "key-5" in new  # and move over once seen again
    assert seen.add("fresh") is False and "fresh" in new and "fresh" not in old
    assert seen.add("fresh") is True
    assert old.count == case("bloom-1000-0.001.bin")["count"]  # old is only read


def test_a_damaged_scalable_header_is_refused_without_reading_what_it_claims(tmp_path):
    # 2^31 - 1 stages and a stage of 2^63 bytes claimed: FormatError once the file ends.
    header = struct.pack("<idQdl", 2, 0.9, 100, 0.001, 2**31 - 1)
    path = tmp_path / "damaged.bin"
    path.write_bytes(header + bytes(64))
    with open(path, "rb") as f, pytest.raises(bloomery.FormatError, match="the file ends after 64"):
        bloomery.ScalableBloomFilter.fromfile(f)
    path.write_bytes(struct.pack("<idQdl", 2, 0.9, 100, 0.001, 1) + struct.pack("<Q", 2**63))
    with open(path, "rb") as f, pytest.raises(bloomery.FormatError, match="stage 0: the file ends"):
        bloomery.ScalableBloomFilter.fromfile(f)
