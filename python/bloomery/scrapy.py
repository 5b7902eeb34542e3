# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""Scrapy request de-duplication with a bloomery filter.

In a project's settings::

    DUPEFILTER_CLASS = "bloomery.scrapy.BloomDupeFilter"
    BLOOMERY_DUPEFILTER_CAPACITY = 10_000_000   # requests expected (the first stage's, if scalable)
    BLOOMERY_DUPEFILTER_ERROR_RATE = 0.001      # chance a new request is wrongly dropped
    BLOOMERY_DUPEFILTER_SCALABLE = True         # grow past the capacity (False: a fixed filter)
    BLOOMERY_DUPEFILTER_GROWTH = 2              # or 4

Requests are identified by the crawler's request fingerprinter (``REQUEST_FINGERPRINTER_CLASS``),
so canonicalisation is Scrapy's. A false positive drops a request that was never crawled; a
duplicate is never let through. The chance of a wrong drop is at most the error rate while the
filter holds at most its capacity of requests, and always with the scalable filter (it grows).
A fixed filter (``BLOOMERY_DUPEFILTER_SCALABLE = False``) past its capacity keeps no promise: the
chance climbs towards 1 (at 200 times its capacity it dropped 98% of new requests). It says so
when it happens: a warning in the log when the requests it took pass the capacity and again at
every doubling, and the stats ``bloomery/dupefilter/over_capacity`` (True),
``bloomery/dupefilter/past_capacity`` (new requests taken past the capacity) and
``bloomery/dupefilter/estimated_fpr`` (the chance of a wrong drop now, as of the last warning).

Its health (``filter.health()``: docs/OPERATING.md) goes into the crawl stats every
``BLOOMERY_DUPEFILTER_HEALTH_EVERY`` requests (default 10,000; 0: only at close) and when the
spider closes: ``bloomery/dupefilter/health/state`` ("ok", "near_limit" or "over_limit"),
``.../estimated_fpr``, ``.../planned_fpr``, ``.../fill_ratio``, ``.../estimated_count`` and
``.../capacity``. Each change of state is logged once, as a warning. A reading costs 1-2
milliseconds however large the filter (a ~1 MiB sample of it; a scalable chain: per large
stage).

With ``JOBDIR`` set, the filter is saved atomically to ``JOBDIR/requests.seen.bloom`` when the
spider closes (as Scrapy saves its request queue there), and loaded when the crawl resumes: a
crawl stopped gracefully (Ctrl-C once, ``CLOSESPIDER_*``) resumes without fetching a page twice.
A crawl that did not close (SIGKILL, OOM, a power cut) resumes from an empty filter and may fetch
pages again (at-least-once), never skips one: Scrapy writes its queue only on close, so a filter
saved earlier would hold requests that the resumed queue no longer has. A file
``JOBDIR/requests.seen.bloom.running``, present while a crawl runs, tells the two apart.
``BLOOMERY_DUPEFILTER_CHECKPOINT_EVERY`` (periodic saves) is ignored for that reason.

``RedisBloomDupeFilter`` (a filter shared by many crawlers through Redis) and
``RedisWindowedDupeFilter`` (the same, forgetting requests after a window) are importable from here
too; they need the ``redis`` package only when used.
"""

import contextlib
import logging
import os

from scrapy.dupefilters import RFPDupeFilter
from scrapy.utils.job import job_dir

import bloomery

STATE_FILE = "requests.seen.bloom"
RUNNING_FILE = STATE_FILE + ".running"

logger = logging.getLogger(__name__)


class BloomDupeFilter(RFPDupeFilter):
    """A ``DUPEFILTER_CLASS`` that remembers request fingerprints in a bloomery filter.

    It inherits Scrapy's ``RFPDupeFilter.log()``, which logs duplicates (all of them with
    ``DUPEFILTER_DEBUG``) and counts them in the ``dupefilter/filtered`` stat.
    """

    def __init__(
        self,
        path=None,
        debug=False,
        *,
        fingerprinter=None,
        capacity=1_000_000,
        error_rate=0.001,
        scalable=True,
        growth=2,
        checkpoint_every=0,
        stats=None,
        health_every=10_000,
    ):
        # The parent's file (requests.seen, one hex line per request) is replaced by ours.
        super().__init__(None, debug, fingerprinter=fingerprinter)
        self.state_path = os.path.join(path, STATE_FILE) if path else None
        # Accepted for settings written for earlier versions; a save before close cannot be
        # resumed safely (see the module docstring).
        self.checkpoint_every = checkpoint_every
        if checkpoint_every:
            logger.warning(
                "BLOOMERY_DUPEFILTER_CHECKPOINT_EVERY is ignored: the filter is saved when the "
                "spider closes, the only state a resumed crawl can trust")
        self.filter = None
        if self.state_path:
            os.makedirs(path, exist_ok=True)
            running = os.path.join(path, RUNNING_FILE)
            if os.path.exists(running):
                logger.warning(
                    "%s: the previous crawl in this JOBDIR did not close; its requests are "
                    "forgotten (pages already fetched may be fetched again)", path)
            elif os.path.exists(self.state_path):
                self.filter = bloomery.load(self.state_path)
            _write_durably(running)
        if self.filter is None and scalable:
            self.filter = bloomery.ScalableFilter(capacity, error_rate, growth)
        elif self.filter is None:
            self.filter = bloomery.BlockedFilter(capacity, error_rate)
        self.stats = stats
        # A fixed filter's promise holds up to its capacity: count the requests it takes (a
        # resumed one starts from its estimate) and say when they pass it (_over_capacity).
        # A scalable filter grows instead, and raises FilterFullError rather than overfill.
        grows = isinstance(self.filter, bloomery.ScalableFilter)
        self.capacity = None if grows or self.filter.capacity == 0 else self.filter.capacity
        self.requests = len(self.filter) if self.capacity is not None else 0
        self.next_warning = self.capacity
        if self.capacity is not None and self.requests > self.capacity:
            self._over_capacity()
        # Health: read every health_every requests (a counter here, nothing per request in the
        # filter), and at close; a change of state is logged once.
        self.health_every = health_every
        self.requests_since_health = 0
        self.health_state = "ok"
        self._update_health()

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        return cls(
            job_dir(settings),
            settings.getbool("DUPEFILTER_DEBUG"),
            fingerprinter=crawler.request_fingerprinter,
            capacity=settings.getint("BLOOMERY_DUPEFILTER_CAPACITY", 1_000_000),
            error_rate=settings.getfloat("BLOOMERY_DUPEFILTER_ERROR_RATE", 0.001),
            scalable=settings.getbool("BLOOMERY_DUPEFILTER_SCALABLE", True),
            growth=settings.getint("BLOOMERY_DUPEFILTER_GROWTH", 2),
            checkpoint_every=settings.getint("BLOOMERY_DUPEFILTER_CHECKPOINT_EVERY", 0),
            stats=crawler.stats,
            health_every=settings.getint("BLOOMERY_DUPEFILTER_HEALTH_EVERY", 10_000),
        )

    def request_seen(self, request):
        # Nothing here may fail after the add: a request whose fingerprint is in the filter but
        # that Scrapy did not schedule would be lost for good. (_over_capacity only logs and
        # sets stats.)
        seen = self.filter.add(self.fingerprinter.fingerprint(request))
        if not seen and self.capacity is not None:
            self.requests += 1
            if self.requests > self.capacity:
                if self.stats is not None:
                    self.stats.inc_value("bloomery/dupefilter/past_capacity")
                if self.requests > self.next_warning:
                    self._over_capacity()
        if self.health_every:
            self.requests_since_health += 1
            if self.requests_since_health >= self.health_every:
                self._update_health()
        return seen

    def _update_health(self):
        """Puts the filter's health into the stats and warns once when its state changes. Never
        raises (request_seen calls it after the add)."""
        self.requests_since_health = 0
        try:
            health = self.filter.health()
            if self.stats is not None:
                for name in ("state", "estimated_fpr", "planned_fpr", "fill_ratio",
                             "estimated_count", "capacity"):
                    self.stats.set_value(f"bloomery/dupefilter/health/{name}", health[name])
            if health["state"] != self.health_state:
                logger.warning(
                    "BloomDupeFilter: filter health %s -> %s: estimated FPR %.3g (planned "
                    "%.3g), about %d requests held for a capacity of %d (docs/OPERATING.md)",
                    self.health_state, health["state"], health["estimated_fpr"],
                    health["planned_fpr"], min(health["estimated_count"], 2**63),
                    health["capacity"])
                self.health_state = health["state"]
        except Exception:  # noqa: BLE001 - a stats backend's error must not lose a request
            logger.exception("BloomDupeFilter: reading the filter's health failed")

    def _over_capacity(self):
        """Warns that the fixed filter holds more requests than its capacity (first when they pass
        it, then at every doubling) and says so in the stats."""
        while self.next_warning < self.requests:
            self.next_warning *= 2
        fpr = self.filter.estimated_fpr()
        logger.warning(
            "BloomDupeFilter: %d new requests went into a fixed filter planned for %d "
            "(BLOOMERY_DUPEFILTER_CAPACITY); a new request is now wrongly dropped as a duplicate "
            "with probability about %.3g, and rising (error rate asked for: %.3g). Set "
            "BLOOMERY_DUPEFILTER_SCALABLE = True, or a larger capacity",
            self.requests, self.capacity, fpr, self.filter.error_rate)
        if self.stats is not None:
            self.stats.set_value("bloomery/dupefilter/over_capacity", True)
            self.stats.set_value("bloomery/dupefilter/estimated_fpr", fpr)

    def checkpoint(self):
        """Saves the filter under JOBDIR now (atomically: temp file, fsync, rename). Only the
        save at close makes a resumable state: see the module docstring."""
        if self.state_path:
            self.filter.save(self.state_path)

    def close(self, reason):
        # The running mark goes only after a good save: if the save fails, the next run starts
        # from an empty filter rather than from an older file.
        self._update_health()
        self.checkpoint()
        if self.state_path:
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(os.path.dirname(self.state_path), RUNNING_FILE))


def _write_durably(path):
    """Creates the empty file `path` and makes its directory entry durable."""
    with open(path, "wb") as f:
        os.fsync(f.fileno())
    directory = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def __getattr__(name):
    # Imported on first use, so that BloomDupeFilter never needs the redis package.
    if name in ("RedisBloomDupeFilter", "RedisWindowedDupeFilter"):
        from bloomery import scrapy_redis

        return getattr(scrapy_redis, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
