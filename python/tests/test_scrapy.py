# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""bloomery.scrapy.BloomDupeFilter, unit by unit and end to end with Debian's Scrapy.

The end-to-end tests crawl a site served by http.server on 127.0.0.1 (a free port) whose pages
link to each other many times over, through URLs that differ but canonicalise to one request
fingerprint; Scrapy runs in a subprocess, as a user runs it.
"""

import collections
import http.server
import json
import os
import subprocess
import sys
import signal
import textwrap
import threading
import time

import pytest

scrapy = pytest.importorskip("scrapy")

from scrapy.http import Request  # noqa: E402
from scrapy.utils.test import get_crawler  # noqa: E402

import bloomery  # noqa: E402
from bloomery.scrapy import RUNNING_FILE, STATE_FILE, BloomDupeFilter  # noqa: E402

PAGES = 300
CRAWL_TIMEOUT_S = 120


def links_of(page):
    """The targets page `page` links to (never page 0, the start URL: Scrapy's start requests
    bypass the dupefilter, so a link back to it would be a second download by design)."""
    if page == 0:
        return list(range(1, 11))
    return [1 + (page * m + c) % (PAGES - 1) for m, c in ((1, 0), (7, 3), (13, 5), (31, 1))] + [
        1 + (page + 1) % (PAGES - 1)
    ]


# Spellings of one page's URL that Scrapy's fingerprinter maps to one fingerprint: query order
# and fragments do not matter.
SPELLINGS = ("/p/{}.html?a=1&b=2", "/p/{}.html?b=2&a=1", "/p/{}.html?a=1&b=2#top")


def page_html(page):
    anchors = []
    for i, target in enumerate(links_of(page)):
        for spelling in SPELLINGS[: 1 + (page + i) % len(SPELLINGS)]:
            anchors.append(f'<a href="{spelling.format(target)}">{target}</a>')
    return f"<html><body><h1>{page}</h1>{''.join(anchors)}</body></html>".encode()


def reachable_pages():
    seen, frontier = {0}, [0]
    while frontier:
        for target in links_of(frontier.pop()):
            if target not in seen:
                seen.add(target)
                frontier.append(target)
    return seen


def link_requests():
    """Requests the crawl makes from links: one per anchor on every reachable page."""
    total = 0
    for page in reachable_pages():
        for i, _ in enumerate(links_of(page)):
            total += 1 + (page + i) % len(SPELLINGS)
    return total


class Site:
    """The test site on 127.0.0.1, counting the downloads of each page."""

    def __init__(self):
        self.downloads = collections.Counter()
        self.delay_s = 0  # seconds each page takes
        lock = threading.Lock()
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                path = self.path.split("?")[0]
                if not (path.startswith("/p/") and path.endswith(".html")):
                    self.send_error(404)
                    return
                page = int(path[3:-5])
                time.sleep(site.delay_s)
                with lock:
                    site.downloads[page] += 1
                body = page_html(page)
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.start_url = f"http://127.0.0.1:{self.server.server_port}" + SPELLINGS[0].format(0)

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def site():
    s = Site()
    yield s
    s.close()


SPIDER = textwrap.dedent(
    """
    import json
    import scrapy

    class SiteSpider(scrapy.Spider):
        name = "site"

        def __init__(self, start=None, out=None, **kwargs):
            super().__init__(**kwargs)
            self.start_urls = [start]
            self.out = out

        def parse(self, response):
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href, self.parse)

        def closed(self, reason):
            stats = self.crawler.stats.get_stats()
            with open(self.out, "w") as f:
                json.dump({"reason": reason,
                           "filtered": stats.get("dupefilter/filtered", 0),
                           "responses": stats.get("response_received_count", 0),
                           "bloomery": {k: v for k, v in stats.items()
                                        if k.startswith("bloomery/")}}, f)
    """
)


def package_env():
    """The environment with this bloomery package importable from any working directory."""
    env = os.environ.copy()
    roots = [os.path.dirname(os.path.abspath(p)) for p in bloomery.__path__]
    env["PYTHONPATH"] = os.pathsep.join(roots + [env.get("PYTHONPATH", "")])
    return env


def crawl_command(tmp_path, site, run, *settings):
    spider = tmp_path / "site_spider.py"
    spider.write_text(SPIDER)
    out = tmp_path / f"stats-{run}.json"
    command = [sys.executable, "-m", "scrapy", "runspider", str(spider),
               "-a", f"start={site.start_url}", "-a", f"out={out}"]
    for setting in (
        "DUPEFILTER_CLASS=bloomery.scrapy.BloomDupeFilter",
        "REQUEST_FINGERPRINTER_IMPLEMENTATION=2.7",
        "ROBOTSTXT_OBEY=False",
        "TELNETCONSOLE_ENABLED=False",
        "RETRY_ENABLED=False",
        "LOG_LEVEL=INFO",
        "CONCURRENT_REQUESTS=4",
    ) + settings:
        command += ["-s", setting]
    return command


def crawl(tmp_path, site, run, *settings):
    command = crawl_command(tmp_path, site, run, *settings)
    out = tmp_path / f"stats-{run}.json"
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True,
                            timeout=CRAWL_TIMEOUT_S, env=package_env())
    assert result.returncode == 0, result.stderr[-4000:]
    return json.loads(out.read_text()), result.stderr


def test_crawl_downloads_every_page_once_and_counts_the_duplicates(tmp_path, site):
    stats, _ = crawl(tmp_path, site, "full")
    pages = reachable_pages()
    assert len(pages) > 250  # the site graph reaches (nearly) every page
    assert dict(site.downloads) == {page: 1 for page in pages}
    # Every link request but the first to each page was filtered (and counted by log()).
    assert stats["filtered"] == link_requests() - (len(pages) - 1)
    assert stats["responses"] == len(pages)


def test_jobdir_crawl_stopped_and_resumed_fetches_nothing_twice(tmp_path, site):
    jobdir = tmp_path / "job"
    first, _ = crawl(tmp_path, site, "first", f"JOBDIR={jobdir}", "CLOSESPIDER_PAGECOUNT=60")
    assert first["reason"] == "closespider_pagecount"
    assert (jobdir / STATE_FILE).exists()
    after_first = dict(site.downloads)
    assert 60 <= sum(after_first.values()) < len(reachable_pages())

    second, _ = crawl(tmp_path, site, "second", f"JOBDIR={jobdir}")
    assert second["reason"] == "finished"
    assert set(site.downloads) == reachable_pages()  # the union is complete
    twice = {page for page, n in site.downloads.items() if n > 1}
    assert twice <= {0}  # only the start URL, which Scrapy never filters
    assert sum(site.downloads.values()) == len(reachable_pages()) + len(twice)


def test_a_fixed_filter_past_its_capacity_says_so_in_the_log_and_the_stats(tmp_path, site):
    # Regression (#30): with BLOOMERY_DUPEFILTER_SCALABLE = False past the capacity, requests were
    # dropped as duplicates by the thousand with no warning and no stat.
    stats, stderr = crawl(tmp_path, site, "fixed", "BLOOMERY_DUPEFILTER_SCALABLE=False",
                          "BLOOMERY_DUPEFILTER_CAPACITY=100")
    assert "went into a fixed filter planned for 100" in stderr
    assert stats["bloomery"]["bloomery/dupefilter/over_capacity"] is True
    assert stats["bloomery"]["bloomery/dupefilter/past_capacity"] > 0
    # Every page fetched was a request the filter took, the start URL aside.
    assert stats["bloomery"]["bloomery/dupefilter/past_capacity"] >= stats["responses"] - 1 - 100


def crawler_settings(**extra):
    return dict({"REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7"}, **extra)


def test_from_crawler_uses_the_settings_and_the_fingerprinter(tmp_path):
    crawler = get_crawler(settings_dict=crawler_settings(
        BLOOMERY_DUPEFILTER_CAPACITY=5000, BLOOMERY_DUPEFILTER_ERROR_RATE=0.01,
        BLOOMERY_DUPEFILTER_SCALABLE=False))
    df = BloomDupeFilter.from_crawler(crawler)
    assert isinstance(df.filter, bloomery.BlockedFilter)
    assert df.filter.capacity == 5000 and df.filter.error_rate <= 0.01
    assert df.request_seen(Request("http://a.example/x?b=2&a=1")) is False
    assert df.request_seen(Request("http://a.example/x?a=1&b=2#f")) is True  # same fingerprint
    assert df.request_seen(Request("http://a.example/y")) is False
    # The key is the fingerprinter's 20 bytes, so other tools can query the saved filter.
    assert crawler.request_fingerprinter.fingerprint(Request("http://a.example/y")) in df.filter

    scalable = BloomDupeFilter.from_crawler(get_crawler(settings_dict=crawler_settings(
        BLOOMERY_DUPEFILTER_CAPACITY=100, BLOOMERY_DUPEFILTER_GROWTH=4)))
    assert isinstance(scalable.filter, bloomery.ScalableFilter)
    assert scalable.filter.mode == 4 and scalable.filter.initial_capacity == 100


def test_jobdir_saves_on_close_and_resumes(tmp_path):
    settings = crawler_settings(JOBDIR=str(tmp_path))
    df = BloomDupeFilter.from_crawler(get_crawler(settings_dict=settings))
    for i in range(15):
        assert df.request_seen(Request(f"http://a.example/{i}")) is False
    assert (tmp_path / RUNNING_FILE).exists()
    df.close("finished")
    assert not (tmp_path / RUNNING_FILE).exists()

    resumed = BloomDupeFilter.from_crawler(get_crawler(settings_dict=settings))
    assert all(resumed.request_seen(Request(f"http://a.example/{i}")) for i in range(15))
    assert resumed.request_seen(Request("http://a.example/new")) is False


def test_a_crawl_that_did_not_close_resumes_with_an_empty_filter(tmp_path):
    # Regression: periodic checkpoints saved requests that were queued, not fetched; Scrapy saves
    # its queue only on close, so after a SIGKILL the resumed crawl dropped them for good.
    settings = crawler_settings(JOBDIR=str(tmp_path), BLOOMERY_DUPEFILTER_CHECKPOINT_EVERY=10)
    df = BloomDupeFilter.from_crawler(get_crawler(settings_dict=settings))
    for i in range(15):
        df.request_seen(Request(f"http://a.example/{i}"))
    # ...killed here: close() never runs.
    resumed = BloomDupeFilter.from_crawler(get_crawler(settings_dict=settings))
    assert not any(resumed.request_seen(Request(f"http://a.example/{i}")) for i in range(15))
    resumed.close("finished")  # a clean close makes the next resume remember again
    again = BloomDupeFilter.from_crawler(get_crawler(settings_dict=settings))
    assert all(again.request_seen(Request(f"http://a.example/{i}")) for i in range(15))


def test_a_failing_save_never_drops_a_request(tmp_path):
    # Regression: a checkpoint that raised inside request_seen kept the fingerprint in the filter
    # while Scrapy dropped the request.
    settings = crawler_settings(JOBDIR=str(tmp_path), BLOOMERY_DUPEFILTER_CHECKPOINT_EVERY=1)
    df = BloomDupeFilter.from_crawler(get_crawler(settings_dict=settings))
    (tmp_path / STATE_FILE).mkdir()  # the state path cannot be written
    assert df.request_seen(Request("http://a.example/1")) is False
    assert df.request_seen(Request("http://a.example/1")) is True
    with pytest.raises((OSError, ValueError)):
        df.close("finished")
    # The failed close leaves the crawl marked unclosed: the next run forgets, never skips.
    (tmp_path / STATE_FILE).rmdir()
    resumed = BloomDupeFilter.from_crawler(get_crawler(settings_dict=settings))
    assert resumed.request_seen(Request("http://a.example/1")) is False


def test_jobdir_crawl_killed_and_resumed_skips_no_page(tmp_path, site):
    # Regression: SIGKILL after periodic checkpoints, then a resume: most of the site was never
    # downloaded. Now the resumed crawl may fetch pages again but reaches every one.
    site.delay_s = 0.03  # slow enough that the crawl is mid-way when killed
    jobdir = tmp_path / "job"
    first = subprocess.Popen(crawl_command(tmp_path, site, "first", f"JOBDIR={jobdir}",
                                           "BLOOMERY_DUPEFILTER_CHECKPOINT_EVERY=5"),
                             cwd=tmp_path, env=package_env(), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + CRAWL_TIMEOUT_S
        while sum(site.downloads.values()) < 80 and first.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    assert sum(site.downloads.values()) < len(reachable_pages())
    site.delay_s = 0
    second, _ = crawl(tmp_path, site, "second", f"JOBDIR={jobdir}")
    assert second["reason"] == "finished"
    assert set(site.downloads) == reachable_pages()


def test_scrapy_module_needs_no_redis():
    code = "import sys, bloomery.scrapy; assert 'redis' not in sys.modules, 'redis imported'"
    subprocess.run([sys.executable, "-c", code], check=True, env=package_env())


def test_a_fixed_filter_warns_when_it_passes_its_capacity_and_at_every_doubling(caplog):
    # Regression (#30): capacity 100, 20,000 distinct requests: 19,561 dropped as duplicates,
    # silently. The drops are the filter's nature; the silence was the bug.
    crawler = get_crawler(settings_dict=crawler_settings(
        BLOOMERY_DUPEFILTER_CAPACITY=100, BLOOMERY_DUPEFILTER_ERROR_RATE=0.01,
        BLOOMERY_DUPEFILTER_SCALABLE=False))
    df = BloomDupeFilter.from_crawler(crawler)
    warnings = lambda: [r for r in caplog.records if "planned for 100" in r.getMessage()]  # noqa
    taken = 0
    for i in range(20_000):
        if not df.request_seen(Request(f"http://a.example/{i}")):
            taken += 1
        if taken == 100:
            # At the capacity, not past it: nothing said yet.
            assert warnings() == [] and crawler.stats.get_value(
                "bloomery/dupefilter/over_capacity") is None
        elif taken == 101 and len(warnings()) == 0:
            pytest.fail("no warning at the crossing")
    assert taken < 20_000 // 2  # most distinct requests were dropped
    # One warning at the crossing (101), then at 201, 401, ...: log2 of the overshoot.
    assert [r.levelname for r in warnings()][0] == "WARNING"
    expected = sum(1 for n in (101, 201, 401, 801, 1601, 3201, 6401, 12801) if n <= taken)
    assert len(warnings()) == expected
    assert crawler.stats.get_value("bloomery/dupefilter/over_capacity") is True
    assert crawler.stats.get_value("bloomery/dupefilter/past_capacity") == taken - 100
    assert crawler.stats.get_value("bloomery/dupefilter/estimated_fpr") > 0.01


def test_a_scalable_filter_never_warns_about_capacity(caplog):
    crawler = get_crawler(settings_dict=crawler_settings(BLOOMERY_DUPEFILTER_CAPACITY=100))
    df = BloomDupeFilter.from_crawler(crawler)
    assert sum(not df.request_seen(Request(f"http://a.example/{i}")) for i in range(2_000)) > 1_990
    assert not [r for r in caplog.records if "planned for" in r.getMessage()]
    assert crawler.stats.get_value("bloomery/dupefilter/over_capacity") is None


def test_a_resumed_fixed_filter_already_past_its_capacity_warns_at_once(tmp_path, caplog):
    settings = crawler_settings(JOBDIR=str(tmp_path), BLOOMERY_DUPEFILTER_CAPACITY=100,
                                BLOOMERY_DUPEFILTER_SCALABLE=False)
    df = BloomDupeFilter.from_crawler(get_crawler(settings_dict=settings))
    for i in range(300):
        df.request_seen(Request(f"http://a.example/{i}"))
    df.close("finished")
    caplog.clear()
    crawler = get_crawler(settings_dict=settings)
    BloomDupeFilter.from_crawler(crawler)
    assert [r for r in caplog.records if "planned for 100" in r.getMessage()]
    assert crawler.stats.get_value("bloomery/dupefilter/over_capacity") is True


def health_warnings(caplog):
    return [r for r in caplog.records if "filter health" in r.getMessage()]


def test_health_goes_into_the_stats_and_each_change_is_logged_once(caplog):
    crawler = get_crawler(settings_dict=crawler_settings(
        BLOOMERY_DUPEFILTER_CAPACITY=1_000, BLOOMERY_DUPEFILTER_ERROR_RATE=0.01,
        BLOOMERY_DUPEFILTER_SCALABLE=False, BLOOMERY_DUPEFILTER_HEALTH_EVERY=100))
    df = BloomDupeFilter.from_crawler(crawler)
    stat = lambda name: crawler.stats.get_value(f"bloomery/dupefilter/health/{name}")  # noqa
    assert stat("state") == "ok" and stat("capacity") == 1_000  # read at creation
    states = []
    for i in range(3_000):
        df.request_seen(Request(f"http://a.example/{i}"))
        if (i + 1) % 100 == 0:
            states.append(stat("state"))
    # A fixed filter of 1,000 taking 3,000 distinct requests goes ok -> near -> over, in order.
    assert states[0] == "ok" and states[-1] == "over_limit"
    changes = [s for i, s in enumerate(states) if i == 0 or s != states[i - 1]]
    assert changes == ["ok", "near_limit", "over_limit"]
    # One warning per change, none while the state holds.
    logged = health_warnings(caplog)
    assert [r.levelname for r in logged] == ["WARNING", "WARNING"]
    assert "ok -> near_limit" in logged[0].getMessage()
    assert "near_limit -> over_limit" in logged[1].getMessage()
    assert stat("estimated_fpr") > stat("planned_fpr")
    assert 0 < stat("fill_ratio") < 1 and stat("estimated_count") > 1_000
    # Close reads it again: the stats hold the final state, and nothing new is logged.
    df.close("finished")
    assert stat("state") == "over_limit" and len(health_warnings(caplog)) == 2


def test_a_growing_scalable_filter_stays_ok_and_logs_nothing(caplog):
    crawler = get_crawler(settings_dict=crawler_settings(
        BLOOMERY_DUPEFILTER_CAPACITY=100, BLOOMERY_DUPEFILTER_HEALTH_EVERY=50))
    df = BloomDupeFilter.from_crawler(crawler)
    for i in range(2_000):
        df.request_seen(Request(f"http://a.example/{i}"))
    df.close("finished")
    assert crawler.stats.get_value("bloomery/dupefilter/health/state") == "ok"
    assert crawler.stats.get_value("bloomery/dupefilter/health/estimated_count") > 1_900
    assert health_warnings(caplog) == []
