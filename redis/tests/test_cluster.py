# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""A 3-master Redis Cluster on loopback ports, driven by redis-py's RedisCluster(...).bf(): many
filters spread over the nodes, MOVED followed after a slot migrates (MIGRATE carries a filter
through DUMP/RESTORE), answers identical to a single server."""
import os
import subprocess
import time

import pytest
import redis
from redis.cluster import RedisCluster
from redis.exceptions import RedisClusterException

from conftest import SERVER, free_cluster_port

CLUSTER_CONFIG = ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                  "--cluster-node-timeout", "5000"]


@pytest.fixture
def cluster(make_server):
    nodes = [make_server(f"node{i}", config=CLUSTER_CONFIG, port=free_cluster_port())
             for i in range(3)]
    cli = os.path.join(os.path.dirname(SERVER), "redis-cli")
    subprocess.run([cli, "--cluster", "create", *[f"127.0.0.1:{n.port}" for n in nodes],
                    "--cluster-yes"], check=True, stdout=subprocess.DEVNULL, timeout=60)
    deadline = time.monotonic() + 60
    for node in nodes:
        while node.client().cluster("info")["cluster_state"] != "ok":
            assert time.monotonic() < deadline, node.log()
            time.sleep(0.1)
    return nodes


def items_for(index):
    return [f"https://shard{index}.example.com/{j}" for j in range(300)]


def test_cluster_matches_single_server(cluster, server):
    rc = RedisCluster(host="127.0.0.1", port=cluster[0].port)
    cbf = rc.bf()
    single = server.client().bf()
    keys = [f"filter:{i}" for i in range(60)]
    for index, key in enumerate(keys):
        for bf in (cbf, single):
            assert bf.create(key, 0.01, 200)
            bf.madd(key, *items_for(index))
    probes = [f"https://shard{i}.example.com/{j}" for i in range(0, 70, 7) for j in range(290, 330)]
    for key in keys:
        assert cbf.mexists(key, *probes) == single.mexists(key, *probes)
        assert cbf.info(key).insertedNum == single.info(key).insertedNum
    # The filters are spread over every master.
    assert all(node.client().dbsize() > 5 for node in cluster)
    # A node asked for a key it does not own redirects: the module declared its key positions.
    key = keys[0]
    owner = rc.get_node_from_key(key)
    other = next(n for n in cluster if n.port != owner.port)
    with pytest.raises(redis.ResponseError, match="MOVED"):
        other.client().execute_command("BF.EXISTS", key, "x")
    # Multi-key BF.MERGE needs one slot: hash tags put per-worker filters together.
    for worker in range(3):
        cbf.create(f"{{crawl}}:w{worker}", 0.01, 1000)
        cbf.madd(f"{{crawl}}:w{worker}", *items_for(100 + worker))
    rc.execute_command("BF.MERGE", "{crawl}:all", "{crawl}:w0", "{crawl}:w1", "{crawl}:w2")
    for worker in range(3):
        assert all(cbf.mexists("{crawl}:all", *items_for(100 + worker)))
    with pytest.raises(RedisClusterException):  # CROSSSLOT, caught by the client
        rc.execute_command("BF.MERGE", "filter:0", "filter:1", "filter:2")


def test_moved_after_slot_migration(cluster):
    rc = RedisCluster(host="127.0.0.1", port=cluster[0].port)
    bf = rc.bf()
    key = "migrating-filter"
    bf.create(key, 0.01, 1000)
    bf.madd(key, *items_for(1))
    slot = rc.keyslot(key)
    source = next(n for n in cluster if n.port == rc.get_node_from_key(key).port)
    target = next(n for n in cluster if n is not source)
    source_id = source.client().cluster("myid")
    target_id = target.client().cluster("myid")
    target.client().execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", source_id)
    source.client().execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", target_id)
    source.client().execute_command("MIGRATE", "127.0.0.1", target.port, key, 0, 10000)
    for node in cluster:
        node.client().execute_command("CLUSTER", "SETSLOT", slot, "NODE", target_id)
    # rc still believes the old owner: it gets MOVED and follows it.
    assert all(bf.mexists(key, *items_for(1)))
    assert bf.add(key, "after the move") == 1
    assert rc.get_node_from_key(key).port == target.port
    assert target.client().execute_command("BF.EXISTS", key, "after the move") == 1
