# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""Scrapy request de-duplication with a bloomery filter.

In a project's settings::

    DUPEFILTER_CLASS = "bloomery.scrapy.BloomDupeFilter"
    BLOOMERY_DUPEFILTER_CAPACITY = 10_000_000   # requests expected (the first stage's, if scalable)
    BLOOMERY_DUPEFILTER_ERROR_RATE = 0.001      # chance a new request is wrongly dropped
    BLOOMERY_DUPEFILTER_SCALABLE = True         # grow past the capacity (False: a fixed filter)
    BLOOMERY_DUPEFILTER_GROWTH = 2              # or 4
    BLOOMERY_DUPEFILTER_CHECKPOINT_EVERY = 1000 # new requests between checkpoints under JOBDIR

Requests are identified by the crawler's request fingerprinter (``REQUEST_FINGERPRINTER_CLASS``),
so canonicalisation is Scrapy's. A false positive drops a request that was never crawled, with
probability at most the error rate; a duplicate is never let through.

With ``JOBDIR`` set, the filter is saved atomically to ``JOBDIR/requests.seen.bloom`` every
``BLOOMERY_DUPEFILTER_CHECKPOINT_EVERY`` new requests and when the spider closes, and loaded when
the crawl resumes. A crawl killed between checkpoints forgets the requests seen since the last
one and may fetch them again on resume (at-least-once), never skips one.

``RedisBloomDupeFilter`` (a filter shared by many crawlers through Redis) is importable from here
too; it needs the ``redis`` package only when used.
"""

import os

from scrapy.dupefilters import RFPDupeFilter
from scrapy.utils.job import job_dir

import bloomery

STATE_FILE = "requests.seen.bloom"


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
        checkpoint_every=1000,
    ):
        # The parent's file (requests.seen, one hex line per request) is replaced by ours.
        super().__init__(None, debug, fingerprinter=fingerprinter)
        self.state_path = os.path.join(path, STATE_FILE) if path else None
        self.checkpoint_every = max(1, int(checkpoint_every))
        self._unsaved = 0
        if self.state_path and os.path.exists(self.state_path):
            self.filter = bloomery.load(self.state_path)
        elif scalable:
            self.filter = bloomery.ScalableFilter(capacity, error_rate, growth)
        else:
            self.filter = bloomery.BlockedFilter(capacity, error_rate)

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
            checkpoint_every=settings.getint("BLOOMERY_DUPEFILTER_CHECKPOINT_EVERY", 1000),
        )

    def request_seen(self, request):
        if self.filter.add(self.fingerprinter.fingerprint(request)):
            return True
        self._unsaved += 1
        if self.state_path and self._unsaved >= self.checkpoint_every:
            self.checkpoint()
        return False

    def checkpoint(self):
        """Saves the filter under JOBDIR now (atomically: temp file, fsync, rename)."""
        if self.state_path:
            self.filter.save(self.state_path)
        self._unsaved = 0

    def close(self, reason):
        self.checkpoint()


def __getattr__(name):
    # Imported on first use, so that BloomDupeFilter never needs the redis package.
    if name == "RedisBloomDupeFilter":
        from bloomery.scrapy_redis import RedisBloomDupeFilter

        return RedisBloomDupeFilter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
