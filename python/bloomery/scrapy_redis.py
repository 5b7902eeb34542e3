# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""Scrapy request de-duplication shared by many crawlers through Redis and bloomery_redis.so.

Every crawler process, on any machine, asks the same Redis filter with one ``BF.INSERT key
NOCREATE ITEMS fingerprint`` (``BF.ADD`` that creates no key) per request: an atomic test-and-set on the server, so of two crawlers that find the same URL at the
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
memory limit) answers ``BF.INSERT`` with an error, which ``request_seen`` raises as
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

A key that disappears while crawlers use it (evicted under ``maxmemory``, ``FLUSHDB``, an
operator's ``DEL``) is created again as it was reserved. Neither ``BF.INSERT ... NOCREATE`` nor
``BFW.ADD`` creates a key (``BF.ADD`` would, with the module's defaults: capacity 100, error rate
0.01): on their ``not found`` the filter reserves the key again exactly as ``open`` did (of two
crawlers that find it gone at once, one creates it and the other finds it) and adds the request.
The requests the lost key held are forgotten, so they may be crawled again. Each re-creation is
logged as a warning and counted in the stat ``bloomery/dupefilter/redis_key_recreated`` of the
crawler that made it.

Health: every ``BLOOMERY_DUPEFILTER_HEALTH_EVERY`` requests (default 10,000; 0: only at close) and at
close, the filter's keys' ``BF.INFO``/``BFW.INFO`` health goes into the crawl stats, the worst over
the shards: ``bloomery/dupefilter/health/state`` ("ok", "near_limit" or "over_limit"),
``.../fpr_over_planned`` and ``.../fill_ratio``; a change of state is logged once as a warning
(docs/OPERATING.md says what each means and what to do).

The filter lives in the server: this module calls no bloomery code of its own, but importing it
imports the ``bloomery`` package (and so its extension) and needs the ``redis`` package (Debian:
python3-redis).
"""

import logging

from scrapy.dupefilters import RFPDupeFilter

logger = logging.getLogger(__name__)

# The stat counting keys this crawler created again after they disappeared.
RECREATED_STAT = "bloomery/dupefilter/redis_key_recreated"


class RedisBloomDupeFilter(RFPDupeFilter):
    """A ``DUPEFILTER_CLASS`` whose memory of requests is a BF.* filter in Redis."""

    # The add that creates no key: its "not found" makes _add reserve the key again as open() did.
    add_command = ("BF.INSERT", "NOCREATE", "ITEMS")

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
        stats=None,
        health_every=10_000,
    ):
        super().__init__(None, debug, fingerprinter=fingerprinter)
        self.client = client
        self.key = key
        self.capacity = int(capacity)
        self.error_rate = float(error_rate)
        self.expansion = int(expansion)
        self.shards = max(1, int(shards))
        self.stats = stats
        self.keys = []
        self.shard_capacity = self.capacity
        # Health: the keys' INFO read every health_every requests (0: only at close).
        self.health_every = int(health_every)
        self.requests_since_health = 0
        self.health_state = "ok"

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
            stats=crawler.stats,
            health_every=settings.getint("BLOOMERY_DUPEFILTER_HEALTH_EVERY", 10_000),
            **cls._own_settings(settings),
        )

    @classmethod
    def _own_settings(cls, settings):
        return {"expansion": settings.getint("BLOOMERY_REDIS_EXPANSION", 2)}

    def _reserve(self, key, capacity):
        self.client.execute_command(
            "BF.RESERVE", key, self.error_rate, capacity, "EXPANSION", self.expansion
        )

    def _reserve_if_missing(self, key):
        """Reserves `key` with this filter's sizing. True if this call created it; False if it
        exists already (made by another crawler, or before)."""
        import redis

        try:
            self._reserve(key, self.shard_capacity)
        except redis.ResponseError as error:
            if "item exists" not in str(error):
                raise
            return False
        return True

    def open(self):
        if self.shards == 1:
            self.keys = [self.key]
        else:
            self.keys = [f"{{{self.key}:{i}}}" for i in range(self.shards)]
        self.shard_capacity = max(1, -(-self.capacity // self.shards))
        for shard_key in self.keys:
            self._reserve_if_missing(shard_key)

    def _key_for(self, fingerprint):
        if self.shards == 1:
            return self.keys[0]
        return self.keys[int.from_bytes(fingerprint[:8], "little") % self.shards]

    def request_seen(self, request):
        fingerprint = self.fingerprinter.fingerprint(request)
        if isinstance(fingerprint, str):
            fingerprint = fingerprint.encode()
        # 1: this call added it (new, crawl it); 0: some crawler added it before.
        seen = self._add(self._key_for(fingerprint), fingerprint) == 0
        if self.health_every:
            self.requests_since_health += 1
            if self.requests_since_health >= self.health_every:
                self._update_health()
        return seen

    # The INFO command of the keys, whose Health, FPR over planned and Fill ratio fields
    # (docs/OPERATING.md) the health reads.
    info_command = "BF.INFO"
    _STATES = ("ok", "near_limit", "over_limit")

    def _update_health(self):
        """Puts the worst health of the filter's keys into the stats and warns once when that
        state changes (as bloomery.scrapy.BloomDupeFilter does). Never raises: request_seen and
        close call it, and a failed INFO must not lose a request."""
        self.requests_since_health = 0
        try:
            worst = {"state": "ok", "fpr_over_planned": 0.0, "fill_ratio": 0.0}
            for key in self.keys:
                reply = self.client.execute_command(self.info_command, key)
                if not isinstance(reply, dict):  # RESP2: the flat list of the map's pairs
                    reply = dict(zip(reply[::2], reply[1::2]))
                info = {(k.decode() if isinstance(k, bytes) else k): v for k, v in reply.items()}
                state = info["Health"]
                state = state.decode() if isinstance(state, bytes) else str(state)
                if self._STATES.index(state) > self._STATES.index(worst["state"]):
                    worst["state"] = state
                worst["fpr_over_planned"] = max(worst["fpr_over_planned"],
                                                float(info["FPR over planned"]))
                worst["fill_ratio"] = max(worst["fill_ratio"], float(info["Fill ratio"]))
            if self.stats is not None:
                for name, value in worst.items():
                    self.stats.set_value(f"bloomery/dupefilter/health/{name}", value)
            if worst["state"] != self.health_state:
                logger.warning(
                    "%s: filter health %s -> %s: estimated FPR %.3gx the planned one at worst "
                    "over %d key(s) (docs/OPERATING.md)", type(self).__name__, self.health_state,
                    worst["state"], worst["fpr_over_planned"], len(self.keys))
                self.health_state = worst["state"]
        except Exception:  # noqa: BLE001 - a stats backend's or INFO's error must not lose a request
            logger.exception("%s: reading the filter's health failed", type(self).__name__)

    def _add_once(self, key, fingerprint):
        """The add command's answer for `fingerprint` in `key`: 1 new, 0 seen before."""
        command, *options = self.add_command
        reply = self.client.execute_command(command, key, *options, fingerprint)
        return reply[0] if isinstance(reply, list) else reply

    # Re-creations one add tries before it gives up (each needs the key to vanish again between
    # the reserve and the add that follows it).
    _MAX_RECREATIONS = 3

    def _add(self, key, fingerprint):
        # The add creates no key: one that disappeared (eviction, FLUSHDB, DEL) is reserved again
        # as open() did, and the add retried; a reserve that finds the key (another crawler made it
        # first) is fine.
        import redis

        for attempt in range(self._MAX_RECREATIONS + 1):
            try:
                return self._add_once(key, fingerprint)
            except redis.ResponseError as error:
                if not _is_not_found(error) or attempt == self._MAX_RECREATIONS:
                    raise
            if self._reserve_if_missing(key):
                self._recreated(key)

    def _recreated(self, key):
        logger.warning(
            "%s: Redis key %r was gone (evicted, flushed or deleted); created it again (%s). The "
            "requests it held are forgotten and may be crawled again", type(self).__name__, key,
            self._sizing())
        if self.stats is not None:
            self.stats.inc_value(RECREATED_STAT)

    def _sizing(self):
        return (f"error rate {self.error_rate:g}, capacity {self.shard_capacity}, "
                f"expansion {self.expansion}")

    def close(self, reason):
        self._update_health()
        self.client.close()


class RedisWindowedDupeFilter(RedisBloomDupeFilter):
    """A ``DUPEFILTER_CLASS`` that forgets a request a window after it was first seen: a BFW.*
    windowed filter in Redis (``BLOOMERY_REDIS_WINDOW``, e.g. ``"7d"``)."""

    add_command = ("BFW.ADD",)
    info_command = "BFW.INFO"

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

    def _sizing(self):
        return (f"error rate {self.error_rate:g}, capacity {self.shard_capacity}, window "
                f"{self.window}, {self.generations} generations")


def _is_not_found(error):
    """Whether a redis ResponseError is the module's answer for a missing key ("ERR not found";
    redis-py drops the "ERR ")."""
    message = str(error)
    return message in ("not found", "ERR not found")
