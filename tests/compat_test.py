# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""Files written by bloomery 0.1 (tests/fixtures/v0.1/, README.md there) load and answer unchanged.

For every fixture file, the `bloomery` under test (BLOOMERY_CLI) must describe it as the old one did
(kind, layout, bits, hashes, ...; its probe "salted" for the line and block256, "fields" for
word64), find every key inserted, answer the 2,000 absent keys exactly as the old one did (the same
false positives, no more, no fewer), and save it again with its layout code and bytes unchanged.
Run with /usr/bin/python3 -m pytest; meson passes BLOOMERY_CLI (tests/meson.build).
"""
import json
import math
import os
import shutil
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures", "v0.1")
CLI = os.environ.get("BLOOMERY_CLI", "")

with open(os.path.join(FIXTURES, "cli_files.json")) as f:
    RECORD = json.load(f)
FILES = sorted(RECORD["files"])

# The old files' layout codes (docs/FORMAT.md, "Layout codes"): the line and block256 under the
# salted probe, word64; 0 in the kinds without layouts.
EXPECTED_CODES = {"line512": 0, "block256": 1, "word64": 3}
# What `info --json` reads from the header and the geometry: equal, field for field.
HEADER_FIELDS = ["kind", "version", "file_bytes", "payload_bytes", "bits", "hashes", "layout",
                 "counter_bits", "stages", "capacity", "insert_count", "seed", "integer_hash",
                 "dirty", "memory_bytes", "loaded_stages"]
# What it computes from the bits: the same bits give the same numbers.
ESTIMATE_FIELDS = ["planned_fpr", "saturated", "estimated_count", "estimated_fpr", "health",
                   "generations"]


def expand(spec):
    """"key-0..key-1999" -> ["key-0", ..., "key-1999"]."""
    first, last = spec.split("..")
    prefix, start = first.rsplit("-", 1)
    return [f"{prefix}-{i}" for i in range(int(start), int(last.rsplit("-", 1)[1]) + 1)]


INSERTED = expand(RECORD["inserted"])
ABSENT = expand(RECORD["absent"])


def bloomery(*args, stdin=None):
    assert CLI, "BLOOMERY_CLI names the bloomery under test"
    result = subprocess.run([CLI, *args], input=stdin, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"bloomery {' '.join(args)}: {result.stderr}"
    return result.stdout


def query(path, lines):
    return bloomery("query", path, stdin="\n".join(lines) + "\n").split()


def layout_code(path):
    with open(path, "rb") as f:
        header = f.read(256)
    assert header[:8] == b"BLOOMERY"
    return int.from_bytes(header[128:132], "little")


@pytest.fixture(params=FILES)
def fixture(request, tmp_path):
    """(name, its record, a copy of the file in tmp_path): tests never write the fixture itself."""
    name = request.param
    copy = tmp_path / name
    shutil.copyfile(os.path.join(FIXTURES, name), copy)
    return name, RECORD["files"][name], str(copy)


def close(a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
            math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300)
    return a == b


def test_the_fixture_holds_the_old_layout_code(fixture):
    name, record, path = fixture
    layout = record["info"]["layout"]
    expected = EXPECTED_CODES.get(layout, 0) if record["info"]["kind"] in (
        "blocked", "scalable", "windowed") else 0
    assert layout_code(path) == record["layout_code"] == expected, name


def test_info_reads_the_header_as_the_old_code_did(fixture):
    name, record, path = fixture
    info = json.loads(bloomery("info", "--json", path))
    for field in HEADER_FIELDS:
        assert info[field] == record["info"][field], f"{name}: {field}"


def test_info_says_the_old_probe(fixture):
    name, record, path = fixture
    info = json.loads(bloomery("info", "--json", path))
    if record["info"]["kind"] in ("classic", "counting"):
        assert info["probe"] == "none", name
    else:
        assert info["probe"] == {"line512": "salted", "block256": "salted",
                                 "word64": "fields"}[record["info"]["layout"]], name


def test_info_estimates_from_the_same_bits_as_the_old_code(fixture):
    name, record, path = fixture
    info = json.loads(bloomery("info", "--json", path))
    for field in ESTIMATE_FIELDS:
        assert close(info[field], record["info"][field]), \
            f"{name}: {field}: {info[field]} now, {record['info'][field]} in 0.1"


def test_every_inserted_key_is_present(fixture):
    name, _, path = fixture
    assert query(path, INSERTED) == INSERTED, name


def test_absent_keys_answer_as_the_old_code_did(fixture):
    name, record, path = fixture
    # The recorded list is the old code's exact answer: the same false positives, in order.
    assert record["false_positives"], f"{name}: 2,000 absent keys at 1% give some"
    assert query(path, ABSENT) == record["false_positives"], name


def test_saving_again_keeps_the_layout_code_and_the_bytes(fixture):
    name, record, path = fixture
    with open(path, "rb") as f:
        before = f.read()
    bloomery("add", path, stdin="")  # no new key: a load and a save
    assert layout_code(path) == record["layout_code"], name
    with open(path, "rb") as f:
        assert f.read() == before, f"{name}: re-saved with other bytes"
    assert query(path, ABSENT) == record["false_positives"], name


def test_merging_into_a_copy_keeps_the_layout_code(fixture, tmp_path):
    name, record, path = fixture
    if record["info"]["kind"] == "windowed":
        pytest.skip("windowed filters do not merge")
    out = str(tmp_path / ("merged-" + name))
    shutil.copyfile(path, out)
    # The union of the file with its own copy: the same keys, written by the new code.
    bloomery("merge", "-o", out, out, path)
    assert layout_code(out) == record["layout_code"], name
    assert query(out, INSERTED) == INSERTED, name
    # A filter or-ed with itself (counting: its counts doubled) sets no other bit.
    assert query(out, ABSENT) == record["false_positives"], name


@pytest.mark.parametrize("name, code", [("blocked_line512.bloom", 5), ("blocked_block256.bloom", 6),
                                        ("blocked_word64.bloom", 3)])
def test_a_filter_built_now_takes_the_fields_probe(tmp_path, name, code):
    """The same command today writes the fields probe's code; the line's and block256's answers
    then differ from 0.1's: what the tests above would see if an old file were read with the new
    probe."""
    record = RECORD["files"][name]
    path = str(tmp_path / name)
    flags = record["command"].split()[2:record["command"].split().index("-o")]
    bloomery("build", *flags, "-o", path, stdin="\n".join(INSERTED) + "\n")
    assert layout_code(path) == code
    assert json.loads(bloomery("info", "--json", path))["probe"] == "fields"
    assert query(path, INSERTED) == INSERTED
    # The seed is the default one, as in 0.1: word64's probe is 0.1's, the others' are not.
    assert (query(path, ABSENT) == record["false_positives"]) == (code == 3), name
