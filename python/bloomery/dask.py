# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""Two large sets of lines intersected on a Dask cluster (docs/INTERSECT.md).

The inputs are ``dask.bag.Bag`` of lines (``str`` or ``bytes``, without the newline:
``read_lines`` reads text files so). The steps, each a graph of tasks over their partitions:

1. ``build_filter(a, plan)``: a partial ``BlockedFilter`` for each partition of A, every one
   created from the one ``FilterPlan`` (capacity, error rate, layout, seed), so that they OR
   together; a tree reduction merges them (``split_every`` at a time, ``|=``) into one filter
   of all of A, carried as its bytes (``tobytes``).
2. ``probe(b, filter)``: the merged filter goes to each worker once (Dask ships a task's input
   to a worker once, whatever number of its tasks read it) and each partition of B keeps the
   lines that may be in A: the candidates, ``|A ∩ B|`` plus about ``error_rate`` of the rest.
3. ``intersect(a, b, exact=True)``: the exact pass. A second filter, of the candidates, thins A
   to the lines that may be candidates; those and the candidates are split by hash into the same
   ``buckets``, each bucket is intersected exactly (a Python set), and the confirmed lines go
   back to B's partitions, in B's order.

Every partial filter is as large as the whole one: with a partition per worker, each worker holds
one filter of all of A while it builds. Dask is imported when these functions are called, not
with ``bloomery``; ``python3-distributed`` (or ``pip install distributed``) provides it.

::

    from distributed import Client
    from bloomery.dask import intersect, read_lines

    client = Client("scheduler:8786")
    a = read_lines("s3://crawl/a-*.txt")
    b = read_lines("s3://crawl/b-*.txt")
    common = intersect(a, b, capacity=5 * 10**9, error_rate=1e-4)  # a Bag, lazy
    common.to_textfiles("s3://crawl/common-*.txt")
"""

from __future__ import annotations

import dataclasses
import operator
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence, Union

import bloomery

if TYPE_CHECKING:  # the annotations only: dask is imported by the calls
    import dask.bag
    from dask.delayed import Delayed

Line = Union[str, bytes]

__all__ = ["FilterPlan", "build_filter", "probe", "intersect", "read_lines"]


@dataclasses.dataclass(frozen=True)
class FilterPlan:
    """What every partial filter is created with, so that they merge: the same plan makes the
    same bits, hashes, layout and seed (``BlockedFilter.union`` refuses anything else).

    ``capacity`` is the number of lines of the whole input (not of one partition); ``layout`` and
    ``seed`` as ``BlockedFilter`` takes them (None: its defaults)."""

    capacity: int
    error_rate: float = 1e-4
    layout: Optional[str] = None
    seed: Optional[int] = None

    def create(self) -> bloomery.BlockedFilter:
        """An empty filter of this plan."""
        kwargs: dict[str, Any] = {}
        if self.layout is not None:
            kwargs["layout"] = self.layout
        if self.seed is not None:
            kwargs["seed"] = self.seed
        return bloomery.BlockedFilter(max(1, int(self.capacity)), self.error_rate, **kwargs)


# ---------------------------------------------------------------------------------------------
# The tasks: plain functions of plain values, run on the workers.


def _partial_filter(lines: Iterable[Line], plan: FilterPlan) -> bytes:
    filter_ = plan.create()
    filter_.update(list(lines))
    return filter_.tobytes()


def _merge(*parts: bytes) -> bytes:
    merged = bloomery.BlockedFilter.frombytes(parts[0])
    for part in parts[1:]:
        merged |= bloomery.BlockedFilter.frombytes(part)
    return merged.tobytes()


def _may_contain(lines: Iterable[Line], filter_bytes: bytes) -> list[Line]:
    lines = list(lines)
    if not lines:
        return []
    present = bloomery.BlockedFilter.frombytes(filter_bytes).contains_many(lines)
    return [line for line, hit in zip(lines, present) if hit]


def _bucket_of(line: Line, buckets: int) -> int:
    # bloomery's own hash: the same in every process (Python's hash() of a str is not).
    return bloomery.hash_key(line)[0] % buckets


def _split(lines: Iterable[Line], buckets: int) -> list[list[Line]]:
    split: list[list[Line]] = [[] for _ in range(buckets)]
    for line in lines:
        split[_bucket_of(line, buckets)].append(line)
    return split


def _split_candidates(lines: Sequence[Line], buckets: int) -> list[list[tuple[int, Line]]]:
    split: list[list[tuple[int, Line]]] = [[] for _ in range(buckets)]
    for position, line in enumerate(lines):
        split[_bucket_of(line, buckets)].append((position, line))
    return split


def _confirm(a_lines: list[list[Line]],
             candidates: list[list[tuple[int, Line]]]) -> list[list[tuple[int, Line]]]:
    """One bucket: for each partition of B, its candidates that are in A (position, line)."""
    in_a = set()
    for lines in a_lines:
        in_a.update(lines)
    return [[(position, line) for position, line in part if line in in_a] for part in candidates]


def _in_order(confirmed: list[list[tuple[int, Line]]]) -> list[Line]:
    """One partition of B: its confirmed lines from every bucket, back in B's order."""
    return [line for _, line in sorted(pair for bucket in confirmed for pair in bucket)]


def _count(lines: Sequence[Any]) -> int:
    return len(lines)


# ---------------------------------------------------------------------------------------------
# The graph.


def _tree_merge(parts: list[Delayed], split_every: int) -> Delayed:
    import dask

    if split_every < 2:
        raise ValueError(f"split_every must be at least 2, not {split_every}")
    while len(parts) > 1:
        parts = [dask.delayed(_merge)(*parts[i:i + split_every])
                 for i in range(0, len(parts), split_every)]
    return parts[0]


def _build(partitions: list[Any], plan: Union[FilterPlan, Delayed], split_every: int) -> Delayed:
    import dask

    if not partitions:
        raise ValueError("no partitions to build a filter from")
    partials = [dask.delayed(_partial_filter)(part, plan) for part in partitions]
    return _tree_merge(partials, split_every)


def build_filter(lines: dask.bag.Bag, plan: FilterPlan, *, split_every: int = 8) -> Delayed:
    """The filter of every line of ``lines``, as the bytes of a ``BlockedFilter`` (a Delayed:
    ``.compute()`` it, or pass it to ``probe``). A partial filter per partition, each created by
    ``plan``, merged by a tree reduction ``split_every`` at a time. ``BlockedFilter.frombytes``
    turns the bytes into the filter; it is the very filter ``plan.create()`` would hold after
    ``update`` with every line."""
    return _build(lines.to_delayed(), plan, split_every)


def _shared(filter_: Union[Delayed, bytes, bloomery.BlockedFilter]) -> Delayed:
    # Bytes become one task of the graph, so each worker fetches them once; a literal would be
    # copied into every task that reads it.
    import dask
    from dask.delayed import Delayed

    if isinstance(filter_, Delayed):
        return filter_
    if isinstance(filter_, bloomery.BlockedFilter):
        filter_ = filter_.tobytes()
    return dask.delayed(filter_, traverse=False)


def probe(lines: dask.bag.Bag,
          filter_: Union[Delayed, bytes, bloomery.BlockedFilter]) -> dask.bag.Bag:
    """The lines of ``lines`` that ``filter_`` (``build_filter``'s result, a filter's bytes, or a
    ``BlockedFilter``) may hold, in their order and partitions."""
    import dask
    import dask.bag

    shared = _shared(filter_)
    return dask.bag.from_delayed(
        [dask.delayed(_may_contain)(part, shared) for part in lines.to_delayed()])


def intersect(a: dask.bag.Bag, b: dask.bag.Bag, capacity: Optional[int] = None,
              error_rate: float = 1e-4, *, layout: Optional[str] = None,
              seed: Optional[int] = None, exact: bool = True, buckets: Optional[int] = None,
              split_every: int = 8) -> dask.bag.Bag:
    """The lines of B that are in A, in B's order and partitions (a line of B repeated is kept
    each time), as a lazy Bag.

    ``capacity``: A's lines (None: counted first, one more pass over A). ``error_rate``,
    ``layout``, ``seed``: the plan of A's filter (``FilterPlan``). ``exact=False`` stops after
    the probe: every line of B in A, and about ``error_rate`` of the others. ``buckets``: the
    parts of the exact pass (default: the larger partition count); each holds about
    ``|A ∩ B| / buckets`` lines of each side in memory."""
    import dask
    import dask.bag

    a_parts = a.to_delayed()
    b_parts = b.to_delayed()
    size: Any = capacity
    if size is None:
        size = dask.delayed(sum)([dask.delayed(_count)(part) for part in a_parts])
    plan = dask.delayed(FilterPlan)(size, error_rate, layout, seed)
    a_filter = _build(a_parts, plan, split_every)
    candidates = [dask.delayed(_may_contain)(part, a_filter) for part in b_parts]
    if not exact:
        return dask.bag.from_delayed(candidates)

    # The candidates' own filter keeps, of A, about |A ∩ B| lines and error_rate of the rest.
    found = dask.delayed(sum)([dask.delayed(_count)(part) for part in candidates])
    c_plan = dask.delayed(FilterPlan)(found, error_rate, layout, seed)
    c_filter = _build(candidates, c_plan, split_every)
    a_kept = [dask.delayed(_may_contain)(part, c_filter) for part in a_parts]

    n = buckets if buckets is not None else max(len(a_parts), len(b_parts))
    if n < 1:
        raise ValueError(f"buckets must be at least 1, not {n}")
    a_split = [dask.delayed(_split)(part, n) for part in a_kept]
    c_split = [dask.delayed(_split_candidates)(part, n) for part in candidates]
    get = dask.delayed(operator.getitem, pure=True)
    confirmed = [dask.delayed(_confirm)([get(s, p) for s in a_split],
                                        [get(s, p) for s in c_split]) for p in range(n)]
    return dask.bag.from_delayed(
        [dask.delayed(_in_order)([get(bucket, i) for bucket in confirmed])
         for i in range(len(b_parts))])


def read_lines(urlpath: Union[str, list[str]], **kwargs: Any) -> dask.bag.Bag:
    """``dask.bag.read_text(urlpath, **kwargs)`` with each line's trailing newline removed, as
    ``bloomery intersect`` reads lines. ``blocksize`` splits large files into partitions."""
    import dask.bag

    return dask.bag.read_text(urlpath, **kwargs).map(_strip_newline)


def _strip_newline(line: str) -> str:
    if line.endswith("\n"):
        line = line[:-1]
    return line
