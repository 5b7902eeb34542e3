// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// keys.cc: the parts of keys.h that run once per batch or chunk, not once per key.
#include "keys.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace bloomery::python {

std::optional<IntegerItems> IntegerItems::Of(const Py_buffer& view) {
  std::string_view format = view.format != nullptr ? view.format : "B";
  if (!format.empty() && (format[0] == '<' || format[0] == '=' || format[0] == '@')) {
    format.remove_prefix(1);
  }
  if (format.size() != 1) return std::nullopt;
  const bool is_unsigned = std::string_view("BHILQN").find(format[0]) != std::string_view::npos;
  const bool is_signed = std::string_view("bhilqn").find(format[0]) != std::string_view::npos;
  const bool known_width =
      view.itemsize == 1 || view.itemsize == 2 || view.itemsize == 4 || view.itemsize == 8;
  if ((!is_unsigned && !is_signed) || !known_width) return std::nullopt;
  return IntegerItems{static_cast<size_t>(view.itemsize), is_signed};
}

[[noreturn]] void ThrowKeyOutOfRange() {
  PyErr_SetString(PyExc_OverflowError, "an int key must be in [0, 2**64 - 1]");
  throw py::error_already_set();
}

namespace {

// `format` without its leading byte-order character, which is returned ('@' if none).
char TakeByteOrder(std::string_view& format) {
  if (!format.empty() && std::string_view("@=<>!").find(format[0]) != std::string_view::npos) {
    const char order = format[0];
    format.remove_prefix(1);
    return order;
  }
  return '@';
}

// The repeat count of a format such as "10s" (1 if none) and its code, or nullopt if `format` is
// not a count and one character.
std::optional<std::pair<size_t, char>> CountAndCode(std::string_view format) {
  size_t digits = 0;
  while (digits < format.size() && format[digits] >= '0' && format[digits] <= '9') ++digits;
  if (format.size() != digits + 1 || digits > 18) return std::nullopt;
  size_t count = digits == 0 ? 1 : 0;
  for (size_t i = 0; i < digits; ++i) count = count * 10 + static_cast<size_t>(format[i] - '0');
  return std::pair{count, format[digits]};
}

// The UTF-8 of the UCS-4 code points `item[0, points)` (native order, or byte-swapped) without
// the trailing NUL points (NumPy's 'U' padding) into `out`, which has room for 4 bytes a point
// (UTF-8 never needs more). One pass from the front, so that the hardware prefetcher follows it.
// Returns the bytes of the key, or nullopt with `bad` set to the position of a point that is not a
// Unicode scalar value (a surrogate, or above U+10FFFF), which UTF-8 cannot encode.
std::optional<size_t> EncodeUcs4(const char* item, size_t points, bool swap, char* out,
                                 size_t& bad) noexcept {
  const auto load = [&](size_t i) {
    uint32_t point;
    std::memcpy(&point, item + i * sizeof point, sizeof point);
    return swap ? __builtin_bswap32(point) : point;
  };
  char* const begin = out;
  char* key_end = out;  // past the last point that is not NUL
  size_t i = 0;
#if defined(__SSE2__)
  // Sixteen ASCII (or NUL) points at a time, packed to bytes (x86 is little-endian).
  const __m128i zero = _mm_setzero_si128();
  const __m128i high = _mm_set1_epi32(~0x7F);
  while (!swap && i + 4 <= points) {
    // 16 points, or the last 8 or 4 with the other lanes 0. `out` has room for 16 bytes: this
    // loop wrote 1 byte a point, and `out` has 4 a point.
    const size_t n = points - i >= 16 ? 16 : points - i >= 8 ? 8 : 4;
    const auto* in = reinterpret_cast<const __m128i*>(item + i * sizeof(uint32_t));
    const __m128i a = _mm_loadu_si128(in);
    const __m128i b = n >= 8 ? _mm_loadu_si128(in + 1) : zero;
    const __m128i c = n == 16 ? _mm_loadu_si128(in + 2) : zero;
    const __m128i d = n == 16 ? _mm_loadu_si128(in + 3) : zero;
    const __m128i all = _mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d));
    if (_mm_movemask_epi8(_mm_cmpeq_epi32(_mm_and_si128(all, high), zero)) != 0xFFFF) break;
    const __m128i bytes = _mm_packus_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), bytes);
    const auto nonzero =
        static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, zero)) ^ 0xFFFF);
    if (nonzero != 0) key_end = out + (32 - std::countl_zero(nonzero));
    out += n;
    i += n;
  }
#endif
  while (i < points) {
    if (i + 4 <= points) {  // four ASCII (or NUL) points at a time: URLs, identifiers, padding
      const uint32_t a = load(i), b = load(i + 1), c = load(i + 2), d = load(i + 3);
      if ((a | b | c | d) < 0x80) {
        out[0] = static_cast<char>(a);
        out[1] = static_cast<char>(b);
        out[2] = static_cast<char>(c);
        out[3] = static_cast<char>(d);
        key_end = d != 0   ? out + 4
                  : c != 0 ? out + 3
                  : b != 0 ? out + 2
                  : a != 0 ? out + 1
                           : key_end;
        out += 4;
        i += 4;
        continue;
      }
    }
    const uint32_t point = load(i);
    if (point < 0x80) {
      *out++ = static_cast<char>(point);
      if (point != 0) key_end = out;
      ++i;
      continue;
    }
    if (point < 0x800) {
      *out++ = static_cast<char>(0xC0 | (point >> 6));
      *out++ = static_cast<char>(0x80 | (point & 0x3F));
    } else if (point < 0x10000) {
      if (point >= 0xD800 && point <= 0xDFFF) {
        bad = i;
        return std::nullopt;
      }
      *out++ = static_cast<char>(0xE0 | (point >> 12));
      *out++ = static_cast<char>(0x80 | ((point >> 6) & 0x3F));
      *out++ = static_cast<char>(0x80 | (point & 0x3F));
    } else if (point <= 0x10FFFF) {
      *out++ = static_cast<char>(0xF0 | (point >> 18));
      *out++ = static_cast<char>(0x80 | ((point >> 12) & 0x3F));
      *out++ = static_cast<char>(0x80 | ((point >> 6) & 0x3F));
      *out++ = static_cast<char>(0x80 | (point & 0x3F));
    } else {
      bad = i;
      return std::nullopt;
    }
    key_end = out;
    ++i;
  }
  return static_cast<size_t>(key_end - begin);
}

}  // namespace

std::optional<KeyItems> KeyItems::Of(const Py_buffer& view) {
  if (const std::optional<IntegerItems> integers = IntegerItems::Of(view)) {
    return KeyItems{Kind::kIntegers, *integers, false};
  }
  std::string_view format = view.format != nullptr ? view.format : "B";
  // A record of one field (a NumPy structured dtype such as [('url', 'S40')]) is that field.
  if (format.starts_with("T{") && format.ends_with(":}")) {
    const std::string_view inner = format.substr(2, format.size() - 4);
    const size_t colon = inner.find(':');
    if (colon == std::string_view::npos || inner.find(':', colon + 1) != std::string_view::npos) {
      return std::nullopt;
    }
    format = inner.substr(0, colon);
  }
  const char order = TakeByteOrder(format);
  const size_t item_size = static_cast<size_t>(view.itemsize);
  if (format == "O") {
    if (item_size != sizeof(PyObject*)) return std::nullopt;
    return KeyItems{Kind::kObjects, {}, false};
  }
  const std::optional<std::pair<size_t, char>> code = CountAndCode(format);
  if (!code) return std::nullopt;
  const auto [count, letter] = *code;
  if (letter == 's' && count == item_size) return KeyItems{Kind::kBytes, {}, false};
  if (letter == 'w' && count * 4 == item_size) {
    constexpr bool kBigEndian = std::endian::native == std::endian::big;
    const bool big = order == '>' || order == '!' || ((order == '@' || order == '=') && kBigEndian);
    return KeyItems{Kind::kUcs4, {}, big != kBigEndian};
  }
  return std::nullopt;
}

void Batch::FromBuffer(PyObject* object) {
  buffer_.emplace(object, PyBUF_RECORDS_RO);
  if (buffer_->ndim != 1) {
    PyErr_SetString(PyExc_ValueError,
                    "a key buffer must be one-dimensional (a 0-d NumPy array is one key: use "
                    "add() or 'in'; a multi-dimensional array's keys are arr.ravel())");
    throw py::error_already_set();
  }
  const std::optional<KeyItems> items = KeyItems::Of(*buffer_);
  if (!items) {
    PyErr_Format(PyExc_TypeError,
                 "a key buffer must hold integers (NumPy uint64 is used in place), fixed-width "
                 "bytes (NumPy 'S', format '<n>s'), UCS-4 strings (NumPy 'U') or objects (str, "
                 "bytes), not format '%s'",
                 buffer_->format != nullptr ? buffer_->format : "B");
    throw py::error_already_set();
  }
  items_ = *items;
  data_ = static_cast<const char*>(buffer_->buf);
  item_size_ = static_cast<size_t>(buffer_->itemsize);
  buffer_keys_ = buffer_->shape != nullptr ? static_cast<size_t>(buffer_->shape[0])
                 : item_size_ != 0         ? static_cast<size_t>(buffer_->len) / item_size_
                                           : 0;
  stride_ =
      buffer_->strides != nullptr ? buffer_->strides[0] : static_cast<ptrdiff_t>(buffer_->itemsize);
  if (items_.kind == KeyItems::Kind::kUcs4) {
    encoded_ = std::make_unique_for_overwrite<char[]>(std::max<size_t>(item_size_, 1));
    return;
  }
  if (items_.kind != KeyItems::Kind::kIntegers) return;
  const IntegerItems& integers = items_.integers;
  if (!integers.is_signed && integers.width == sizeof(uint64_t) &&
      stride_ == static_cast<ptrdiff_t>(sizeof(uint64_t)) &&
      reinterpret_cast<uintptr_t>(data_) % alignof(uint64_t) == 0) {
    in_place_ = true;  // the common case: the caller's memory is the batch
    return;
  }
  if (integers.is_signed) {
    uint64_t key = 0;
    for (size_t i = 0; i < buffer_keys_; ++i) {
      if (!integers.Load(Item(i), key)) ThrowKeyOutOfRange();
    }
  }
}

bool Batch::EncodeChunk(size_t offset, size_t count, const KeyHasher& hasher) noexcept {
  hashes_.resize(count);
  const size_t points = item_size_ / 4;
  constexpr size_t kAhead = 16;  // items; a prefetch hint only, never a read
  for (size_t i = 0; i < count; ++i) {
    if (i + kAhead < count) {
      const char* ahead = Item(offset + i + kAhead);
      for (size_t line = 0; line < item_size_; line += 64) __builtin_prefetch(ahead + line);
    }
    size_t bad = 0;
    const std::optional<size_t> size =
        EncodeUcs4(Item(offset + i), points, items_.swap_ucs4, encoded_.get(), bad);
    if (!size) {
      bad_key_ = offset + i;
      bad_point_ = bad;
      return false;
    }
    hashes_[i] = hasher(std::string_view(encoded_.get(), *size));
  }
  return true;
}

void Batch::ThrowIfBadItem() const {
  if (!bad_key_) return;
  const char* item = Item(*bad_key_);
  uint32_t point;
  std::memcpy(&point, item + bad_point_ * sizeof point, sizeof point);
  if (items_.swap_ucs4) point = __builtin_bswap32(point);
  if (point > 0x10FFFF) {
    PyErr_Format(PyExc_ValueError,
                 "key %zu of the batch holds 0x%x at position %zu, not a Unicode code point",
                 *bad_key_, static_cast<unsigned>(point), bad_point_);
    throw py::error_already_set();
  }
  // The str the item is, for a UnicodeEncodeError as str.encode('utf-8') raises.
  std::vector<uint32_t> points(item_size_ / 4);
  std::memcpy(points.data(), item, points.size() * sizeof(uint32_t));
  if (items_.swap_ucs4) {
    for (uint32_t& p : points) p = __builtin_bswap32(p);
  }
  py::object text = py::reinterpret_steal<py::object>(PyUnicode_FromKindAndData(
      PyUnicode_4BYTE_KIND, points.data(), static_cast<Py_ssize_t>(points.size())));
  if (!text) throw py::error_already_set();
  const std::string reason =
      "surrogates not allowed (key " + std::to_string(*bad_key_) + " of the batch)";
  py::object error = py::reinterpret_steal<py::object>(PyObject_CallFunction(
      PyExc_UnicodeEncodeError, "sOnns", "utf-8", text.ptr(), static_cast<Py_ssize_t>(bad_point_),
      static_cast<Py_ssize_t>(bad_point_ + 1), reason.c_str()));
  if (!error) throw py::error_already_set();
  PyErr_SetObject(PyExc_UnicodeEncodeError, error.ptr());
  throw py::error_already_set();
}

bool Batch::NextObjects(size_t offset, const KeyHasher& hasher) {
  mixed_ = true;  // the keys are hashed here, while each object is in cache and certainly alive
  integers_ = {};
  strings_ = {};
  hashes_.clear();
  if (offset >= buffer_keys_) return false;
  const size_t count = std::min(kChunk, buffer_keys_ - offset);
  hashes_.resize(count);
  for (size_t i = 0; i < count; ++i) {
    PyObject* item = nullptr;
    std::memcpy(&item, Item(offset + i), sizeof item);
    std::string_view key;
    if (item != nullptr && PyUnicode_Check(item)) {
      if (PyUnicode_IS_COMPACT_ASCII(item)) {  // its bytes are its UTF-8
        key = {static_cast<const char*>(PyUnicode_DATA(item)),
               static_cast<size_t>(PyUnicode_GET_LENGTH(item))};
      } else {
        Py_ssize_t size = 0;
        // Cached in the str object: no copy after the first use.
        const char* data = PyUnicode_AsUTF8AndSize(item, &size);
        if (data == nullptr) throw py::error_already_set();
        key = {data, static_cast<size_t>(size)};
      }
    } else if (item != nullptr && PyBytes_Check(item)) {
      key = {PyBytes_AS_STRING(item), static_cast<size_t>(PyBytes_GET_SIZE(item))};
    } else {
      PyErr_Format(PyExc_TypeError,
                   "key %zu of the object array is '%.200s', not str or bytes (an object array's "
                   "keys are strings; pass ints as an integer array)",
                   offset + i, item != nullptr ? Py_TYPE(item)->tp_name : "NULL");
      throw py::error_already_set();
    }
    hashes_[i] = hasher(key);
  }
  return true;
}

bool Batch::NextChunk(PyObject* iterator, const KeyHasher& hasher) {
  keepalive_.clear();
  views_.clear();
  owned_integers_.clear();
  hashes_.clear();
  copies_.clear();
  is_int_.clear();
  bool has_bytes = false;
  bool has_int = false;
  while (keepalive_.size() < kChunk) {
    PyObject* item = PyIter_Next(iterator);
    if (item == nullptr) {
      if (PyErr_Occurred()) throw py::error_already_set();
      break;
    }
    keepalive_.push_back(py::reinterpret_steal<py::object>(item));
    if (PyBytes_CheckExact(item)) {  // the common case, without Key's checks
      views_.emplace_back(PyBytes_AS_STRING(item), static_cast<size_t>(PyBytes_GET_SIZE(item)));
      is_int_.push_back(0);
      owned_integers_.push_back(0);
      has_bytes = true;
      continue;
    }
    const Key key(item);
    is_int_.push_back(key.is_int());
    owned_integers_.push_back(key.integer());
    if (key.is_int()) {
      views_.emplace_back();
      has_int = true;
    } else if (PyUnicode_Check(item) || PyBytes_Check(item)) {
      views_.push_back(key.bytes());  // points into `item`, which keepalive_ holds
      has_bytes = true;
    } else {
      // Another buffer (bytearray, memoryview): copied, since its owner may change it while
      // the GIL is released.
      copies_.emplace_back(key.bytes());
      views_.push_back(copies_.back());
      has_bytes = true;
    }
  }
  if (keepalive_.empty()) return false;
  mixed_ = has_bytes && has_int;
  integers_ = {};
  strings_ = {};
  if (mixed_) {
    // Mixed kinds keep their order (an int and its 8-byte string are the same key): hash each
    // here and give the filter the hashes.
    hashes_.resize(keepalive_.size());
    for (size_t i = 0; i < keepalive_.size(); ++i) {
      hashes_[i] = is_int_[i] != 0 ? hasher(owned_integers_[i]) : hasher(views_[i]);
    }
  } else if (has_int) {
    integers_ = owned_integers_;
  } else {
    strings_ = views_;
  }
  return true;
}

std::optional<size_t> KnownLength(py::handle keys) {
  const PyTypeObject* type = Py_TYPE(keys.ptr());
  const bool has_length =
      (type->tp_as_sequence != nullptr && type->tp_as_sequence->sq_length != nullptr) ||
      (type->tp_as_mapping != nullptr && type->tp_as_mapping->mp_length != nullptr);
  if (!has_length) return std::nullopt;
  const Py_ssize_t length = PyObject_Length(keys.ptr());
  if (length < 0) throw py::error_already_set();
  return static_cast<size_t>(length);
}

}  // namespace bloomery::python
