# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""Two Scrapy processes sharing one filter through the module crawl a local site: every page is
downloaded exactly once between them."""
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


@pytest.mark.parametrize("shards", [1, 4])
def test_two_crawlers_download_every_page_once(server, tmp_path, shards):
    site = tmp_path / "site"
    site.mkdir()
    write_site(site)
    downloads = collections.Counter()
    lock = threading.Lock()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(site), **kwargs)

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
        crawler = os.path.join(os.path.dirname(__file__), "scrapy_crawler.py")
        args = [sys.executable, crawler, str(httpd.server_address[1]), str(server.port),
                str(shards)]
        processes = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                     for _ in range(2)]
        outputs = [p.communicate(timeout=120)[0].decode(errors="replace") for p in processes]
        for process, output in zip(processes, outputs):
            assert process.returncode == 0, output
    finally:
        httpd.shutdown()
    pages = {"/index.html"} | {f"/p{i}.html" for i in range(1, PAGES)}
    assert set(downloads) == pages, sorted(pages - set(downloads))[:10]
    assert all(count == 1 for count in downloads.values()), downloads.most_common(5)
    r = server.client()
    keys = sorted(k.decode() for k in r.keys("*"))
    assert len(keys) == shards
    assert sum(r.execute_command("BF.CARD", k) for k in keys) == PAGES
