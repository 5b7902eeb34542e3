# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""One Scrapy crawler process for test_scrapy.py: crawls http://127.0.0.1:<site_port>/ following
every link, de-duplicating through RedisBloomDupeFilter (or the class named, with a window of
7 days) on the Redis at <redis_port>.

    python3 scrapy_crawler.py <site_port> <redis_port> <shards> [RedisWindowedDupeFilter]
        [--scrapy-redis] [SETTING=json-value ...]

--scrapy-redis: under scrapy_redis_scheduler.Scheduler (scrapy-redis 0.9's Scheduler's calls, a
shared Redis list as the frontier) with scrapy-redis's settings only: REDIS_URL and
SCHEDULER_PERSIST = True, no BLOOMERY_REDIS_URL. SETTING=value pairs are added to the settings.
"""
import importlib.util
import json
import os
import sys

import scrapy
from scrapy.crawler import CrawlerProcess

# The documented setting when the Python package is built (meson puts it on PYTHONPATH); else
# bloomery/scrapy_redis.py, which is pure Python, loaded by path.
try:
    from bloomery.scrapy import RedisBloomDupeFilter  # noqa: F401

    PACKAGE = "bloomery.scrapy"
except ImportError:
    HERE = os.path.dirname(os.path.abspath(__file__))
    PATH = os.path.join(HERE, "..", "..", "python", "bloomery", "scrapy_redis.py")
    spec = importlib.util.spec_from_file_location("bloomery_scrapy_redis", PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["bloomery_scrapy_redis"] = module
    spec.loader.exec_module(module)
    PACKAGE = "bloomery_scrapy_redis"


class SiteSpider(scrapy.Spider):
    name = "site"

    def __init__(self, site_port, **kwargs):
        super().__init__(**kwargs)
        self.root = f"http://127.0.0.1:{site_port}/"

    def start_requests(self):
        # Filtered like every other request (Scrapy's default start requests skip the filter).
        yield scrapy.Request(self.root + "index.html")

    def parse(self, response):
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, self.parse)


def main():
    positional = [arg for arg in sys.argv[1:] if not arg.startswith("--") and "=" not in arg]
    site_port, redis_port, shards = positional[:3]
    name = positional[3] if len(positional) > 3 else "RedisBloomDupeFilter"
    dupefilter_class = f"{PACKAGE}.{name}"
    settings = {
        "DUPEFILTER_CLASS": dupefilter_class,
        "BLOOMERY_REDIS_WINDOW": "7d",
        "BLOOMERY_REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
        "BLOOMERY_REDIS_CAPACITY": 1000,
        # Every page must be fetched, and a false positive would skip one: at 1e-4, one crawl of
        # the 2,000-page site in 20 loses a page that way; at 1e-9, one in millions.
        "BLOOMERY_REDIS_ERROR_RATE": 1e-9,
        "BLOOMERY_REDIS_SHARDS": int(shards),
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
        "ROBOTSTXT_OBEY": False,
        "TELNETCONSOLE_ENABLED": False,
        "CONCURRENT_REQUESTS": 8,
        "LOG_LEVEL": "WARNING",
        "CLOSESPIDER_TIMEOUT": 60,
    }
    if "--scrapy-redis" in sys.argv:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        del settings["BLOOMERY_REDIS_URL"]
        settings.update(SCHEDULER="scrapy_redis_scheduler.Scheduler", SCHEDULER_PERSIST=True,
                        REDIS_URL=f"redis://127.0.0.1:{redis_port}/0")
    for arg in sys.argv[1:]:
        if "=" in arg and not arg.startswith("--"):
            name, value = arg.split("=", 1)
            settings[name] = json.loads(value)
    process = CrawlerProcess(settings=settings)
    process.crawl(SiteSpider, site_port=site_port)
    process.start()
    print(f"dupefilter: {dupefilter_class}")


if __name__ == "__main__":
    main()
