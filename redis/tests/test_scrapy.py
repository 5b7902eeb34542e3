# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""Two Scrapy processes sharing one filter through the module crawl a local site: every page is
downloaded exactly once between them; with RedisWindowedDupeFilter, once again per window."""
import collections
import http.server
import os
import subprocess
import sys
import threading

import pytest

PAGES = 300


def write_site(directory):
    """PAGES pages, each linking to five others: every page is reachable from index.html, and
    most are linked from several pages, so both crawlers keep finding the same URLs."""
    for i in range(PAGES):
        links = {(i + 1) % PAGES, (3 * i + 1) % PAGES, (7 * i + 2) % PAGES, (i * i) % PAGES, 0}
        body = "".join(f'<a href="/p{j}.html">p{j}</a>\n' for j in sorted(links))
        body = body.replace("/p0.html", "/index.html")
        name = "index.html" if i == 0 else f"p{i}.html"
        with open(os.path.join(directory, name), "w") as f:
            f.write(f"<html><body>{body}</body></html>")


@pytest.fixture
def site(tmp_path):
    """The site, served on 127.0.0.1; yields (port, Counter of downloads by path)."""
    root = tmp_path / "site"
    root.mkdir()
    write_site(root)
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
    yield httpd.server_address[1], downloads
    httpd.shutdown()


def crawl(site_port, server, shards, dupefilter="RedisBloomDupeFilter"):
    """Two crawler processes at once, sharing the filter on `server`."""
    crawler = os.path.join(os.path.dirname(__file__), "scrapy_crawler.py")
    args = [sys.executable, crawler, str(site_port), str(server.port), str(shards), dupefilter]
    processes = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                 for _ in range(2)]
    outputs = [p.communicate(timeout=120)[0].decode(errors="replace") for p in processes]
    for process, output in zip(processes, outputs):
        assert process.returncode == 0, output


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
    keys = sorted(k.decode() for k in r.keys("*"))
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
    keys = sorted(k.decode() for k in r.keys("*"))
    assert len(keys) == 2
    info = dict(zip(*[iter(r.execute_command("BFW.INFO", keys[0]))] * 2))
    assert info[b"Window ms"] == 7 * 86_400_000 and info[b"Refresh"] == b"KEEP_FIRST_SEEN"
    r.execute_command("BFW.TESTING-CLOCK-OFFSET", 8 * 86_400_000)
    crawl(site_port, server, 2, "RedisWindowedDupeFilter")
    assert_each_page_downloaded(downloads, 2)
