# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""RedisBloomDupeFilter as a migration from scrapy-redis: driven exactly as scrapy-redis 0.9's
Scheduler drives a dupefilter (scrapy_redis_scheduler.py, a stand-in: scrapy-redis is not in
Debian), scrapy-redis's connection and size settings, its seen-set imported, the filter's shape
fixed for its life, and no page lost to a SIGKILL (alone and under the scrapy-redis scheduler)."""
import importlib
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from test_cluster import cluster  # noqa: F401 - the fixture
from test_scrapy import filter_keys, serve_site

HERE = os.path.dirname(os.path.abspath(__file__))
SCRAPY_REDIS_PY = os.path.join(HERE, "..", "..", "python", "bloomery", "scrapy_redis.py")
SITE_PAGES = 2000

# Fingerprints scrapy-redis 0.9's RFPDupeFilter.request_fingerprint gives (computed with its code).
SCRAPY_REDIS_FINGERPRINTS = {
    ("GET", "http://example.com/a?b=2&a=1", b""): "e34921d88a05be58f5d638c160d471933d9bec18",
    ("GET", "http://127.0.0.1:8000/p7.html", b""): "06718e700f899808c6e76bc65d10072bc749c1f8",
    ("POST", "http://example.com/x", b"q=1"): "f6340e5a24f23402041aeedfd47027f21cb7e4f8",
}


def package():
    """bloomery.scrapy_redis (loaded by path where the package is not built)."""
    import scrapy_crawler

    if scrapy_crawler.PACKAGE == "bloomery.scrapy":
        return importlib.import_module("bloomery.scrapy_redis")
    return importlib.import_module(scrapy_crawler.PACKAGE)


def scheduler_and_spider(settings):
    """scrapy-redis's Scheduler (the stand-in) built and opened as Scrapy's engine does."""
    import scrapy
    from scrapy.utils.test import get_crawler

    import scrapy_crawler
    import scrapy_redis_scheduler

    class Spider(scrapy.Spider):
        name = "site"

    crawler = get_crawler(Spider, settings_dict={
        "DUPEFILTER_CLASS": f"{scrapy_crawler.PACKAGE}.RedisBloomDupeFilter",  # as documented
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7", **settings})
    spider = Spider.from_crawler(crawler)
    crawler.spider = spider
    scheduler = scrapy_redis_scheduler.Scheduler.from_crawler(crawler)
    scheduler.open(spider)
    return scheduler, crawler


def test_driven_as_scrapy_redis_scheduler_drives_it(server):
    """from_spider with no open(), request_seen, log on each duplicate, clear() on
    SCHEDULER_FLUSH_ON_START and at close without SCHEDULER_PERSIST; the key from
    SCHEDULER_DUPEFILTER_KEY's default, the connection from REDIS_URL, scrapy-redis's
    fingerprints. Before: IndexError in _key_for on the first request (never opened)."""
    from scrapy.http import Request

    r = server.client()
    url = f"redis://127.0.0.1:{server.port}/0"
    scheduler, crawler = scheduler_and_spider({"REDIS_URL": url})
    assert scheduler.df.key == "site:dupefilter"
    requests = [Request(u, method=m, body=b) for m, u, b in SCRAPY_REDIS_FINGERPRINTS]
    assert all(scheduler.enqueue_request(q) for q in requests)
    assert not any(scheduler.enqueue_request(q.replace()) for q in requests)
    assert crawler.stats.get_value("dupefilter/filtered") == 3  # log() on each duplicate
    assert filter_keys(r) == ["site:dupefilter", "site:requests"]
    # The filter holds scrapy-redis's own fingerprints (so its imported seen-set matches).
    for fingerprint in SCRAPY_REDIS_FINGERPRINTS.values():
        assert r.execute_command("BF.EXISTS", "site:dupefilter", fingerprint) == 1
    assert [scheduler.df.request_fingerprint(q) for q in requests] == list(
        SCRAPY_REDIS_FINGERPRINTS.values())

    # Another crawler with SCHEDULER_FLUSH_ON_START: the filter is cleared, its requests are new.
    other, _ = scheduler_and_spider({"REDIS_URL": url, "SCHEDULER_FLUSH_ON_START": True,
                                     "SCHEDULER_PERSIST": True})
    assert filter_keys(r) == []
    assert all(other.enqueue_request(q.replace()) for q in requests)
    assert not other.enqueue_request(requests[0].replace())
    other.close("finished")
    assert "site:dupefilter" in filter_keys(r)
    # SCHEDULER_PERSIST = False: close flushes; the next crawl starts from an empty filter.
    scheduler.close("finished")
    assert filter_keys(r) == []
    assert scheduler.enqueue_request(requests[0].replace())


def test_scrapy_redis_connection_and_size_settings(server):
    """REDIS_HOST/REDIS_PORT and REDIS_PARAMS (its db) reach the filter when BLOOMERY_REDIS_URL is
    absent; SCHEDULER_DUPEFILTER_KEY names it; BLOOMFILTER_BIT = 20 and BLOOMFILTER_HASH_NUMBER = 6
    plan a filter of 2**20 bits (capacity 2**20 ln 2 / 6, error rate 2**-6)."""
    import math

    from scrapy.http import Request

    scheduler, _ = scheduler_and_spider({
        "REDIS_HOST": "127.0.0.1",
        "REDIS_PORT": server.port, "REDIS_PARAMS": {"db": 3},
        "SCHEDULER_DUPEFILTER_KEY": "%(spider)s:seen-by-bloomery", "BLOOMFILTER_BIT": 20,
        "BLOOMFILTER_HASH_NUMBER": 6, "SCHEDULER_PERSIST": True})
    df = scheduler.df
    assert scheduler.enqueue_request(Request("http://example.com/"))
    db3 = server.client(db=3)
    assert db3.exists("site:seen-by-bloomery") and not server.client().exists(
        "site:seen-by-bloomery")
    info = dict(zip(*[iter(db3.execute_command("BF.INFO", "site:seen-by-bloomery"))] * 2))
    assert info[b"Capacity"] == int(2**20 * math.log(2) / 6) == df.capacity
    assert df.error_rate == 2**-6
    # About the memory of scrapy-redis-bloomfilter's bitmap: bloomery's blocked layout takes some
    # more bits (1.17 times here) for the same rate.
    assert 1 <= info[b"Size"] * 8 / 2**20 < 1.3, info[b"Size"]


def reserve(r, key, shards):
    for i in range(shards):
        r.execute_command("BF.RESERVE", f"{{{key}:{i}}}" if shards > 1 else key, 0.001, 1000)


@pytest.mark.parametrize("recorded", [True, False])
def test_shard_count_fixed_for_life(server, recorded):
    """A filter made with 4 shards (recorded in its meta key; or, made before shapes were
    recorded, read from its keys) refuses 8 and 1, saying what to do; 4 opens it."""
    module = package()
    r = server.client()
    if recorded:
        module.RedisBloomDupeFilter(r, key="k", shards=4).open()
    else:
        reserve(r, "k", 4)
    for shards in (8, 1):
        with pytest.raises(module.FilterShapeError) as error:
            module.RedisBloomDupeFilter(r, key="k", shards=shards).open()
        message = str(error.value)
        assert "BLOOMERY_REDIS_SHARDS = 4" in message and "BLOOMERY_REDIS_KEY" in message
        assert f"asks for {shards}" in message
    assert filter_keys(r) == [f"{{k:{i}}}" for i in range(4)]  # nothing created
    module.RedisBloomDupeFilter(r, key="k", shards=4).open()
    assert '"shards": 4' in r.get("{k}:bloomery:meta").decode()


def test_scrapy_redis_seen_set_at_the_key_is_refused_with_the_import_command(server):
    module = package()
    r = server.client()
    r.sadd("site:dupefilter", "e34921d88a05be58f5d638c160d471933d9bec18")
    with pytest.raises(module.FilterShapeError, match="import-seen"):
        module.RedisBloomDupeFilter(r, key="site:dupefilter").open()


def test_import_seen_resumes_and_the_filter_finds_every_imported_request(server):
    """scrapy-redis's seen-set (hex SHA-1 fingerprints, at its dupefilter key) imported in batches,
    stopped after 3 and resumed: the dupefilter under scrapy-redis's scheduler then drops every
    imported request and takes new ones."""
    from scrapy.http import Request

    module = package()
    r = server.client()
    old = [Request(f"http://127.0.0.1:8000/p{i}.html") for i in range(3000)]
    new = [Request(f"http://127.0.0.1:8000/new{i}.html") for i in range(1000)]
    r.sadd("site:dupefilter", *[module.scrapy_redis_fingerprint(q) for q in old])
    assert module.scrapy_redis_fingerprint(old[7]) == SCRAPY_REDIS_FINGERPRINTS[
        ("GET", "http://127.0.0.1:8000/p7.html", b"")]
    first = module.import_seen(r, "site:dupefilter", shards=4, capacity=10_000, batch=100,
                               max_batches=3)
    assert not first["done"] and 0 < first["imported"] < 3000
    progress = r.hgetall("{site:dupefilter}:bloomery:import")
    assert progress[b"state"] == b"running" and progress[b"cursor"] != b"0"
    rest = module.import_seen(r, "site:dupefilter", shards=4, capacity=10_000, batch=100)
    assert rest["done"] and rest["imported"] >= 3000
    assert rest["source"] == "site:dupefilter"  # 4 shards: the set keeps its key
    assert module.import_seen(r, "site:dupefilter", shards=4)["done"]  # a no-op once done

    scheduler, _ = scheduler_and_spider({"REDIS_URL": f"redis://127.0.0.1:{server.port}/0",
                                         "BLOOMERY_REDIS_SHARDS": 4, "SCHEDULER_PERSIST": True})
    assert not any(scheduler.enqueue_request(q) for q in old)
    taken = sum(scheduler.enqueue_request(q) for q in new)
    assert taken >= 990  # an error rate of 0.001: a few false positives at most


def cli(*args):
    """The command line of ``python3 -m bloomery.scrapy_redis <args>``; where the package is not
    built, its file run as __main__ (by path, without its directory on sys.path)."""
    import scrapy_crawler

    if scrapy_crawler.PACKAGE == "bloomery.scrapy":
        return [sys.executable, "-m", "bloomery.scrapy_redis", *args]
    return [sys.executable, "-c", f"import runpy; runpy.run_path({SCRAPY_REDIS_PY!r}, "
            "run_name='__main__')", *args]


def run_cli(*args):
    return subprocess.run(cli("import-seen", *args), capture_output=True, text=True, timeout=60)


def test_import_seen_command_killed_and_run_again(server):
    """``python3 -m bloomery.scrapy_redis import-seen`` (run here by path) on a set at the
    filter's own key (1 shard): the set is moved aside; killed with SIGKILL mid-import and run
    again, it finishes; every fingerprint is in the filter."""
    r = server.client()
    fingerprints = [f"{i:040x}" for i in range(20_000)]
    r.sadd("site:dupefilter", *fingerprints)
    url = f"redis://127.0.0.1:{server.port}/0"
    args = ["--redis-url", url, "--set", "site:dupefilter", "--capacity", "50000", "--batch", "10"]
    process = subprocess.Popen(cli("import-seen", *args),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while int(r.hget("{site:dupefilter}:bloomery:import", "imported") or 0) < 200:
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    process.wait()
    imported = int(r.hget("{site:dupefilter}:bloomery:import", "imported"))
    assert imported < 20_000
    done = run_cli(*args)
    assert done.returncode == 0, done.stderr
    assert "into 'site:dupefilter'" in done.stdout
    assert r.type("site:dupefilter") != b"set"
    assert r.scard("{site:dupefilter}:bloomery:seen-set") == 20_000
    found = r.execute_command("BF.MEXISTS", "site:dupefilter", *fingerprints)
    assert all(found)
    other_shape = run_cli(*args, "--shards", "2")
    assert other_shape.returncode == 1 and "BLOOMERY_REDIS_SHARDS = 1" in other_shape.stderr
    bad = run_cli("--redis-url", url, "--set", "nothing-here")
    assert bad.returncode == 1 and "no set of fingerprints at 'nothing-here'" in bad.stderr


def start_crawler(site_port, server, *args):
    crawler = os.path.join(HERE, "scrapy_crawler.py")
    return subprocess.Popen([sys.executable, crawler, str(site_port), str(server.port), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def finish(process, timeout=120):
    output = process.communicate(timeout=timeout)[0].decode(errors="replace")
    assert process.returncode == 0, output
    return output


def not_once(downloads, times=1):
    return (len(downloads), sorted((n, path) for path, n in downloads.items() if n != times)[:10])


def test_two_crawlers_under_scrapy_redis_scheduler_fetch_every_page_once(server, tmp_path):
    """Two crawlers under scrapy-redis's scheduler with its settings only (REDIS_URL,
    SCHEDULER_PERSIST) and DUPEFILTER_CLASS = RedisBloomDupeFilter, no glue: every page of 2,000
    once."""
    with serve_site(tmp_path, SITE_PAGES) as (site_port, downloads):
        processes = [start_crawler(site_port, server, "4", "--scrapy-redis") for _ in range(2)]
        for process in processes:
            finish(process)
        assert len(downloads) == SITE_PAGES and set(downloads.values()) == {1}, not_once(downloads)
        assert "site:dupefilter" not in filter_keys(server.client())  # 4 shards


def test_scrapy_redis_flush_on_start_clears_the_filter(server, tmp_path):
    """A crawl with SCHEDULER_FLUSH_ON_START after a persisted one: every page once more."""
    with serve_site(tmp_path, 300) as (site_port, downloads):
        finish(start_crawler(site_port, server, "1", "--scrapy-redis"))
        finish(start_crawler(site_port, server, "1", "--scrapy-redis"))
        assert len(downloads) == 300 and set(downloads.values()) == {1}, not_once(downloads)
        finish(start_crawler(site_port, server, "1", "--scrapy-redis",
                             "SCHEDULER_FLUSH_ON_START=true"))
        assert len(downloads) == 300 and set(downloads.values()) == {2}, not_once(downloads, 2)


def test_shards_changed_on_a_crawled_filter_refused_nothing_crawled_again(server, tmp_path):
    with serve_site(tmp_path, 300) as (site_port, downloads):
        finish(start_crawler(site_port, server, "4"))
        assert len(downloads) == 300 and set(downloads.values()) == {1}
        process = start_crawler(site_port, server, "8")
        output = process.communicate(timeout=60)[0].decode(errors="replace")
        assert "BLOOMERY_REDIS_SHARDS = 4" in output and "asks for 8" in output, output
        assert len(downloads) == 300 and set(downloads.values()) == {1}


@pytest.mark.parametrize("scheduler", ["scrapy", "scrapy-redis"])
def test_sigkill_at_three_random_points_loses_no_page(server, tmp_path, scheduler):
    """A crawler killed with SIGKILL at three random points of a 2,000-page crawl (its lease:
    2 s), restarted each time: every page fetched at least once. The duplicates each kill cost
    are printed (pytest -s)."""
    extra = ["BLOOMERY_REDIS_LEASE=2", "CONCURRENT_REQUESTS=16"]
    if scheduler == "scrapy-redis":
        extra.append("--scrapy-redis")
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    kill_at = sorted(rng.sample(range(100, SITE_PAGES - 200), 3))
    duplicates = []
    with serve_site(tmp_path, SITE_PAGES) as (site_port, downloads):
        before = 0
        for threshold in kill_at:
            process = start_crawler(site_port, server, "2", *extra)
            deadline = time.monotonic() + 60
            while sum(downloads.values()) < threshold:
                assert process.poll() is None, process.communicate()[0].decode()[-3000:]
                assert time.monotonic() < deadline
                time.sleep(0.002)
            process.send_signal(signal.SIGKILL)
            process.wait()
            duplicates.append(sum(downloads.values()) - len(downloads) - before)
            before = sum(downloads.values()) - len(downloads)
        finish(start_crawler(site_port, server, "2", *extra))
        duplicates.append(sum(downloads.values()) - len(downloads) - before)
        missing = SITE_PAGES - len(downloads)
        print(f"\n{scheduler}: seed {seed}, killed after {kill_at} downloads; duplicates per "
              f"segment (after kill 1..3 counted in the next run) {duplicates[1:]}, total "
              f"{sum(downloads.values()) - len(downloads)} for {SITE_PAGES} pages; missing "
              f"{missing}")
        assert missing == 0, (seed, kill_at)


def test_on_redis_cluster_shape_pending_and_import(cluster):
    """On a 3-master Cluster: the shape refused across shard counts, a new request kept pending in
    the same (cross-slot) pipeline as its add, clear() across slots, and the seen-set import."""
    import scrapy
    from redis.cluster import RedisCluster
    from scrapy.http import Request
    from scrapy.utils.test import get_crawler

    module = package()
    rc = RedisCluster(host="127.0.0.1", port=cluster[0].port)

    class Spider(scrapy.Spider):
        name = "site"

    crawler = get_crawler(Spider, settings_dict={"REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7"})
    crawler.spider = Spider.from_crawler(crawler)
    df = module.RedisBloomDupeFilter(rc, fingerprinter=crawler.request_fingerprinter, key="c",
                                     shards=4, stats=crawler.stats)
    df.lease_s = 30
    df._track(crawler, shared_frontier=False)
    df.open()
    with pytest.raises(module.FilterShapeError, match="BLOOMERY_REDIS_SHARDS = 4"):
        module.RedisBloomDupeFilter(rc, key="c", shards=8).open()
    requests = [Request(f"http://example.com/{i}") for i in range(50)]
    assert not any(df.request_seen(q) for q in requests)
    assert all(df.request_seen(q.replace()) for q in requests)
    assert rc.hlen(df.pending.pending_key) == 50  # kept until their responses are handled
    assert sum(node.client().dbsize() > 0 for node in cluster) >= 2  # shards over the masters
    df.clear()
    assert sum(node.client().dbsize() for node in cluster) == 0
    assert not df.request_seen(requests[0])  # created again on the next request

    rc.sadd("old:dupefilter", *[module.scrapy_redis_fingerprint(q) for q in requests])
    result = module.import_seen(rc, "old:dupefilter", shards=1, batch=7)
    assert result["done"] and result["source"] == "{old:dupefilter}:bloomery:seen-set"
    assert all(rc.execute_command("BF.MEXISTS", "old:dupefilter",
                                  *[module.scrapy_redis_fingerprint(q) for q in requests]))
