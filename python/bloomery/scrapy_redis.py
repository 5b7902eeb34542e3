# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""Scrapy request de-duplication shared by many crawlers through Redis and bloomery_redis.so.

Every crawler process, on any machine, asks the same Redis filter with one ``BF.ADD`` per
request: an atomic test-and-set on the server, so of two crawlers that find the same URL at the
same moment exactly one is told it is new (the client-side ``SETBIT``/``GETBIT`` recipe needs k
round trips and lets both through). In a project's settings::

    DUPEFILTER_CLASS = "bloomery.scrapy.RedisBloomDupeFilter"
    BLOOMERY_REDIS_URL = "redis://10.0.0.5:6379/0"
    BLOOMERY_REDIS_KEY = "{spider}:seen"        # formatted with the spider's name
    BLOOMERY_REDIS_CAPACITY = 10_000_000         # requests expected (the first stage's)
    BLOOMERY_REDIS_ERROR_RATE = 0.001            # chance a new request is wrongly dropped
    BLOOMERY_REDIS_EXPANSION = 2                 # growth of the scaling filter: 1 to 32768
    BLOOMERY_REDIS_CLUSTER = False               # True: BLOOMERY_REDIS_URL names a Cluster node
    BLOOMERY_REDIS_SHARDS = 1                    # split the filter over this many keys

The server needs ``--loadmodule bloomery_redis.so``. The filter is created with ``BF.RESERVE`` on
first use (the first crawler wins; the others find it); a filter that already exists keeps its
own sizing. Requests are identified by the crawler's request fingerprinter.

Sharding: with ``BLOOMERY_REDIS_SHARDS = n`` the filter is n keys ``{key:0}`` … ``{key:n-1}``
(each its own hash tag, so a Redis Cluster spreads them over its masters) and a request goes to
the shard its fingerprint picks. Each shard is sized for capacity / n. Use it when one key is
too hot or too big for one node.

Past its capacity the filter grows (a scaling filter keeps its error rate). A filter that refuses
a request instead (a key created ``NONSCALING`` by someone else, past its capacity; a stage or
memory limit) answers ``BF.ADD`` with an error, which ``request_seen`` raises as
``redis.ResponseError``: no request is dropped silently.

Revisit crawls: ``DUPEFILTER_CLASS = "bloomery.scrapy.RedisWindowedDupeFilter"`` forgets a request
a window after it was first seen, so a page is crawled again once per window, across machines::

    BLOOMERY_REDIS_WINDOW = "7d"                 # 1500ms, 90s, 30m, 12h, 7d
    BLOOMERY_REDIS_GENERATIONS = 4               # a request is forgotten between 3/4 and 1 window
    BLOOMERY_REDIS_CAPACITY = 10_000_000         # requests in one window

It is a ``BFW.*`` windowed filter (``BFW.RESERVE ... WINDOW 7d REFRESH KEEP_FIRST_SEEN``): seeing a
request again within the window does not restart its age. The window runs on the Redis master's
clock, so replicas and restarts forget exactly what the master forgot. Sharding works as above;
``BLOOMERY_REDIS_EXPANSION`` does not apply (a windowed filter has a fixed size for its capacity).

The filter lives in the server: this module calls no bloomery code of its own, but importing it
imports the ``bloomery`` package (and so its extension) and needs the ``redis`` package (Debian:
python3-redis).
"""

from scrapy.dupefilters import RFPDupeFilter


class RedisBloomDupeFilter(RFPDupeFilter):
    """A ``DUPEFILTER_CLASS`` whose memory of requests is a BF.* filter in Redis."""

    add_command = "BF.ADD"

    def __init__(
        self,
        client,
        debug=False,
        *,
        fingerprinter=None,
        key="seen",
        capacity=1_000_000,
        error_rate=0.001,
        expansion=2,
        shards=1,
    ):
        super().__init__(None, debug, fingerprinter=fingerprinter)
        self.client = client
        self.key = key
        self.capacity = int(capacity)
        self.error_rate = float(error_rate)
        self.expansion = int(expansion)
        self.shards = max(1, int(shards))
        self.keys = []

    @classmethod
    def from_crawler(cls, crawler):
        import redis

        settings = crawler.settings
        url = settings.get("BLOOMERY_REDIS_URL", "redis://127.0.0.1:6379/0")
        if settings.getbool("BLOOMERY_REDIS_CLUSTER"):
            from redis.cluster import RedisCluster

            client = RedisCluster.from_url(url)
        else:
            client = redis.Redis.from_url(url)
        return cls(
            client,
            settings.getbool("DUPEFILTER_DEBUG"),
            fingerprinter=crawler.request_fingerprinter,
            # The scheduler (and so this filter) is made once the crawler has its spider.
            key=settings.get("BLOOMERY_REDIS_KEY", "{spider}:seen").replace(
                "{spider}", crawler.spider.name
            ),
            capacity=settings.getint("BLOOMERY_REDIS_CAPACITY", 1_000_000),
            error_rate=settings.getfloat("BLOOMERY_REDIS_ERROR_RATE", 0.001),
            shards=settings.getint("BLOOMERY_REDIS_SHARDS", 1),
            **cls._own_settings(settings),
        )

    @classmethod
    def _own_settings(cls, settings):
        return {"expansion": settings.getint("BLOOMERY_REDIS_EXPANSION", 2)}

    def _reserve(self, key, capacity):
        self.client.execute_command(
            "BF.RESERVE", key, self.error_rate, capacity, "EXPANSION", self.expansion
        )

    def open(self):
        import redis

        if self.shards == 1:
            self.keys = [self.key]
        else:
            self.keys = [f"{{{self.key}:{i}}}" for i in range(self.shards)]
        per_shard = max(1, -(-self.capacity // self.shards))
        for shard_key in self.keys:
            try:
                self._reserve(shard_key, per_shard)
            except redis.ResponseError as error:
                if "item exists" not in str(error):
                    raise

    def _key_for(self, fingerprint):
        if self.shards == 1:
            return self.keys[0]
        return self.keys[int.from_bytes(fingerprint[:8], "little") % self.shards]

    def request_seen(self, request):
        fingerprint = self.fingerprinter.fingerprint(request)
        if isinstance(fingerprint, str):
            fingerprint = fingerprint.encode()
        # 1: this call added it (new, crawl it); 0: some crawler added it before.
        key = self._key_for(fingerprint)
        return self.client.execute_command(self.add_command, key, fingerprint) == 0

    def close(self, reason):
        self.client.close()


class RedisWindowedDupeFilter(RedisBloomDupeFilter):
    """A ``DUPEFILTER_CLASS`` that forgets a request a window after it was first seen: a BFW.*
    windowed filter in Redis (``BLOOMERY_REDIS_WINDOW``, e.g. ``"7d"``)."""

    add_command = "BFW.ADD"

    def __init__(self, client, debug=False, *, window="7d", generations=4, **kwargs):
        super().__init__(client, debug, **kwargs)
        self.window = str(window)
        self.generations = int(generations)

    @classmethod
    def _own_settings(cls, settings):
        return {
            "window": settings.get("BLOOMERY_REDIS_WINDOW", "7d"),
            "generations": settings.getint("BLOOMERY_REDIS_GENERATIONS", 4),
        }

    def _reserve(self, key, capacity):
        # KEEP_FIRST_SEEN: a request seen again within the window is not crawled, and its age
        # does not restart, so the page is revisited once per window.
        self.client.execute_command(
            "BFW.RESERVE", key, self.error_rate, capacity, "WINDOW", self.window,
            "GENERATIONS", self.generations, "REFRESH", "KEEP_FIRST_SEEN",
        )
