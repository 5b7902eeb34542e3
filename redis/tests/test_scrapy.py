# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""Two Scrapy processes sharing one filter through the module crawl a local site: every page is
downloaded exactly once between them; with RedisWindowedDupeFilter, once again per window. A
filter whose key disappears mid-crawl reserves it again as it was."""
import collections
import contextlib
import http.server
import importlib
import logging
import os
import subprocess
import sys
import threading

import pytest

PAGES = 300


def write_site(directory, pages=PAGES):
    """`pages` pages, each linking to five others: every page is reachable from index.html, and
    most are linked from several pages, so both crawlers keep finding the same URLs."""
    for i in range(pages):
        links = {(i + 1) % pages, (3 * i + 1) % pages, (7 * i + 2) % pages, (i * i) % pages, 0}
        body = "".join(f'<a href="/p{j}.html">p{j}</a>\n' for j in sorted(links))
        body = body.replace("/p0.html", "/index.html")
        name = "index.html" if i == 0 else f"p{i}.html"
        with open(os.path.join(directory, name), "w") as f:
            f.write(f"<html><body>{body}</body></html>")


@contextlib.contextmanager
def serve_site(tmp_path, pages=PAGES):
    """The site, served on 127.0.0.1; yields (port, Counter of downloads by path)."""
    root = tmp_path / "site"
    root.mkdir()
    write_site(root, pages)
    downloads = collections.Counter()
    lock = threading.Lock()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def do_GET(self):
            with lock:
                downloads[self.path] += 1
            super().do_GET()

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd.server_address[1], downloads
    finally:
        httpd.shutdown()


@pytest.fixture
def site(tmp_path):
    """The site of PAGES pages, served on 127.0.0.1; yields (port, Counter of downloads by path)."""
    with serve_site(tmp_path) as served:
        yield served


def crawl(site_port, server, shards, dupefilter="RedisBloomDupeFilter"):
    """Two crawler processes at once, sharing the filter on `server`."""
    crawler = os.path.join(os.path.dirname(__file__), "scrapy_crawler.py")
    args = [sys.executable, crawler, str(site_port), str(server.port), str(shards), dupefilter]
    processes = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                 for _ in range(2)]
    outputs = [p.communicate(timeout=120)[0].decode(errors="replace") for p in processes]
    for process, output in zip(processes, outputs):
        assert process.returncode == 0, output


def filter_keys(r):
    """The filters' keys in `r` (not their companions: the recorded shape, pending requests)."""
    return sorted(k.decode() for k in r.keys("*") if b":bloomery:" not in k)


PAGE_PATHS = {"/index.html"} | {f"/p{i}.html" for i in range(1, PAGES)}


def assert_each_page_downloaded(downloads, times):
    assert set(downloads) == PAGE_PATHS, sorted(PAGE_PATHS - set(downloads))[:10]
    assert all(count == times for count in downloads.values()), downloads.most_common(5)


@pytest.mark.parametrize("shards", [1, 4])
def test_two_crawlers_download_every_page_once(server, site, shards):
    site_port, downloads = site
    crawl(site_port, server, shards)
    assert_each_page_downloaded(downloads, 1)
    r = server.client()
    keys = filter_keys(r)
    assert len(keys) == shards
    assert sum(r.execute_command("BF.CARD", k) for k in keys) == PAGES


def test_windowed_revisit_crawl(make_server, site):
    """RedisWindowedDupeFilter with BLOOMERY_REDIS_WINDOW = "7d": two crawlers download every page
    once; crawling again the same day downloads nothing; 8 days later (the server's clock stepped
    by its testing offset) every page once more, still once between the two crawlers."""
    server = make_server(module_args=["TESTING-CLOCK", "1"])
    site_port, downloads = site
    crawl(site_port, server, 2, "RedisWindowedDupeFilter")
    assert_each_page_downloaded(downloads, 1)
    crawl(site_port, server, 2, "RedisWindowedDupeFilter")
    assert_each_page_downloaded(downloads, 1)
    r = server.client()
    keys = filter_keys(r)
    assert len(keys) == 2
    info = dict(zip(*[iter(r.execute_command("BFW.INFO", keys[0]))] * 2))
    assert info[b"Window ms"] == 7 * 86_400_000 and info[b"Refresh"] == b"KEEP_FIRST_SEEN"
    r.execute_command("BFW.TESTING-CLOCK-OFFSET", 8 * 86_400_000)
    crawl(site_port, server, 2, "RedisWindowedDupeFilter")
    assert_each_page_downloaded(downloads, 2)


# The INFO fields that describe a filter as reserved (the others count keys or tell the time), and
# for BF.* the stages' error-rate shares BF.DEBUG gives.
RESERVED_FIELDS = {"BFW.INFO": (b"Mode", b"Window ms", b"Generations", b"Refresh", b"Layout",
                                b"Capacity", b"Error rate", b"Size"),
                   "BF.INFO": (b"Capacity", b"Size", b"Expansion rate", b"Layout")}


def reserved_sizing(r, key):
    family = "BFW" if r.type(key) == b"bloomeryw" else "BF"
    info = dict(zip(*[iter(r.execute_command(f"{family}.INFO", key))] * 2))
    sizing = {field: info[field] for field in RESERVED_FIELDS[f"{family}.INFO"]}
    if family == "BF":
        sizing["stages"] = [line.split(b" size:")[0] + line.split(b"ratio:")[1]
                            for line in r.execute_command("BF.DEBUG", key)[1:]]
    return sizing


class ReserveHook:
    """A redis client that runs `hook` once, just before its next BF.RESERVE or BFW.RESERVE: another
    crawler recreating the key between this one's "not found" and its own reserve."""

    def __init__(self, client):
        self.client = client
        self.hook = None

    def execute_command(self, *args):
        if args[0] in ("BF.RESERVE", "BFW.RESERVE") and self.hook is not None:
            hook, self.hook = self.hook, None
            hook()
        return self.client.execute_command(*args)

    def close(self):
        self.client.close()

    def __getattr__(self, name):  # get, set, type, exists...: the client's own
        return getattr(self.client, name)


@pytest.mark.parametrize("shards", [1, 2])
@pytest.mark.parametrize("kind", ["RedisWindowedDupeFilter", "RedisBloomDupeFilter"])
def test_dupefilter_recreates_a_key_that_disappeared(server, kind, shards, caplog):
    """BFW.ADD creates no key: a windowed filter's key that vanishes mid-crawl (DEL, FLUSHDB,
    eviction) failed every later request with "not found" until the crawler restarted, and BF.ADD
    recreated a BF.* key with the module's defaults (capacity 100, error rate 0.01). Now the next
    request_seen reserves it again as it was reserved, counts and logs the re-creation; of two
    crawlers that find it gone at once, one creates it and the other uses it."""
    from scrapy.http import Request
    from scrapy.utils.test import get_crawler

    import scrapy_crawler

    module = importlib.import_module(scrapy_crawler.PACKAGE)
    stat = "bloomery/dupefilter/redis_key_recreated"

    def crawler_filter(client):
        crawler = get_crawler(settings_dict={"REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7"})
        own = ({"window": "90m", "generations": 6} if kind == "RedisWindowedDupeFilter"
               else {"expansion": 4})
        dupefilter = getattr(module, kind)(
            client, fingerprinter=crawler.request_fingerprinter, key="seen", capacity=5000,
            error_rate=0.0001, shards=shards, stats=crawler.stats, **own)
        dupefilter.open()
        return dupefilter, crawler.stats

    r = server.client()
    first, first_stats = crawler_filter(r)
    other_client = ReserveHook(server.client())
    other, other_stats = crawler_filter(other_client)
    keys = first.keys
    assert filter_keys(r) == sorted(keys)
    as_reserved = {key: reserved_sizing(r, key) for key in keys}
    for sizing in as_reserved.values():
        if kind == "RedisWindowedDupeFilter":
            assert sizing[b"Window ms"] == 90 * 60_000 and sizing[b"Generations"] == 6
        else:
            assert sizing[b"Expansion rate"] == 4 and sizing[b"Capacity"] == 5000 // shards
    requests = [Request(f"http://example.com/page{i}") for i in range(40)]
    # Both shards hold some of the requests, so both keys are recreated below.
    assert {first._key_for(first.fingerprinter.fingerprint(q)) for q in requests} == set(keys)
    assert not any(first.request_seen(q) for q in requests)
    assert all(other.request_seen(q) for q in requests)

    caplog.set_level(logging.WARNING)
    recreated = 0
    for vanish in (lambda: r.delete(*keys), r.flushdb):
        vanish()
        caplog.clear()
        # The requests were forgotten with the key: new again, once, for both crawlers.
        assert not any(first.request_seen(q) for q in requests)
        assert all(other.request_seen(q) for q in requests)
        recreated += len(keys)
        assert first_stats.get_value(stat) == recreated
        assert other_stats.get_value(stat) is None
        gone = [record for record in caplog.records if "was gone" in record.getMessage()]
        assert len(gone) == len(keys)
        assert {key: reserved_sizing(r, key) for key in keys} == as_reserved

    # The race: `other` finds its key gone, and `first` recreates it (adding a request of its own)
    # before other's reserve, which then answers "item exists": one key, created once.
    r.delete(*keys)
    late = Request("http://example.com/late")
    late_key = other._key_for(other.fingerprinter.fingerprint(late))
    early = next(q for q in requests
                 if first._key_for(first.fingerprinter.fingerprint(q)) == late_key)
    other_client.hook = lambda: first.request_seen(early)
    assert not other.request_seen(late)
    assert other_client.hook is None  # it ran
    assert first.request_seen(late) and other.request_seen(early)
    assert first_stats.get_value(stat) == recreated + 1
    assert other_stats.get_value(stat) is None
    assert reserved_sizing(r, late_key) == as_reserved[late_key]


@pytest.mark.parametrize("kind", ["RedisWindowedDupeFilter", "RedisBloomDupeFilter"])
def test_dupefilter_puts_the_filters_health_in_the_stats_and_logs_each_change(server, kind,
                                                                              caplog):
    """Every health_every requests and at close: the worst BF.INFO/BFW.INFO health of the keys in
    the crawl stats, and one warning per change of state. A window of time planned for 500
    requests per generation (4,000 over 2 shards and 4 generations of 1h) that takes 6,000 within
    one goes over; a scaling chain grows and stays ok."""
    from scrapy.http import Request
    from scrapy.utils.test import get_crawler

    import scrapy_crawler

    module = importlib.import_module(scrapy_crawler.PACKAGE)
    crawler = get_crawler(settings_dict={"REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7"})
    own = {"window": "1h"} if kind == "RedisWindowedDupeFilter" else {}
    dupefilter = getattr(module, kind)(
        server.client(), fingerprinter=crawler.request_fingerprinter, key="health",
        capacity=4_000, error_rate=0.01, shards=2, stats=crawler.stats, health_every=250, **own)
    dupefilter.open()
    caplog.set_level(logging.WARNING)
    states = []
    for i in range(6_000):
        dupefilter.request_seen(Request(f"http://example.com/p{i}"))
        if (i + 1) % 250 == 0:
            states.append(crawler.stats.get_value("bloomery/dupefilter/health/state"))
    dupefilter.close("finished")
    changes = [r for r in caplog.records if "filter health" in r.getMessage()]
    if kind == "RedisWindowedDupeFilter":
        assert states[0] == "ok" and states[-1] == "over_limit"
        assert crawler.stats.get_value("bloomery/dupefilter/health/fpr_over_planned") > 1
        # One warning per change: ok -> ... -> over_limit, never the same state twice in a row.
        expected = [s for i, s in enumerate(states) if s != (states[i - 1] if i else "ok")]
        assert [r.getMessage().split(" -> ")[1].split(":")[0] for r in changes] == expected
    else:
        assert set(states) == {"ok"} and not changes
        assert crawler.stats.get_value("bloomery/dupefilter/health/fpr_over_planned") < 1
    assert 0 < crawler.stats.get_value("bloomery/dupefilter/health/fill_ratio") < 1
