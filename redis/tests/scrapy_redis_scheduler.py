# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""A stand-in for scrapy-redis 0.9's ``scrapy_redis.scheduler.Scheduler`` (scrapy-redis is not in
Debian), written for the tests: it drives the dupefilter class with exactly the calls scrapy-redis's
Scheduler makes, in the same order, and keeps the frontier in a Redis list shared by every crawler:

- from_crawler -> from_settings: the class ``DUPEFILTER_CLASS`` names is built with
  ``from_settings(settings)`` only if it has no ``from_spider``; the Redis client from
  ``REDIS_URL`` (or ``REDIS_HOST``/``REDIS_PORT``); ``ping()``.
- open(spider): the queue ``SCHEDULER_QUEUE_KEY`` (``"%(spider)s:requests"``); the dupefilter from
  ``from_spider(spider)`` (never ``open()``); ``SCHEDULER_FLUSH_ON_START``: ``clear()``.
- enqueue_request: ``request_seen`` unless ``dont_filter``; ``log(request, spider)`` on a duplicate.
- close(reason): ``clear()`` unless ``SCHEDULER_PERSIST`` (the dupefilter's ``close`` is not
  called).
"""
import pickle

import redis
from scrapy.utils.misc import load_object
from scrapy.utils.request import request_from_dict


class ListQueue:
    """The frontier: pickled requests in a Redis list (LPUSH, RPOP: first in, first out)."""

    def __init__(self, server, spider, key):
        self.server, self.spider, self.key = server, spider, key

    def __len__(self):
        return self.server.llen(self.key)

    def push(self, request):
        self.server.lpush(self.key, pickle.dumps(request.to_dict(spider=self.spider)))

    def pop(self, timeout=0):
        data = self.server.rpop(self.key)
        return request_from_dict(pickle.loads(data), spider=self.spider) if data else None

    def clear(self):
        self.server.delete(self.key)


class Scheduler:
    def __init__(self, server, persist, flush_on_start, queue_key, dupefilter, dupefilter_cls):
        self.server = server
        self.persist = persist
        self.flush_on_start = flush_on_start
        self.queue_key = queue_key
        self.df = dupefilter
        self.dupefilter_cls = dupefilter_cls
        self.stats = None

    @classmethod
    def from_settings(cls, settings):
        dupefilter_cls = settings.get("DUPEFILTER_CLASS")
        dupefilter_class = load_object(dupefilter_cls)
        dupefilter = None
        if not hasattr(dupefilter_class, "from_spider"):
            dupefilter = dupefilter_class.from_settings(settings)
        if settings.get("REDIS_URL"):
            server = redis.Redis.from_url(settings.get("REDIS_URL"))
        else:
            server = redis.Redis(host=settings.get("REDIS_HOST"),
                                 port=settings.getint("REDIS_PORT"))
        server.ping()
        return cls(server, settings.getbool("SCHEDULER_PERSIST"),
                   settings.getbool("SCHEDULER_FLUSH_ON_START"),
                   settings.get("SCHEDULER_QUEUE_KEY", "%(spider)s:requests"), dupefilter,
                   dupefilter_cls)

    @classmethod
    def from_crawler(cls, crawler):
        instance = cls.from_settings(crawler.settings)
        instance.stats = crawler.stats
        return instance

    def __len__(self):
        return len(self.queue)

    def open(self, spider):
        self.spider = spider
        self.queue = ListQueue(self.server, spider, self.queue_key % {"spider": spider.name})
        if not self.df:
            self.df = load_object(self.dupefilter_cls).from_spider(spider)
        if self.flush_on_start:
            self.flush()

    def close(self, reason):
        if not self.persist:
            self.flush()

    def flush(self):
        self.df.clear()
        self.queue.clear()

    def enqueue_request(self, request):
        if not request.dont_filter and self.df.request_seen(request):
            self.df.log(request, self.spider)
            return False
        if self.stats:
            self.stats.inc_value("scheduler/enqueued/redis")
        self.queue.push(request)
        return True

    def next_request(self):
        request = self.queue.pop(0)
        if request and self.stats:
            self.stats.inc_value("scheduler/dequeued/redis")
        return request

    def has_pending_requests(self):
        return len(self) > 0
