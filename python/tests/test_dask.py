# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""bloomery.dask on a LocalCluster of two worker processes: the exact intersection, the merged
filter, the probe."""

import random
import sys

import pytest

import bloomery

dask = pytest.importorskip("dask")
db = pytest.importorskip("dask.bag")
distributed = pytest.importorskip("distributed")

from bloomery import dask as bdask  # noqa: E402


def url(i):
    return f"https://site{i % 97}.example.com/path/{i * 2654435761 % (1 << 40):x}?id={i}"


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       dashboard_address=None, host="127.0.0.1")
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.fixture(scope="module")
def data():
    rng = random.Random(54)
    a = [url(i) for i in range(20_000)]
    rng.shuffle(a)
    # B: 20,000 lines, half of them in A, some repeated, in an order of their own.
    b = [url(rng.randrange(40_000)) for _ in range(20_000)]
    in_a = set(a)
    expected = [line for line in b if line in in_a]
    assert 9_000 < len(expected) < 11_000 and len(set(b)) < len(b)
    return a, b, expected


def test_import_bloomery_does_not_import_dask():
    import subprocess

    code = "import sys, bloomery; assert 'dask' not in sys.modules, 'dask imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_exact_intersection_in_b_order(client, data):
    a, b, expected = data
    # A coarse filter (1%), so that the exact pass has false positives to remove.
    common = bdask.intersect(db.from_sequence(a, npartitions=4), db.from_sequence(b, npartitions=3),
                             error_rate=0.01)
    assert common.npartitions == 3
    assert common.compute() == expected


def test_not_exact_keeps_every_common_line_and_few_others(client, data):
    a, b, expected = data
    probed = bdask.intersect(db.from_sequence(a, npartitions=4), db.from_sequence(b, npartitions=3),
                             capacity=len(a), error_rate=0.01, exact=False).compute()
    in_a = set(a)
    assert [line for line in probed if line in in_a] == expected  # every one, in B's order
    extra = len(probed) - len(expected)
    assert 0 < extra < 0.03 * (len(b) - len(expected))


def test_merged_filter_is_the_filter_of_all_lines(client, data):
    a, _, _ = data
    plan = bdask.FilterPlan(capacity=len(a), error_rate=0.001, layout="block256", seed=7)
    merged = bdask.build_filter(db.from_sequence(a, npartitions=5), plan, split_every=2).compute()
    whole = plan.create()
    whole.update(a)
    assert merged == whole.tobytes()


def test_probe_takes_a_filter_or_its_bytes(client, data):
    a, b, expected = data
    f = bloomery.BlockedFilter(len(a), 1e-6)
    f.update(a)
    bag = db.from_sequence(b, npartitions=2)
    assert bdask.probe(bag, f).compute() == expected
    assert bdask.probe(bag, f.tobytes()).compute() == expected


def test_read_lines_strips_the_newline(client, tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("x\ny\nz")
    assert bdask.read_lines(str(path)).compute() == ["x", "y", "z"]


def test_bad_arguments():
    bag = db.from_sequence(["x"], npartitions=1)
    with pytest.raises(ValueError, match="split_every"):
        bdask.build_filter(bag, bdask.FilterPlan(10), split_every=1)
    with pytest.raises(ValueError, match="buckets"):
        bdask.intersect(bag, bag, capacity=1, buckets=0)
