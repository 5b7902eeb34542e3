# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""Scrapy request de-duplication with a bloomery filter.

In a project's settings::

    DUPEFILTER_CLASS = "bloomery.scrapy.BloomDupeFilter"
    BLOOMERY_DUPEFILTER_CAPACITY = 10_000_000   # requests expected (the first stage's, if scalable)
    BLOOMERY_DUPEFILTER_ERROR_RATE = 0.001      # chance a new request is wrongly dropped
    BLOOMERY_DUPEFILTER_SCALABLE = True         # grow past the capacity (False: a fixed filter)
    BLOOMERY_DUPEFILTER_GROWTH = 2              # or 4

Requests are identified by the crawler's request fingerprinter (``REQUEST_FINGERPRINTER_CLASS``),
so canonicalisation is Scrapy's. A false positive drops a request that was never crawled, with
probability at most the error rate; a duplicate is never let through.

With ``JOBDIR`` set, the filter is saved atomically to ``JOBDIR/requests.seen.bloom`` when the
spider closes (as Scrapy saves its request queue there), and loaded when the crawl resumes: a
crawl stopped gracefully (Ctrl-C once, ``CLOSESPIDER_*``) resumes without fetching a page twice.
A crawl that did not close (SIGKILL, OOM, a power cut) resumes from an empty filter and may fetch
pages again (at-least-once), never skips one: Scrapy writes its queue only on close, so a filter
saved earlier would hold requests that the resumed queue no longer has. A file
``JOBDIR/requests.seen.bloom.running``, present while a crawl runs, tells the two apart.
``BLOOMERY_DUPEFILTER_CHECKPOINT_EVERY`` (periodic saves) is ignored for that reason.

``RedisBloomDupeFilter`` (a filter shared by many crawlers through Redis) is importable from here
too; it needs the ``redis`` package only when used.
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
        )

    def request_seen(self, request):
        # Nothing here may fail after the add: a request whose fingerprint is in the filter but
        # that Scrapy did not schedule would be lost for good.
        return self.filter.add(self.fingerprinter.fingerprint(request))

    def checkpoint(self):
        """Saves the filter under JOBDIR now (atomically: temp file, fsync, rename). Only the
        save at close makes a resumable state: see the module docstring."""
        if self.state_path:
            self.filter.save(self.state_path)

    def close(self, reason):
        # The running mark goes only after a good save: if the save fails, the next run starts
        # from an empty filter rather than from an older file.
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
    if name == "RedisBloomDupeFilter":
        from bloomery.scrapy_redis import RedisBloomDupeFilter

        return RedisBloomDupeFilter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
