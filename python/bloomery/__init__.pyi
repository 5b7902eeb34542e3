# Type stubs for bloomery (the classes live in the C++ extension bloomery._native).
import datetime
import os
from typing import Any, BinaryIO, ClassVar, Iterable, Literal, Optional, TypedDict, TypeVar, Union, overload

import numpy as np
import numpy.typing as npt

Key = Union[str, bytes, bytearray, memoryview, int, np.integer[Any], npt.NDArray[np.integer[Any]]]
"""str (hashed as UTF-8), bytes or any contiguous buffer, or int in [0, 2**64 - 1]. A NumPy
integer, or a NumPy integer array holding one int (0-d or one element), is that int; an integer
array of more is a batch (TypeError as one key)."""
Keys = Union[
    Iterable[Key],
    npt.NDArray[np.integer[Any]],
    npt.NDArray[np.bytes_],
    npt.NDArray[np.str_],
    npt.NDArray[np.object_],
    memoryview,
]
"""Any iterable of keys, or a 1-D buffer (any strides) of: integers of any width and alignment
(aligned NumPy uint64 is read in place); fixed-width bytes (NumPy 'S', format '<n>s'), each key
its bytes without trailing NULs; NumPy 'U', each key the UTF-8 of its str; or objects (NumPy
object), each a str or bytes. An exception len(keys) raises propagates."""
Path = Union[str, bytes, os.PathLike[str], os.PathLike[bytes]]
"""A file path as open() takes it (an embedded NUL is ValueError)."""

_F = TypeVar("_F", bound="_Filter")
BlockLayout = Literal["line512", "block256", "word64"]
"""The block a key's bits live in (bloomery/layout.h): line512, a 64-byte line (the default, the
fewest bits); block256, 32 bytes, k <= 8; word64, one 64-bit word, k <= 8 (the fastest)."""

StageLayout = Union[BlockLayout, Literal["partitioned"]]
"""A scalable filter's stages: a blocked shape, or partitioned (every stage a classic filter: the
fewest bits, k lines a key)."""

IntegerHash = Literal["xxh3", "mix", "seeded-mix"]
"""How int keys are hashed (bloomery/key.h, the file's hash_id): xxh3, XXH3-128 of their 8 bytes
(an int and its 8-byte string are one key; hash_id 1); mix, two multiplies with the seed xored into
the key (hash_id 2); seeded-mix, the same cost with the seed premixed, so that two seeds give
unrelated filters (hash_id 3). Strings and bytes are XXH3-128 under each."""

Probe = Literal["fields", "salted", "none"]
"""How a blocked filter places a key's bits in its block (bloomery/layout.h): fields, for every
filter made now; salted, line512 and block256 files saved before it; none, no block (ClassicFilter,
partitioned stages)."""

LayoutPreference = Literal["smallest", "fastest"]
"""What layout='auto' chooses by: the fewest bits that meet error_rate (the default), or the
fastest layout whose filter fits max_memory. Given without layout='auto': ValueError."""

__version__: str
"""The C++ library's version (its VERSION file), as `bloomery --version` prints it."""

_HealthState = Literal["ok", "near_limit", "over_limit"]
"""ok; near_limit: the estimated FPR above 0.8x planned or the count past 90% of capacity;
over_limit: the estimated FPR above planned (docs/OPERATING.md)."""

class _Health(TypedDict):
    """What filter.health() returns (C++ FilterHealth, bloomery/health.h); a name of the stubs
    only, for type checkers."""

    state: _HealthState
    capacity: int
    inserted: Optional[int]
    """Keys a scalable chain reported added (its stages' counts); None for the other kinds."""
    estimated_count: float
    """Distinct keys held, from the bits (counting: insertions minus erasures); inf if saturated."""
    estimated_count_error: float
    """Half-width of estimated_count's 3-sigma interval."""
    fill_ratio: float
    planned_fpr: float
    estimated_fpr: float
    estimated_fpr_error: float
    """3-sigma half-width of the sample's error; 0 when the filter was read whole (<= 4 MiB)."""
    sampled: bool

class FormatError(ValueError):
    """A file or byte string that is not a valid bloomery filter (of the expected kind)."""

class FilterFullError(IndexError):
    """A scalable filter reached its memory or stage limit and refused a new key."""

class _Filter:
    def add(self, key: Key) -> bool:
        """Adds key; True if it was ALREADY present (pybloom-live), False if new."""
    def __contains__(self, key: Key) -> bool: ...
    @overload
    def add_many(self, keys: Keys) -> int:
        """Adds every key, GIL released; returns how many were new."""
    @overload
    def add_many(self, keys: Keys, *, present: Literal[True]) -> npt.NDArray[np.bool_]:
        """Adds every key; answers per key in add()'s sense: True where it was already present."""
    def update(self, keys: Keys) -> None: ...
    @overload
    def contains_many(self, keys: Keys) -> npt.NDArray[np.bool_]: ...
    @overload
    def contains_many(self, keys: Keys, *, count: Literal[True]) -> int: ...
    @overload
    def contains_many(self, keys: Keys, *, count: bool) -> Union[int, npt.NDArray[np.bool_]]: ...
    def __len__(self) -> int:
        """Estimated number of distinct keys added (counting filters: insertions)."""
    def estimated_fpr(self) -> float: ...
    def health(self) -> _Health:
        """The filter's health: state, estimates with their errors, fill, planned and estimated
        FPR. Reads the whole filter up to 1 MiB, a ~1 MiB sample above."""
    def clear(self) -> None: ...
    def union_update(self: _F, other: _F) -> _F: ...
    def __ior__(self: _F, other: _F) -> _F: ...
    @property
    def capacity(self) -> int:
        """Keys the filter (scalable: its allocated stages; windowed: one window) is planned for."""
    @property
    def error_rate(self) -> float:
        """The FPR promised at capacity (at most the one asked for)."""
    @property
    def seed(self) -> int: ...
    @property
    def integer_hash(self) -> IntegerHash: ...
    @property
    def concurrent(self) -> bool: ...
    @property
    def memory_bytes(self) -> int: ...

class _Persistent(_Filter):
    """The kinds in bloomery's file format: save, load, bytes, copy and pickling."""
    def save(self, path: Path) -> None:
        """Writes the filter atomically in bloomery's file format (the C++ library's and CLI's).
        BlockingIOError while a read-write map() of that file (any process) or an update holds it."""
    def tobytes(self) -> bytes: ...
    def tofile(self, f: BinaryIO) -> None: ...
    def copy(self: _F) -> _F: ...
    def union(self: _F, other: _F) -> _F: ...
    def __or__(self: _F, other: _F) -> _F: ...
    @classmethod
    def load(cls: type[_F], path: Path, *, concurrent: bool = ..., max_bytes: int = ...,
             verify_checksums: bool = ..., allow_dirty: bool = ...) -> _F: ...
    @classmethod
    def frombytes(cls: type[_F], data: bytes, *, concurrent: bool = ...,
                  max_bytes: int = ...) -> _F: ...
    @classmethod
    def fromfile(cls: type[_F], f: BinaryIO, n: int = ...) -> _F: ...

class _Mappable(_Persistent):
    @classmethod
    def map(cls: type[_F], path: Path, *, writable: bool = ..., max_bytes: int = ...,
            allow_dirty: bool = ...) -> _F:
        """Maps a filter file without copying; writable=True writes adds to the file."""
    def flush(self) -> None:
        """Checksums and syncs a writable mapping's file; ValueError if the path no longer names it."""

class _Sliced(_Mappable):
    @property
    def num_bits(self) -> int: ...
    @property
    def hashes(self) -> int: ...

class _FixedSize(_Sliced):
    """The kinds sized by capacity and error_rate, or by bits (and hashes): one constructor."""
    def __init__(self, capacity: int = ..., error_rate: float = 0.001, *, bits: int = ...,
                 hashes: int = ..., seed: int | None = ...,
                 integer_hash: IntegerHash | None = ..., concurrent: bool = ...,
                 max_memory: int = ..., huge_pages: bool = ..., populate: bool = ...,
                 layout: BlockLayout | Literal["auto"] | None = ...,
                 prefer: LayoutPreference | None = ...) -> None:
        """layout: BlockedFilter's block ('auto': the planner's, by prefer); ClassicFilter takes
        none (ValueError). integer_hash None: 'seeded-mix' for word64 and block256, 'xxh3' for
        the line."""
    @property
    def layout(self) -> BlockLayout | Literal["partitioned"]:
        """The filter's block ('partitioned' for ClassicFilter); files, copies and pickles keep it."""
    @property
    def probe(self) -> Probe:
        """How a key's bits sit in its block: 'fields' now, 'salted' in older files."""
    @property
    def num_slices(self) -> int:
        """k, the number of probes per key (pybloom-live's name)."""

class BlockedFilter(_FixedSize):
    def intersection(self, other: BlockedFilter) -> BlockedFilter: ...
    def intersection_update(self, other: BlockedFilter) -> BlockedFilter: ...
    def __and__(self, other: BlockedFilter) -> BlockedFilter: ...
    def __iand__(self, other: BlockedFilter) -> BlockedFilter: ...
    def folded(self, max_fpr: float, *, max_memory: int = 0) -> BlockedFilter:
        """The smallest halving whose FPR with the keys in it now stays <= max_fpr; every key
        added still answers True. ValueError if the FPR is already above max_fpr or the filter
        cannot halve (sized by bits, an odd block count); MemoryError if the folded filter (not
        the halvings on the way to it) is over max_memory."""

class ClassicFilter(_FixedSize):
    def folded(self, max_fpr: float, *, max_memory: int = 0) -> ClassicFilter:
        """As BlockedFilter.folded, halving every slice."""

class CountingFilter(_Sliced):
    def __init__(self, capacity: int = ..., error_rate: float = 0.001, *, bits: int = ...,
                 hashes: int = ..., counter_bits: int = 4, seed: int | None = ...,
                 integer_hash: IntegerHash | None = ..., concurrent: bool = ..., max_memory: int = ..., huge_pages: bool = ...,
                 populate: bool = ...) -> None: ...
    def remove(self, key: Key) -> bool:
        """Removes one occurrence; False (nothing changed) if the key is certainly absent."""
    def remove_many(self, keys: Keys) -> int: ...
    def count(self, key: Key) -> int: ...
    @property
    def counter_bits(self) -> int: ...

class ScalableFilter(_Persistent):
    SMALL_SET_GROWTH: ClassVar[int]
    LARGE_SET_GROWTH: ClassVar[int]
    def __init__(self, initial_capacity: int = 100, error_rate: float = 0.001, mode: int = 2, *,
                 tightening: float = 0.9, seed: int | None = ...,
                 integer_hash: IntegerHash | None = ..., concurrent: bool = ...,
                 max_memory: int = ..., max_stages: int = 64, scaling: bool = True,
                 huge_pages: bool = ..., layout: StageLayout | None = ...) -> None: ...
    @property
    def layout(self) -> StageLayout:
        """Every stage's block ('partitioned': classic stages); files, copies and pickles keep it."""
    @property
    def probe(self) -> Probe: ...
    @property
    def initial_capacity(self) -> int: ...
    @property
    def mode(self) -> int: ...
    @property
    def stages(self) -> int: ...
    @property
    def full(self) -> bool: ...
    @property
    def max_memory(self) -> int:
        """The cap on all stages' bytes (0: this machine's memory); copies and pickles keep it."""
    @property
    def planned_error_rate(self) -> float:
        """The bound kept: error_rate, plus the share of each stage a union kept beside another of
        its level."""

class WindowedFilter(_Mappable):
    """Keys that expire after a window of `capacity` adds (window=0) or of `window` seconds
    (1 ns, the clock's resolution, to 9e9 s; ValueError outside, as for NaN or a negative one)."""
    def __init__(self, capacity: int, error_rate: float = 0.01, *,
                 window: float | datetime.timedelta = 0, generations: int = 4,
                 refresh: Literal["on_insert", "keep_first_seen"] = "on_insert",
                 hashes: int = ..., seed: int | None = ...,
                 integer_hash: IntegerHash | None = ..., concurrent: bool = ...,
                 max_memory: int = ..., huge_pages: bool = ...,
                 layout: BlockLayout | Literal["auto"] | None = ...,
                 prefer: LayoutPreference | None = ...) -> None:
        """layout: every generation's block, as BlockedFilter's ('auto': the planner's, by
        prefer); files, copies and pickles keep it."""
    def advance(self) -> None:
        """Duration windows: forgets the generations whose time is over."""
    @property
    def window(self) -> float:
        """Seconds; 0 for a window of `capacity` adds."""
    @property
    def generations(self) -> int: ...
    @property
    def refresh(self) -> Literal["on_insert", "keep_first_seen"]: ...
    @property
    def hashes(self) -> int: ...
    @property
    def layout(self) -> BlockLayout: ...
    @property
    def probe(self) -> Probe: ...
    @property
    def epoch(self) -> int: ...

class BloomFilter(BlockedFilter):
    """pybloom-live's BloomFilter: at most `capacity` new keys, then IndexError."""
    count: int
    """The keys added that were new (pybloom-live's; also len())."""
    def __init__(self, capacity: int, error_rate: float = 0.001, *, bits: int = ...,
                 hashes: int = ..., seed: int | None = ...,
                 integer_hash: IntegerHash | None = ..., concurrent: bool = ...,
                 max_memory: int = ..., huge_pages: bool = ..., populate: bool = ...,
                 layout: BlockLayout | Literal["auto"] | None = ...,
                 prefer: LayoutPreference | None = ...) -> None:
        """ValueError for capacity <= 0 or error_rate outside (0, 1), with pybloom's messages."""
    def add(self, key: Key, skip_check: bool = False) -> bool:
        """IndexError('BloomFilter is at capacity') once count == capacity (checked first)."""
    @overload
    def add_many(self, keys: Keys) -> int:
        """As add() one by one: the keys before the one that finds the filter full, then IndexError."""
    @overload
    def add_many(self, keys: Keys, *, present: Literal[True]) -> npt.NDArray[np.bool_]:
        """The same, answering per key in add()'s sense: True where it was already present."""
    @property
    def error_rate(self) -> float:
        """The rate asked for (a loaded file's: the predicted one)."""
    @property
    def predicted_error_rate(self) -> float:
        """The FPR the geometry predicts at `capacity` keys (<= error_rate)."""
    @classmethod
    def fromfile(cls, f: BinaryIO, n: int = ...  # type: ignore[override]
                 ) -> BloomFilter | PybloomLiveBloomFilter:
        """bloomery's file or tofile()'s: a BloomFilter; pybloom-live's own file: a
        PybloomLiveBloomFilter."""

class ScalableBloomFilter(ScalableFilter):
    """pybloom-live's ScalableBloomFilter: a ScalableFilter growing x4 by default."""
    def __init__(self, initial_capacity: int = 100, error_rate: float = 0.001, mode: int = 4, *,
                 tightening: float = 0.9, seed: int | None = ...,
                 integer_hash: IntegerHash | None = ..., concurrent: bool = ...,
                 max_memory: int = ..., max_stages: int = 64, scaling: bool = True,
                 huge_pages: bool = ..., layout: StageLayout | None = ...) -> None: ...
    @property
    def scale(self) -> int:
        """The growth factor (pybloom-live's name for mode)."""
    @property
    def filters(self) -> list[object]:
        """Read-only views of the stages that hold keys (capacity, count, error_rate, num_bits,
        num_slices), oldest first, as pybloom-live lists its filters."""
    def union(self, other: ScalableFilter) -> ScalableBloomFilter: ...
    @classmethod
    def fromfile(cls, f: BinaryIO, n: int = ...  # type: ignore[override]
                 ) -> ScalableBloomFilter | PybloomLiveScalableBloomFilter:
        """bloomery's file: a ScalableBloomFilter; pybloom-live's own file: a
        PybloomLiveScalableBloomFilter."""

class PybloomLiveBloomFilter:
    """pybloom-live 4.0's BloomFilter and its files (its hashes and bits; keys hashed as
    pybloom-live does: a str as UTF-8, anything else as str(key)). Not a BloomFilter."""
    count: int
    capacity: int
    error_rate: float
    num_slices: int
    bits_per_slice: int
    hash_name: str
    def __init__(self, capacity: int, error_rate: float = 0.001) -> None: ...
    @property
    def num_bits(self) -> int: ...
    def add(self, key: object, skip_check: bool = False) -> bool: ...
    def __contains__(self, key: object) -> bool: ...
    def __len__(self) -> int: ...
    def copy(self) -> PybloomLiveBloomFilter: ...
    def union(self, other: PybloomLiveBloomFilter) -> PybloomLiveBloomFilter: ...
    def intersection(self, other: PybloomLiveBloomFilter) -> PybloomLiveBloomFilter: ...
    def __or__(self, other: PybloomLiveBloomFilter) -> PybloomLiveBloomFilter: ...
    def __and__(self, other: PybloomLiveBloomFilter) -> PybloomLiveBloomFilter: ...
    def tobytes(self) -> bytes: ...
    def tofile(self, f: BinaryIO) -> None: ...
    @classmethod
    def fromfile(cls, f: BinaryIO, n: int = ...) -> PybloomLiveBloomFilter: ...
    @classmethod
    def frombytes(cls, data: bytes) -> PybloomLiveBloomFilter: ...

class PybloomLiveScalableBloomFilter:
    """pybloom-live 4.0's ScalableBloomFilter and its files. Not a ScalableBloomFilter."""
    SMALL_SET_GROWTH: ClassVar[int]
    LARGE_SET_GROWTH: ClassVar[int]
    scale: int
    ratio: float
    initial_capacity: int
    error_rate: float
    filters: list[PybloomLiveBloomFilter]
    def __init__(self, initial_capacity: int = 100, error_rate: float = 0.001,
                 mode: int = 4) -> None: ...
    @property
    def capacity(self) -> int: ...
    @property
    def count(self) -> int: ...
    def add(self, key: object) -> bool: ...
    def __contains__(self, key: object) -> bool: ...
    def __len__(self) -> int: ...
    def copy(self) -> PybloomLiveScalableBloomFilter: ...
    def union(self, other: PybloomLiveScalableBloomFilter) -> PybloomLiveScalableBloomFilter: ...
    def __or__(self, other: PybloomLiveScalableBloomFilter) -> PybloomLiveScalableBloomFilter: ...
    def tobytes(self) -> bytes: ...
    def tofile(self, f: BinaryIO) -> None: ...
    @classmethod
    def fromfile(cls, f: BinaryIO, n: int = ...) -> PybloomLiveScalableBloomFilter: ...
    @classmethod
    def frombytes(cls, data: bytes) -> PybloomLiveScalableBloomFilter: ...

class MigratingFilter:
    """Answers from both filters, adds to `new`: from a pybloom-live file to a bloomery filter."""
    new: Any
    old: Any
    def __init__(self, new: Any, old: Any) -> None: ...
    def __contains__(self, key: object) -> bool: ...
    def add(self, key: Any) -> bool:
        """Adds to new; True if new or old already had the key."""

def info(path: Path) -> dict[str, object]:
    """The validated header of a filter file: kind, version, bits, hashes, seed..."""
def info_bytes(data: bytes) -> dict[str, object]: ...
def loads(data: bytes, *, concurrent: bool = ..., max_bytes: int = ...) -> Union[
    BlockedFilter, ClassicFilter, CountingFilter, ScalableFilter, WindowedFilter]: ...
def hash_key(key: Key, seed: int | None = ...,
             integer_hash: IntegerHash = ...) -> tuple[int, int]: ...
def load(path: Path, *, concurrent: bool = ..., max_bytes: int = ..., verify_checksums: bool = ...,
         allow_dirty: bool = ...) -> Union[BlockedFilter, ClassicFilter, CountingFilter,
                                           ScalableFilter, WindowedFilter,
                                           PybloomLiveBloomFilter,
                                           PybloomLiveScalableBloomFilter]:
    """Any kind's file; BloomFilter.tofile()'s (a BloomFilter); pybloom-live's own files
    (PybloomLiveBloomFilter, PybloomLiveScalableBloomFilter: no options)."""
