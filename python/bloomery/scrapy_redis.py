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

scrapy-redis: under ``SCHEDULER = "scrapy_redis.scheduler.Scheduler"`` the class is built with
``from_spider`` (scrapy-redis never calls ``open``), keyed by ``SCHEDULER_DUPEFILTER_KEY``, connected
by scrapy-redis's ``REDIS_URL``/``REDIS_HOST``/``REDIS_PORT``/``REDIS_PARAMS`` when
``BLOOMERY_REDIS_URL`` is absent, sized by scrapy-redis-bloomfilter's ``BLOOMFILTER_BIT`` and
``BLOOMFILTER_HASH_NUMBER`` when ``BLOOMERY_REDIS_CAPACITY``/``_ERROR_RATE`` are, and holds
scrapy-redis's own fingerprints; ``import_seen`` (``python3 -m bloomery.scrapy_redis import-seen``)
carries scrapy-redis's seen-set over. docs/PYTHON.md, "Migrating from scrapy-redis".

At-least-once: a request taken as new is kept pending in Redis until its response or failure is
handled; the pending requests of a crawler whose lease (``BLOOMERY_REDIS_LEASE`` seconds, default
30) expired are scheduled again by another crawler or its restart (``_Pending``).

Shape: the shard count, fingerprint form and sizing are recorded in ``{key}:bloomery:meta`` when
the filter is created; opening it with another ``BLOOMERY_REDIS_SHARDS`` raises
``FilterShapeError`` saying what to do.

The filter lives in the server: this module calls no bloomery code of its own, but importing it
imports the ``bloomery`` package (and so its extension) and needs the ``redis`` package (Debian:
python3-redis).
"""

import hashlib
import json
import logging
import math
import pickle
import sys
import time
import uuid

from scrapy.dupefilters import RFPDupeFilter

logger = logging.getLogger(__name__)

# The stat counting keys this crawler created again after they disappeared.
RECREATED_STAT = "bloomery/dupefilter/redis_key_recreated"
# The stat counting requests this crawler took over from a crawler whose lease expired.
RECOVERED_STAT = "bloomery/dupefilter/pending_recovered"

# The two forms a fingerprint is stored in, recorded with the filter: "scrapy", the crawler's
# request fingerprinter's 20 bytes; "scrapy-redis", the 40 hex digits scrapy-redis's RFPDupeFilter
# keeps in its Redis set (SHA-1 of the JSON of the method, the canonical URL and the body's hex).
FINGERPRINT_FORMS = ("scrapy", "scrapy-redis")

# scrapy-redis's defaults (its defaults.py): the dupefilter's key, and its connection's.
SCRAPY_REDIS_DUPEFILTER_KEY = "%(spider)s:dupefilter"
SCRAPY_REDIS_PARAMS = {"socket_timeout": 30, "socket_connect_timeout": 30,
                       "retry_on_timeout": True}
# Meta keys: a request taken over from a dead crawler (dont_filter by then); the crawler that found
# a request (under scrapy-redis's scheduler, whose queue carries it to another crawler).
PENDING_META = "bloomery_pending"
FINDER_META = "bloomery_finder"


class FilterShapeError(ValueError):
    """The filter in Redis was created with another shape (shard count, fingerprint form or
    kind) than this crawler's settings ask for, or its key holds something else."""


def scrapy_redis_fingerprint(request):
    """The fingerprint scrapy-redis 0.9's RFPDupeFilter gives `request` (and keeps in its set):
    the hex SHA-1 of the JSON, keys sorted, of the method, the canonical URL and the body's hex."""
    from scrapy.utils.python import to_unicode
    from w3lib.url import canonicalize_url

    data = {"method": to_unicode(request.method), "url": canonicalize_url(request.url),
            "body": (request.body or b"").hex()}
    return hashlib.sha1(json.dumps(data, sort_keys=True).encode()).hexdigest()


class ScrapyRedisFingerprinter:
    """A request fingerprinter giving scrapy-redis's fingerprint (as bytes): the one a filter built
    without a crawler uses (``from_settings``, ``import_seen``)."""

    def fingerprint(self, request):
        return bytes.fromhex(scrapy_redis_fingerprint(request))


def aux_key(key, name):
    """The key of the filter `key`'s companion `name` (meta, owners, pending:<id>, import...):
    in the same Redis Cluster slot as `key` itself."""
    open_brace = key.find("{")
    if open_brace >= 0 and key.find("}", open_brace + 2) > open_brace:
        return f"{key}:bloomery:{name}"  # `key` has a hash tag: keep it
    return f"{{{key}}}:bloomery:{name}"


def redis_client(settings):
    """The Redis client of a crawler's settings: ``BLOOMERY_REDIS_URL`` if set, else scrapy-redis's
    own settings (``REDIS_URL``, ``REDIS_HOST``/``REDIS_PORT``/``REDIS_DB``, ``REDIS_PARAMS``,
    as scrapy-redis's connection.py reads them), else redis://127.0.0.1:6379/0."""
    import redis

    url = settings.get("BLOOMERY_REDIS_URL")
    if settings.getbool("BLOOMERY_REDIS_CLUSTER"):
        from redis.cluster import RedisCluster

        return RedisCluster.from_url(url or settings.get("REDIS_URL") or
                                     "redis://127.0.0.1:6379/0")
    if url:
        return redis.Redis.from_url(url)
    params = dict(SCRAPY_REDIS_PARAMS)
    params.update(settings.getdict("REDIS_PARAMS"))
    for setting, param in (("REDIS_URL", "url"), ("REDIS_HOST", "host"), ("REDIS_PORT", "port"),
                           ("REDIS_DB", "db")):
        if settings.get(setting):
            params[param] = settings.get(setting)
    # The filter reads bytes (fingerprints, pickled requests): no decoding, whatever scrapy-redis's
    # own client does.
    for text_only in ("decode_responses", "encoding", "encoding_errors"):
        params.pop(text_only, None)
    client_class = params.pop("redis_cls", redis.Redis)
    if isinstance(client_class, str):
        from scrapy.utils.misc import load_object

        client_class = load_object(client_class)
    url = params.pop("url", None)
    if url:
        return client_class.from_url(url, **params)
    if "host" not in params and "port" not in params:
        return client_class.from_url("redis://127.0.0.1:6379/0", **params)
    return client_class(**params)


def bitmap_sizing(bits, hashes):
    """scrapy-redis-bloomfilter's ``BLOOMFILTER_BIT`` (a bitmap of 2**bits bits) and
    ``BLOOMFILTER_HASH_NUMBER`` (k) as a capacity and error rate: the n for which k hashes are the
    best count in that many bits (n = m ln 2 / k) and the false-positive rate there (2**-k). A
    filter planned for them has the same m bits and k hashes."""
    bits, hashes = int(bits), int(hashes)
    if not 1 <= bits <= 40 or not 1 <= hashes <= 32:
        raise ValueError(f"BLOOMFILTER_BIT must be 1..40 and BLOOMFILTER_HASH_NUMBER 1..32, got "
                         f"{bits} and {hashes}")
    return max(1, int(2**bits * math.log(2) / hashes)), 0.5**hashes


class RedisBloomDupeFilter(RFPDupeFilter):
    """A ``DUPEFILTER_CLASS`` whose memory of requests is a BF.* filter in Redis."""

    # The add that creates no key: its "not found" makes _add reserve the key again as open() did.
    add_command = ("BF.INSERT", "NOCREATE", "ITEMS")
    kind = "BF"

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
        fingerprint="scrapy",
        fingerprint_explicit=True,
    ):
        super().__init__(None, debug, fingerprinter=fingerprinter)
        self.client = client
        self.key = key
        self.capacity = int(capacity)
        self.error_rate = float(error_rate)
        self.expansion = int(expansion)
        self.shards = max(1, int(shards))
        self.stats = stats
        if fingerprint not in FINGERPRINT_FORMS:
            raise ValueError(f"BLOOMERY_REDIS_FINGERPRINT must be one of {FINGERPRINT_FORMS}, "
                             f"got {fingerprint!r}")
        self.fingerprint_form = fingerprint
        # False: the form is this class's default, and a filter recorded with the other wins.
        self.fingerprint_explicit = fingerprint_explicit
        self.keys = []
        self.shard_capacity = self.capacity
        self.meta_key = aux_key(key, "meta")
        self.opened = False
        self.pending = None  # a _Pending once a crawler's signals drive it (at-least-once)
        # Health: the keys' INFO read every health_every requests (0: only at close).
        self.health_every = int(health_every)
        self.requests_since_health = 0
        self.health_state = "ok"

    @classmethod
    def from_crawler(cls, crawler):
        """Built by Scrapy's scheduler, which calls open() and close(reason)."""
        key = crawler.settings.get("BLOOMERY_REDIS_KEY", "{spider}:seen")
        dupefilter = cls._from_settings(crawler.settings, key.replace("{spider}",
                                                                      crawler.spider.name),
                                        crawler=crawler, default_fingerprint="scrapy")
        dupefilter._track(crawler, shared_frontier=False)
        return dupefilter

    @classmethod
    def from_spider(cls, spider):
        """Built by scrapy-redis's Scheduler (``SCHEDULER = "scrapy_redis.scheduler.Scheduler"``),
        which never calls open(): the filter opens here. Its key is ``BLOOMERY_REDIS_KEY`` if set,
        else scrapy-redis's ``SCHEDULER_DUPEFILTER_KEY`` (``"%(spider)s:dupefilter"``); the
        frontier is scrapy-redis's queue, shared by the crawlers."""
        settings = spider.settings
        if settings.get("BLOOMERY_REDIS_KEY"):
            key = settings.get("BLOOMERY_REDIS_KEY").replace("{spider}", spider.name)
        else:
            key = settings.get("SCHEDULER_DUPEFILTER_KEY", SCRAPY_REDIS_DUPEFILTER_KEY) % {
                "spider": spider.name}
        crawler = getattr(spider, "crawler", None)
        dupefilter = cls._from_settings(settings, key, crawler=crawler,
                                        default_fingerprint="scrapy-redis")
        if crawler is not None:
            dupefilter._track(crawler, shared_frontier=True)
        dupefilter.open()
        return dupefilter

    @classmethod
    def from_settings(cls, settings, **_):
        """Built from settings alone (scrapy-redis's Scheduler does it for a class without
        from_spider): no spider, so ``BLOOMERY_REDIS_KEY`` must name the key without
        ``{spider}``; it opens on its first request."""
        key = settings.get("BLOOMERY_REDIS_KEY")
        if not key or "{spider}" in key:
            raise ValueError(f"{cls.__name__}.from_settings has no spider to name its key: set "
                             "BLOOMERY_REDIS_KEY to a key without {spider}, or let the scheduler "
                             "build it with from_crawler or from_spider")
        return cls._from_settings(settings, key, crawler=None, default_fingerprint="scrapy-redis")

    @classmethod
    def _from_settings(cls, settings, key, *, crawler, default_fingerprint):
        capacity = settings.getint("BLOOMERY_REDIS_CAPACITY", 1_000_000)
        error_rate = settings.getfloat("BLOOMERY_REDIS_ERROR_RATE", 0.001)
        if settings.get("BLOOMFILTER_BIT") is not None:  # scrapy-redis-bloomfilter's size
            bits_capacity, bits_rate = bitmap_sizing(
                settings.getint("BLOOMFILTER_BIT"), settings.getint("BLOOMFILTER_HASH_NUMBER", 6))
            if settings.get("BLOOMERY_REDIS_CAPACITY") is None:
                capacity = bits_capacity
            if settings.get("BLOOMERY_REDIS_ERROR_RATE") is None:
                error_rate = bits_rate
        fingerprint = settings.get("BLOOMERY_REDIS_FINGERPRINT")
        dupefilter = cls(
            redis_client(settings),
            settings.getbool("DUPEFILTER_DEBUG"),
            fingerprinter=(crawler.request_fingerprinter if crawler is not None else
                           ScrapyRedisFingerprinter()),
            key=key,
            capacity=capacity,
            error_rate=error_rate,
            shards=settings.getint("BLOOMERY_REDIS_SHARDS", 1),
            stats=crawler.stats if crawler is not None else None,
            health_every=settings.getint("BLOOMERY_DUPEFILTER_HEALTH_EVERY", 10_000),
            fingerprint=fingerprint or default_fingerprint,
            fingerprint_explicit=fingerprint is not None,
            **cls._own_settings(settings),
        )
        dupefilter.lease_s = settings.getfloat("BLOOMERY_REDIS_LEASE", 30.0)
        return dupefilter

    def _track(self, crawler, *, shared_frontier):
        """At-least-once: requests this crawler has not finished are kept in Redis (_Pending)."""
        if getattr(self, "lease_s", 0) > 0:
            self.pending = _Pending(self, crawler, self.lease_s, shared_frontier)

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

    # The shape: what the meta key records when the filter is created. The shard count, the
    # fingerprint form and the kind are fixed for the filter's life; the sizing is what a key that
    # disappears is reserved again with.
    def _shape(self):
        return {"kind": self.kind, "shards": self.shards, "fingerprint": self.fingerprint_form,
                "capacity": self.capacity, "error_rate": self.error_rate, **self._own_shape()}

    def _own_shape(self):
        return {"expansion": self.expansion}

    def _adopt_shape(self, shape):
        self.expansion = int(shape.get("expansion", self.expansion))

    def _filter_keys(self):
        """The filter's Redis keys: the key itself, or with shards {key:0} ... {key:n-1} (each its
        own hash tag, so a Cluster spreads them)."""
        if self.shards == 1:
            return [self.key]
        return [self._shard_key(i) for i in range(self.shards)]

    def _shard_key(self, i):
        return f"{{{self.key}:{i}}}"

    def open(self):
        self.keys = self._filter_keys()
        self._settle_shape()
        self.shard_capacity = max(1, -(-self.capacity // self.shards))
        for shard_key in self.keys:
            self._reserve_if_missing(shard_key)
        self.opened = True

    def _settle_shape(self):
        """Records this filter's shape in the meta key if it is new (before any shard exists: the
        first crawler to set it wins), else checks this crawler's settings against the recorded
        one and takes its sizing. Raises FilterShapeError on a shape the filter cannot have."""
        recorded = self.client.get(self.meta_key)
        if recorded is None:
            shape = self._unrecorded_shape()
            if self.client.set(self.meta_key, json.dumps(shape, sort_keys=True), nx=True):
                recorded = None if shape == self._shape() else json.dumps(shape)
            else:  # another crawler recorded it first
                recorded = self.client.get(self.meta_key)
        if recorded is None:
            return
        shape = json.loads(recorded)
        if shape.get("kind", "BF") != self.kind:
            raise FilterShapeError(
                f"{type(self).__name__}: the filter {self.key!r} is a {shape['kind']} filter "
                f"(recorded in {self.meta_key!r}), not {self.kind}: use its class, or set "
                f"BLOOMERY_REDIS_KEY to a new key for a new filter")
        if int(shape["shards"]) != self.shards:
            raise FilterShapeError(
                f"{type(self).__name__}: the filter {self.key!r} was created with "
                f"BLOOMERY_REDIS_SHARDS = {shape['shards']} (recorded in {self.meta_key!r}) and "
                f"this crawler asks for {self.shards}. A filter's shard count is fixed for its "
                f"life (each request's shard depends on it: another count would crawl requests "
                f"again): set BLOOMERY_REDIS_SHARDS = {shape['shards']}, or set BLOOMERY_REDIS_KEY "
                f"to a new key for a new filter (it starts empty: its crawl fetches every page "
                f"again)")
        if shape["fingerprint"] != self.fingerprint_form:
            if self.fingerprint_explicit:
                raise FilterShapeError(
                    f"{type(self).__name__}: the filter {self.key!r} holds "
                    f"{shape['fingerprint']!r} fingerprints (recorded in {self.meta_key!r}) and BLOOMERY_REDIS_FINGERPRINT "
                    f"asks for {self.fingerprint_form!r}: no request would be found again. Set "
                    f"BLOOMERY_REDIS_FINGERPRINT = {shape['fingerprint']!r}, or a new "
                    f"BLOOMERY_REDIS_KEY")
            self.fingerprint_form = shape["fingerprint"]
        if (int(shape["capacity"]), float(shape["error_rate"])) != (self.capacity,
                                                                   self.error_rate):
            logger.info("%s: the filter %r keeps its own sizing (capacity %s, error rate %g)",
                        type(self).__name__, self.key, shape["capacity"], shape["error_rate"])
        self.capacity = int(shape["capacity"])
        self.error_rate = float(shape["error_rate"])
        self._adopt_shape(shape)

    def _unrecorded_shape(self):
        """The shape of a filter with no meta key: this crawler's for a new one; for one made
        before shapes were recorded, its shard count read from its keys. Refuses a key holding
        scrapy-redis's seen-set."""
        key_type = self.client.type(self.key)
        key_type = key_type.decode() if isinstance(key_type, bytes) else key_type
        if key_type == "set" and self.shards == 1:
            raise FilterShapeError(
                f"{type(self).__name__}: {self.key!r} holds a Redis set (scrapy-redis's seen "
                f"fingerprints), not a filter. Import it into the filter first: python3 -m "
                f"bloomery.scrapy_redis import-seen --redis-url URL --set {self.key} (it moves "
                f"the set aside and fills the filter from it); or set BLOOMERY_REDIS_KEY to "
                f"another key")
        shards = 0
        while shards < 4096 and self.client.exists(self._shard_key(shards)):
            shards += 1
        if key_type not in ("none", "set"):
            shards = 1
        shape = self._shape()
        if shards:  # made before shapes were recorded: its requests are Scrapy fingerprints
            shape.update(shards=shards, fingerprint="scrapy")
        return shape

    def request_fingerprint(self, request):
        """The request's fingerprint in this filter's form, as hex."""
        if self.fingerprint_form == "scrapy-redis":
            return scrapy_redis_fingerprint(request)
        return self.fingerprinter.fingerprint(request).hex()

    def stored_fingerprint(self, request):
        """What the filter holds for `request`: the fingerprinter's bytes ("scrapy") or the hex
        digits scrapy-redis keeps ("scrapy-redis")."""
        if self.fingerprint_form == "scrapy-redis":
            return scrapy_redis_fingerprint(request).encode()
        fingerprint = self.fingerprinter.fingerprint(request)
        return fingerprint.encode() if isinstance(fingerprint, str) else fingerprint

    def _key_for(self, fingerprint):
        if self.shards == 1:
            return self.keys[0]
        if self.fingerprint_form == "scrapy-redis":
            return self.keys[int(fingerprint[:16], 16) % self.shards]
        return self.keys[int.from_bytes(fingerprint[:8], "little") % self.shards]

    def request_seen(self, request):
        if not self.opened:  # cleared (scrapy-redis's flush), or built by from_settings
            self.open()
        fingerprint = self.stored_fingerprint(request)
        key = self._key_for(fingerprint)
        if self.pending is not None:
            added = self.pending.add_with_filter(key, fingerprint, request)
        else:
            added = self._add(key, fingerprint)
        # 1: this call added it (new, crawl it); 0: some crawler added it before.
        seen = added == 0
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
        # FLUSHDB took the shape with it: record it again.
        self.client.set(self.meta_key, json.dumps(self._shape(), sort_keys=True), nx=True)

    def _sizing(self):
        return (f"error rate {self.error_rate:g}, capacity {self.shard_capacity}, "
                f"expansion {self.expansion}")

    def clear(self):
        """Forgets every request: deletes the filter's keys, its shape and its pending requests
        (scrapy-redis's Scheduler calls it to flush: ``SCHEDULER_PERSIST = False`` at close,
        ``SCHEDULER_FLUSH_ON_START`` at open). The next request creates the filter again."""
        keys = self._filter_keys()
        keys.append(self.meta_key)
        keys += _Pending.keys_of(self.client, self.key)
        self.client.delete(*keys)
        self.opened = False
        if self.pending is not None:
            self.pending.forget()

    def close(self, reason=""):
        if self.pending is not None:
            self.pending.finish()
        if self.opened:
            self._update_health()
        self.client.close()


class RedisWindowedDupeFilter(RedisBloomDupeFilter):
    """A ``DUPEFILTER_CLASS`` that forgets a request a window after it was first seen: a BFW.*
    windowed filter in Redis (``BLOOMERY_REDIS_WINDOW``, e.g. ``"7d"``)."""

    add_command = ("BFW.ADD",)
    info_command = "BFW.INFO"
    kind = "BFW"

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

    def _own_shape(self):
        return {"window": self.window, "generations": self.generations}

    def _adopt_shape(self, shape):
        self.window = str(shape.get("window", self.window))
        self.generations = int(shape.get("generations", self.generations))

    def _sizing(self):
        return (f"error rate {self.error_rate:g}, capacity {self.shard_capacity}, window "
                f"{self.window}, {self.generations} generations")


def _is_not_found(error):
    """Whether a redis ResponseError is the module's answer for a missing key ("ERR not found";
    redis-py drops the "ERR ")."""
    message = str(error)
    return message in ("not found", "ERR not found")


class _Pending:
    """At-least-once for a Redis dupefilter: a request the filter takes as new is kept, pickled
    (``Request.to_dict``, as Scrapy's disk queues do), in a Redis hash of its crawler's until its
    response or failure has been handled (the engine let go of it, its callback's requests
    scheduled), so a crawler killed at any moment loses none: another crawler (or its restart)
    takes over the requests of a crawler whose lease expired (``BLOOMERY_REDIS_LEASE`` seconds,
    renewed every third of it) and schedules them again.

    Each request is recorded in the same pipeline as the filter's add (never seen without being
    kept). With Scrapy's scheduler the frontier is the crawler's own: the request stays in its
    finder's hash ``pending:<owner>`` until done, and a dead crawler's are scheduled again at once.
    With scrapy-redis's scheduler the frontier is its Redis queue, which outlives a crawler: the
    request waits in its finder's ``found:<owner>`` (its meta names the finder) until some crawler's
    downloader takes it, which moves it to that crawler's ``pending:<owner>``. A dead crawler's
    ``pending`` (in flight when it died) is scheduled again at once, into the queue; its ``found``
    only once the queue is empty (what is still there is scrapy-redis's to hand out; what is not
    was lost between the filter and the queue, or between the queue and a downloader).
    """

    def __init__(self, dupefilter, crawler, lease_s, shared_frontier):
        from scrapy import signals

        self.filter = dupefilter
        self.client = dupefilter.client
        self.crawler = crawler
        self.lease_ms = max(100, int(lease_s * 1000))
        self.shared_frontier = shared_frontier
        self.owner = uuid.uuid4().hex
        self.owners_key = aux_key(dupefilter.key, "owners")
        self.pending_key = self.key_of("pending", self.owner)
        self.found_key = self.key_of("found" if shared_frontier else "pending", self.owner)
        self.lease_key = self.key_of("lease", self.owner)
        self.joined = False
        self.tracked = {}  # fingerprint -> the request in flight here, kept in pending_key
        self.downloading = {}  # fingerprint -> that request, once it reached the downloader
        self.last_flush = 0.0
        self.loop = None
        self.unpicklable_warned = False
        connect = crawler.signals.connect
        connect(self.spider_opened, signal=signals.spider_opened)
        connect(self.spider_idle, signal=signals.spider_idle)
        connect(self.spider_closed, signal=signals.spider_closed)
        connect(self.request_scheduled, signal=signals.request_scheduled)
        connect(self.request_reached_downloader, signal=signals.request_reached_downloader)

    def key_of(self, name, owner):
        return aux_key(self.filter.key, f"{name}:{owner}")

    @staticmethod
    def keys_of(client, key):
        """Every key the pending requests of filter `key` use (for clear())."""
        owners_key = aux_key(key, "owners")
        keys = [owners_key, aux_key(key, "import")]
        for owner in client.smembers(owners_key):
            owner = owner.decode() if isinstance(owner, bytes) else owner
            keys += [aux_key(key, f"{name}:{owner}")
                     for name in ("pending", "found", "lease", "lock")]
        return keys

    def _join(self):
        if not self.joined:
            pipe = self.client.pipeline(transaction=False)
            pipe.set(self.lease_key, b"1", px=self.lease_ms)
            pipe.sadd(self.owners_key, self.owner)
            pipe.execute()
            self.joined = True

    def _serialize(self, request):
        try:
            return pickle.dumps(request.to_dict(spider=self.crawler.spider), protocol=4)
        except Exception as error:  # noqa: BLE001 - e.g. a lambda callback: crawled, not kept
            if not self.unpicklable_warned:
                self.unpicklable_warned = True
                logger.warning("%s: %s cannot be kept pending (%s): a crash may lose such "
                               "requests", type(self.filter).__name__, request, error)
            return None

    def add_with_filter(self, key, fingerprint, request):
        """The filter's add of `fingerprint` to `key` (1 new, 0 seen), the request kept in the
        same pipeline if new: no moment where it is seen and not kept."""
        import redis

        if self.shared_frontier:
            request.meta[FINDER_META] = self.owner  # pickled with it into scrapy-redis's queue
        value = self._serialize(request)
        if value is None:
            return self.filter._add(key, fingerprint)
        self._join()
        command, *options = self.filter.add_command
        pipe = self.client.pipeline(transaction=False)
        pipe.hsetnx(self.found_key, fingerprint, value)
        pipe.execute_command(command, key, *options, fingerprint)
        created, reply = pipe.execute(raise_on_error=False)
        if isinstance(reply, Exception):
            if not isinstance(reply, redis.ResponseError) or not _is_not_found(reply):
                if created:
                    self.client.hdel(self.found_key, fingerprint)
                raise reply
            added = self.filter._add(key, fingerprint)  # the key vanished: recreate it
        else:
            added = reply[0] if isinstance(reply, list) else reply
        if added:
            if not created:
                self.client.hset(self.found_key, fingerprint, value)
            if not self.shared_frontier:
                self.tracked[fingerprint] = request
        elif created:
            self.client.hdel(self.found_key, fingerprint)
        return added

    def request_scheduled(self, request, spider):
        # A retry (RetryMiddleware's copy, dont_filter) or a request taken over replaces the one
        # kept for its fingerprint: it is done when the replacement is.
        if request.dont_filter and not self.shared_frontier:
            fingerprint = self.filter.stored_fingerprint(request)
            if fingerprint in self.tracked:
                self.tracked[fingerprint] = request
                self.downloading.pop(fingerprint, None)

    def request_reached_downloader(self, request, spider):
        fingerprint = self.filter.stored_fingerprint(request)
        finder = request.meta.get(FINDER_META)
        if self.shared_frontier and fingerprint not in self.tracked and finder:
            # Taken from the shared queue: in flight here now, no longer waiting in the finder's.
            value = self._serialize(request)
            self._join()
            pipe = self.client.pipeline(transaction=False)
            pipe.hset(self.pending_key, fingerprint, value)
            pipe.hdel(self.key_of("found", finder), fingerprint)
            pipe.execute()
            self.tracked[fingerprint] = request
        if fingerprint in self.tracked:
            self.downloading[fingerprint] = request
        if time.monotonic() - self.last_flush > 0.1:
            self.flush_done()

    def _engine_requests(self):
        engine = getattr(self.crawler, "engine", None)
        slot = getattr(engine, "slot", None) or getattr(engine, "_slot", None)
        return getattr(slot, "inprogress", set())

    def flush_done(self):
        """Drops from Redis the requests whose response or failure the engine has handled."""
        self.last_flush = time.monotonic()
        in_progress = self._engine_requests()
        done = [fp for fp, request in self.downloading.items() if request not in in_progress]
        for fingerprint in done:
            del self.downloading[fingerprint]
            self.tracked.pop(fingerprint, None)
        if done:
            self.client.hdel(self.pending_key, *done)

    def _dead_owners(self):
        for owner in self.client.smembers(self.owners_key):
            owner = owner.decode() if isinstance(owner, bytes) else owner
            if owner != self.owner and not self.client.exists(self.key_of("lease", owner)):
                yield owner

    def recover(self, frontier_empty=False):
        """Schedules again what crawlers whose lease expired had in flight (and, with a shared
        frontier that is empty, what they had found); returns how many requests."""
        recovered = 0
        for owner in self._dead_owners():
            lock = self.key_of("lock", owner)
            if not self.client.set(lock, self.owner, nx=True, px=self.lease_ms):
                continue  # another crawler is taking them over
            names = ["pending"]
            if self.shared_frontier and frontier_empty:
                names.append("found")
            for name in names:
                recovered += self._take_over(self.key_of(name, owner))
            if not self.shared_frontier or frontier_empty or not self.client.exists(
                    self.key_of("found", owner)):
                self.client.srem(self.owners_key, owner)
            self.client.delete(lock)
        if recovered:
            logger.warning("%s: took over %d request(s) of crawlers whose lease expired (killed, "
                           "or cut off): crawling them again", type(self.filter).__name__,
                           recovered)
            if self.filter.stats is not None:
                self.filter.stats.inc_value(RECOVERED_STAT, recovered)
        return recovered

    def _take_over(self, key):
        from scrapy.utils.request import request_from_dict

        entries = self.client.hgetall(key)
        if not entries:
            return 0
        requests = []
        meta = {PENDING_META: True}
        if self.shared_frontier:
            meta[FINDER_META] = self.owner
        for fingerprint, value in entries.items():
            request = request_from_dict(pickle.loads(value), spider=self.crawler.spider)
            requests.append(request.replace(dont_filter=True, meta={**request.meta, **meta}))
        # Kept here (found here, with a shared frontier) before they are scheduled, and before the
        # dead crawler's copy goes.
        self._join()
        self.client.hset(self.found_key, mapping=entries)
        for fingerprint, request in zip(entries, requests):
            if not self.shared_frontier:
                self.tracked[fingerprint] = request
            self.crawler.engine.crawl(request)
        self.client.delete(key)
        return len(requests)

    def others_in_flight(self):
        """Whether a live crawler has requests in flight (their pages' links may still come)."""
        for owner in self.client.smembers(self.owners_key):
            owner = owner.decode() if isinstance(owner, bytes) else owner
            if owner != self.owner and self.client.hlen(self.key_of("pending", owner)):
                return True
        return False

    def tick(self):
        try:
            if self.joined:
                self.client.set(self.lease_key, b"1", px=self.lease_ms)
            self.flush_done()
            self.recover()
        except Exception:  # noqa: BLE001 - the next tick tries again; the lease may lapse
            logger.exception("%s: keeping the pending requests failed", type(self.filter).__name__)

    def spider_opened(self, spider):
        from twisted.internet import task

        self.loop = task.LoopingCall(self.tick)
        self.loop.start(self.lease_ms / 3000, now=True)

    def spider_idle(self, spider):
        from scrapy.exceptions import DontCloseSpider

        self.flush_done()
        # Idle: the scheduler's frontier (scrapy-redis's shared queue) is empty.
        if self.recover(frontier_empty=True) or self.others_in_flight():
            # Look again in half a second (the engine itself looks every 5 s).
            from twisted.internet import reactor

            engine_slot = getattr(self.crawler.engine, "slot", None)
            if engine_slot is not None:
                reactor.callLater(0.5, engine_slot.nextcall.schedule)
            raise DontCloseSpider

    def spider_closed(self, spider, reason):
        self.finish()

    def finish(self):
        """At close: what was handled is done; what is left (a crawl stopped before its end) is
        free at once for the next crawler."""
        if self.loop is not None and self.loop.running:
            self.loop.stop()
        try:
            self.flush_done()
            if not self.joined:
                return
            pipe = self.client.pipeline(transaction=False)
            pipe.hlen(self.pending_key)
            pipe.hlen(self.found_key)
            if any(pipe.execute()):
                self.client.delete(self.lease_key)
            else:
                self.client.delete(self.lease_key, self.pending_key, self.found_key)
                self.client.srem(self.owners_key, self.owner)
            self.joined = False
        except Exception:  # noqa: BLE001 - the lease expires by itself
            logger.exception("%s: releasing the pending requests failed",
                             type(self.filter).__name__)

    def forget(self):
        """After clear(): nothing is pending any more."""
        self.tracked.clear()
        self.downloading.clear()
        self.joined = False


def import_seen(client, set_key, key=None, *, shards=1, capacity=1_000_000, error_rate=0.001,
                expansion=2, batch=1000, max_batches=None):
    """Imports scrapy-redis's seen-set (the Redis set of hex request fingerprints its
    RFPDupeFilter keeps at ``SCHEDULER_DUPEFILTER_KEY``, e.g. ``"myspider:dupefilter"``) into the
    BF.* filter `key` (default: `set_key`, the key the Redis dupefilter uses under scrapy-redis's
    scheduler), created with this shape if new; the filter then finds every imported request
    (its fingerprints are scrapy-redis's form, recorded with the filter).

    Batched (SSCAN of `batch` members, one pipeline of ``BF.INSERT`` per batch) and resumable: the
    SSCAN cursor is saved with each batch's inserts in the hash ``{key}:bloomery:import``, so an
    import killed at any point goes on from its last batch when run again. A set at the filter's
    own key is first renamed to ``{key}:bloomery:seen-set`` (kept: delete it once the crawl runs).
    `max_batches` stops early (the rest on the next call). Returns a dict: ``source``,
    ``imported`` (members inserted, this call and before), ``done``."""
    dupefilter = RedisBloomDupeFilter(client, key=key or set_key, capacity=capacity,
                                      error_rate=error_rate, expansion=expansion, shards=shards,
                                      fingerprint="scrapy-redis", health_every=0,
                                      fingerprinter=ScrapyRedisFingerprinter())
    filter_keys = dupefilter._filter_keys()
    progress_key = aux_key(dupefilter.key, "import")
    progress = {k.decode(): v.decode() for k, v in client.hgetall(progress_key).items()}
    source = progress.get("source")
    if source is None:
        source = set_key
        if set_key in filter_keys:  # the filter needs the key: move the set aside, in its slot
            moved = aux_key(set_key, "seen-set")
            if client.type(set_key) in (b"set", "set"):
                client.rename(set_key, moved)
            elif not client.exists(moved):
                raise ValueError(f"no set of fingerprints at {set_key!r}")
            source = moved
        elif client.type(set_key) not in (b"set", "set"):
            raise ValueError(f"no set of fingerprints at {set_key!r}")
        client.hset(progress_key, mapping={"source": source, "cursor": 0, "imported": 0,
                                           "state": "running"})
        progress = {"cursor": "0", "imported": "0"}
    dupefilter.open()  # FilterShapeError if the filter exists with another shape
    if progress.get("state") == "done":
        return {"source": source, "imported": int(progress["imported"]), "done": True}
    cursor, imported = int(progress["cursor"]), int(progress["imported"])
    batches = 0
    while max_batches is None or batches < max_batches:
        cursor, members = client.sscan(source, cursor, count=batch)
        by_key = {}
        for fingerprint in members:
            fingerprint = fingerprint.encode() if isinstance(fingerprint, str) else fingerprint
            if len(fingerprint) != 40:
                raise ValueError(f"{source!r} holds {fingerprint[:60]!r}, not a hex SHA-1 "
                                 "fingerprint of scrapy-redis's")
            by_key.setdefault(dupefilter._key_for(fingerprint), []).append(fingerprint)
        pipe = client.pipeline(transaction=False)
        for shard_key, fingerprints in by_key.items():
            pipe.execute_command("BF.INSERT", shard_key, "NOCREATE", "ITEMS", *fingerprints)
        imported += len(members)
        # After the batch's inserts: a kill between them leaves the old cursor (the batch again).
        pipe.hset(progress_key, mapping={"cursor": cursor, "imported": imported})
        pipe.execute()
        batches += 1
        if cursor == 0:
            client.hset(progress_key, "state", "done")
            return {"source": source, "imported": imported, "done": True}
    return {"source": source, "imported": imported, "done": False}


def main(argv=None):
    """``python3 -m bloomery.scrapy_redis import-seen ...``: import_seen from the command line."""
    import argparse

    import redis

    parser = argparse.ArgumentParser(prog="python3 -m bloomery.scrapy_redis")
    commands = parser.add_subparsers(dest="command", required=True)
    command = commands.add_parser(
        "import-seen", help="import scrapy-redis's seen-set into a bloomery filter (resumable)")
    command.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    command.add_argument("--set", required=True, dest="set_key",
                         help="scrapy-redis's dupefilter key, e.g. myspider:dupefilter")
    command.add_argument("--key", help="the filter's key (BLOOMERY_REDIS_KEY; default: --set)")
    command.add_argument("--shards", type=int, default=1, help="BLOOMERY_REDIS_SHARDS")
    command.add_argument("--capacity", type=int, default=1_000_000,
                         help="BLOOMERY_REDIS_CAPACITY")
    command.add_argument("--error-rate", type=float, default=0.001,
                         help="BLOOMERY_REDIS_ERROR_RATE")
    command.add_argument("--expansion", type=int, default=2, help="BLOOMERY_REDIS_EXPANSION")
    command.add_argument("--batch", type=int, default=1000, help="fingerprints per round trip")
    args = parser.parse_args(argv)
    try:
        result = import_seen(redis.Redis.from_url(args.redis_url), args.set_key, args.key,
                             shards=args.shards, capacity=args.capacity,
                             error_rate=args.error_rate, expansion=args.expansion,
                             batch=args.batch)
    except (ValueError, redis.RedisError) as error:
        print(f"import-seen: {error}", file=sys.stderr)
        return 1
    print(f"imported {result['imported']} fingerprints from {result['source']!r} into "
          f"{args.key or args.set_key!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
