# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""Columns of strings as key batches: NumPy 'S', 'U' and object arrays, and other buffers of
fixed-width bytes, read by add_many/contains_many/update/remove_many without a Python object per
key. A key is the same key whichever container brought it: a str is its UTF-8 bytes, an 'S'
element its bytes without NumPy's trailing NUL padding, a 'U' element the UTF-8 of its code points
without trailing NULs.

Under .ci/python-sanitizers asan the odd item sizes and empty elements here are read with ASan
watching every byte past an item.
"""
import numpy as np
import pytest

import bloomery

KINDS = {
    "blocked": lambda: bloomery.BlockedFilter(100_000, 0.01),
    "classic": lambda: bloomery.ClassicFilter(100_000, 0.01),
    "counting": lambda: bloomery.CountingFilter(100_000, 0.01),
    "scalable": lambda: bloomery.ScalableFilter(1_000, 0.01),
    "windowed": lambda: bloomery.WindowedFilter(100_000, 0.01),
    "pybloom": lambda: bloomery.BloomFilter(100_000, 0.01),
}
# More than Batch::kChunk (16384) keys, so that a column takes several chunks.
N = 40_000


@pytest.fixture(params=sorted(KINDS))
def make(request):
    return KINDS[request.param]


def urls(n, prefix="https://example.com/"):
    """URL-like str keys of 20-60 bytes (varied lengths, so 'S' and 'U' items are padded)."""
    return [f"{prefix}{'p/' * (i % 15)}{i}" for i in range(n)]


def text_keys():
    """str keys with 2-, 3- and 4-byte UTF-8, an empty one, and an inner NUL (kept: only
    trailing NULs are padding)."""
    # Past 16 ASCII points (read 16 at a time): a non-ASCII point, an inner NUL, exact widths.
    long = ["x" * 16 + "é" + "y" * 20, "p" * 17 + "\0" + "q" * 3, "z" * 32, "w" * 15, "v" * 37]
    return ["héllo", "日本語のキー", "emoji 😀 key", "", "a\0b", "plain", "ÿ", "\U0010ffff"] + long + [
        f"ключ-{i}" if i % 2 else f"https://example.com/{i}/ключ" for i in range(N)
    ]


def filled(make, keys):
    f = make()
    f.add_many(keys)
    return f


def assert_same_key_set(make, column, keys):
    """`column` (any container) and `keys` (a list of str or bytes) are the same keys: the same
    filter bits, each found by the other, and the same per-key answers."""
    by_list = filled(make, keys)
    by_column = filled(make, column)
    assert by_column.tobytes() == by_list.tobytes()
    assert by_list.contains_many(column, count=True) == len(keys)
    assert by_column.contains_many(keys).all()
    probe = filled(make, keys[: len(keys) // 2])
    assert probe.contains_many(column).tolist() == probe.contains_many(keys).tolist()


def test_bytes_arrays_are_the_str_keys(make):
    keys = urls(N)
    column = np.array([k.encode() for k in keys])
    assert column.dtype.kind == "S" and column.dtype.itemsize > 20
    assert_same_key_set(make, column, keys)
    assert_same_key_set(make, column, [k.encode() for k in keys])
    absent = np.array([k.encode() for k in urls(1_000, "https://absent.example.org/")])
    assert filled(make, column).contains_many(absent, count=True) < 100


def test_ucs4_arrays_are_the_utf8_of_their_str(make):
    keys = text_keys()
    column = np.array(keys)
    assert column.dtype.kind == "U"
    assert_same_key_set(make, column, keys)
    assert_same_key_set(make, column, [k.encode() for k in keys])
    # The other byte order reads as the same strings.
    swapped = column.astype(column.dtype.newbyteorder(">" if np.little_endian else "<"))
    assert_same_key_set(make, swapped, keys)


def test_object_arrays_of_str_and_bytes(make):
    keys = text_keys()
    mixed = [k.encode() if i % 3 == 0 else k for i, k in enumerate(keys)]
    column = np.array(mixed, dtype=object)
    assert_same_key_set(make, column, keys)
    assert_same_key_set(make, column, mixed)


def test_update_and_present_take_columns(make):
    keys = urls(N)
    column = np.array(keys)
    f = make()
    f.update(column)
    assert f.tobytes() == filled(make, keys).tobytes()
    g = make()
    first = keys[: N // 2]
    g.add_many(first)
    assert g.add_many(np.array(keys, dtype="S"), present=True)[: N // 2].all()


def test_remove_many_takes_columns():
    keys = urls(N)
    f = bloomery.CountingFilter(100_000, 0.01)
    empty = f.tobytes()
    f.add_many(keys)
    assert f.remove_many(np.array(keys, dtype="S")) == N
    assert f.tobytes() == empty
    f.add_many(np.array(keys, dtype=object))
    assert f.remove_many(np.array(keys)) == N
    assert f.tobytes() == empty


@pytest.mark.parametrize("dtype", ["S", "U", "O"])
def test_strided_views(make, dtype):
    keys = text_keys() if dtype != "S" else urls(N)
    column = np.array(keys if dtype != "S" else [k.encode() for k in keys], dtype=dtype)
    for step in (2, -1, -3):
        view = column[::step]
        assert not view.flags.c_contiguous
        assert_same_key_set(make, view, keys[::step])
    # A column of a 2-D array (stride = a row), and a broadcast view (stride 0).
    table = np.stack([column, column[::-1]], axis=1)
    assert_same_key_set(make, table[:, 1], keys[::-1])
    assert_same_key_set(make, np.broadcast_to(column[:1], (5,)), keys[:1] * 5)


def test_strided_integer_views(make):
    keys = np.arange(N, dtype=np.uint64) * 7919
    for view in (keys[::2], keys[::-1], keys.astype(np.int32)[::-3]):
        assert_same_key_set(make, view, [int(k) for k in view])
    with pytest.raises(OverflowError):
        make().add_many(np.array([1, 2, -1, 3], np.int64)[::-1])


def test_empty_columns(make):
    for column in (np.array([], "S5"), np.array([], "U3"), np.array([], object),
                   np.array([b"ab"], "S2")[:0]):
        f = make()
        assert f.add_many(column) == 0
        assert f.add_many(column, present=True).tolist() == []
        assert f.contains_many(column).tolist() == []
        assert f.contains_many(column, count=True) == 0
        assert f.tobytes() == make().tobytes()


def test_fixed_width_bytes_buffers():
    keys = [b"alpha", b"beta", b"", b"0123456789"]
    records = np.array([(k,) for k in keys], dtype=[("url", "S10")])
    f = bloomery.BlockedFilter(1_000, 0.01)
    view = memoryview(np.array(keys, "S10"))
    assert view.format == "10s"
    assert f.add_many(view) == 4
    assert f.contains_many(keys).all()
    assert memoryview(records).format == "T{10s:url:}"
    g = bloomery.BlockedFilter(1_000, 0.01)
    g.add_many(memoryview(records))  # a record of one bytes field is that field
    assert g.tobytes() == f.tobytes()
    g.add_many(records)
    assert g.tobytes() == f.tobytes()
    assert g.contains_many(memoryview(records)[1:3]).all()
    two_fields = np.zeros(2, dtype=[("url", "S10"), ("id", "S2")])
    with pytest.raises(TypeError, match="fixed-width bytes"):
        g.add_many(two_fields)


@pytest.mark.parametrize("width", [1, 2, 3, 7, 8, 9, 15, 16, 17])
def test_nul_padding_is_not_part_of_a_key(width):
    # Items of every small width, the shortest and longest keys and keys that are all padding.
    keys = [b"", b"x" * width, b"y" * (width - 1), b"\0z"[:width], b"q" * (width // 2)]
    column = np.array(keys, f"S{width}")
    assert column[0] == b"" and column.tolist() == [k.rstrip(b"\0") for k in keys]
    f = bloomery.BlockedFilter(1_000, 0.001)
    f.add_many(column)
    assert f.contains_many([k.rstrip(b"\0") for k in keys]).all()
    assert f.tobytes() == filled(lambda: bloomery.BlockedFilter(1_000, 0.001),
                                 [k.rstrip(b"\0") for k in keys]).tobytes()
    u = np.array([k.decode() for k in keys], f"U{width}")
    g = bloomery.BlockedFilter(1_000, 0.001)
    g.add_many(u)
    assert g.tobytes() == f.tobytes()


def test_trailing_nuls_are_padding_inner_nuls_are_not():
    f = bloomery.BlockedFilter(1_000, 0.0001)
    f.add_many(np.array([b"ab\0\0", b"a\0b"], "S6"))
    assert f.contains_many([b"ab", b"a\0b"]).all()
    assert f.contains_many([b"ab\0", b"ab\0\0", b"a\0b\0"]).tolist() == [False, False, False]
    # An element taken out of the array (a NumPy scalar, a bytes or str) is the same key.
    assert np.array([b"ab"], "S6")[0] in f and np.array(["ab"], "U6")[0] in f
    g = bloomery.BlockedFilter(1_000, 0.0001)
    g.add_many(np.array(["ab\0", "c\0d"], "U5"))
    assert g.contains_many(["ab", "c\0d"]).all()
    assert not g.contains_many(["ab\0"]).any()


def test_object_elements_that_are_not_strings_are_refused_by_index(make):
    for bad, name in ((7, "int"), (None, "NoneType"), (3.5, "float"), (bytearray(b"x"), "bytearray")):
        column = np.array(["a", b"b", "c", bad, "e"], dtype=object)
        with pytest.raises(TypeError, match=rf"key 3 of the object array is '{name}'"):
            make().add_many(column)
        with pytest.raises(TypeError, match="key 3 "):
            make().contains_many(column)
    late = np.array(urls(N), dtype=object)
    late[N - 5] = 12
    with pytest.raises(TypeError, match=f"key {N - 5} "):
        make().contains_many(late)


def test_invalid_code_points_are_refused_by_index(make):
    column = np.array(["ok", "a\ud800b", "fine"], "U4")
    with pytest.raises(UnicodeEncodeError, match="surrogates not allowed .key 1 of the batch"):
        make().add_many(column)
    with pytest.raises(UnicodeEncodeError, match="position 1"):
        make().contains_many(column)
    late = np.array(["a" * 30, "b" * 20 + "\udfff"])
    with pytest.raises(UnicodeEncodeError, match="position 20: surrogates not allowed .key 1 "):
        make().contains_many(late)
    # As str.encode raises for the same key in a list or an object array.
    with pytest.raises(UnicodeEncodeError):
        make().add_many(np.array(["ok", "a\ud800b"], dtype=object))
    beyond = np.array([0x61, 0x110000, 0, 0], np.uint32).view("U2")
    with pytest.raises(ValueError, match="key 0 of the batch holds 0x110000 at position 1"):
        make().add_many(beyond)


def test_multidimensional_columns_are_refused():
    f = bloomery.BlockedFilter(1_000, 0.01)
    for table in (np.array([[b"a", b"b"]]), np.array([["a", "b"]]), np.zeros((2, 2), object)):
        with pytest.raises(ValueError, match=r"one-dimensional.*ravel"):
            f.add_many(table)
    f.add_many(np.array([["a", "b"], ["c", "d"]]).ravel())
    assert f.contains_many(["a", "b", "c", "d"]).all()


def test_a_column_is_not_a_list_of_its_elements_copy():
    # The batch reads the array's memory: keys changed in the array after a call are new keys.
    column = np.array(urls(100))
    f = bloomery.BlockedFilter(1_000, 0.001)
    f.add_many(column)
    column[0] = "https://changed.example.com/"
    assert f.contains_many(column).tolist() == [False] + [True] * 99


@pytest.mark.parametrize("dtype", ["S", "U", "O"])
def test_pybloom_capacity_stops_a_column_where_add_would(dtype):
    # Past capacity, bloomery.BloomFilter.add_many slices the column's buffer into pieces.
    letters = [chr(ord("a") + i) for i in range(26)]
    b = bloomery.BloomFilter(capacity=10, error_rate=0.001)
    with pytest.raises(IndexError):
        b.add_many(np.array(letters, dtype=dtype))
    assert b.count == 10
    assert b.contains_many(letters[:10]).all()
