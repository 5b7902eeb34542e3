// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// keys.h: Python objects as bloomery keys. Key is one key (str, bytes, a buffer, an int or a NumPy
// integer); Batch and ForEachChunk feed the C++ batch calls from a key buffer (integers read in
// place when they can be; NumPy 'S', 'U' and object columns read without a Python object per key)
// or any iterable, a chunk at a time with the GIL released. Key's constructor is here, not in
// keys.cc, so that `in` and add() (hot_calls.h) inline it.
#ifndef BLOOMERY_PYTHON_SRC_KEYS_H_
#define BLOOMERY_PYTHON_SRC_KEYS_H_

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common.h"

namespace bloomery::python {

// The items of an integer buffer (a NumPy integer array, an array.array, a memoryview cast to an
// integer format): their width and signedness, from the buffer's struct format.
struct IntegerItems {
  size_t width = 0;  // bytes: 1, 2, 4 or 8
  bool is_signed = false;

  // The items of `view` (taken with PyBUF_FORMAT) if its format is one native integer, else
  // nullopt.
  static std::optional<IntegerItems> Of(const Py_buffer& view);

  // The item at `item` widened to a uint64_t key in `key`; false if it is negative (no key).
  // memcpy, not a typed load: a buffer's items need not be aligned to their type (a NumPy view at
  // an odd offset is not), and a misaligned load is undefined behaviour.
  [[nodiscard]] bool Load(const char* item, uint64_t& key) const noexcept {
    switch (width) {
      case 1:
        return Widen<int8_t, uint8_t>(item, key);
      case 2:
        return Widen<int16_t, uint16_t>(item, key);
      case 4:
        return Widen<int32_t, uint32_t>(item, key);
      default:
        return Widen<int64_t, uint64_t>(item, key);
    }
  }

 private:
  template <typename Signed, typename Unsigned>
  bool Widen(const char* item, uint64_t& key) const noexcept {
    if (is_signed) {
      Signed value;
      std::memcpy(&value, item, sizeof value);
      key = static_cast<uint64_t>(value);
      return value >= 0;
    }
    Unsigned value;
    std::memcpy(&value, item, sizeof value);
    key = value;
    return true;
  }
};

// OverflowError for an int key outside uint64_t.
[[noreturn]] void ThrowKeyOutOfRange();

// One key from Python: a byte string or a uint64_t. Holds the buffer of a non-bytes buffer object
// while the key is used.
class Key {
 public:
  explicit Key(PyObject* object) {
    if (PyUnicode_Check(object)) {
      Py_ssize_t size = 0;
      // The UTF-8 form is cached in the str object: no copy after the first use.
      const char* data = PyUnicode_AsUTF8AndSize(object, &size);
      if (data == nullptr) throw py::error_already_set();
      bytes_ = {data, static_cast<size_t>(size)};
    } else if (PyBytes_Check(object)) {
      bytes_ = {PyBytes_AS_STRING(object), static_cast<size_t>(PyBytes_GET_SIZE(object))};
    } else if (PyLong_Check(object) || (!PyObject_CheckBuffer(object) && PyIndex_Check(object))) {
      is_int_ = true;
      integer_ = ToUint64(object);
    } else if (PyObject_CheckBuffer(object)) {
      // A NumPy scalar exports its bytes, but is a number: an integer one is the int key (what
      // add_many of its array inserts), any other one (float64, a subclass of float) TypeError
      // as its Python counterpart is.
      const NumpyTypes* numpy = NumpyTypes::Get();
      if (numpy != nullptr && NumpyTypes::Is(object, numpy->generic)) {
        if (!NumpyTypes::Is(object, numpy->integer) || NumpyTypes::Is(object, numpy->timedelta)) {
          PyErr_Format(PyExc_TypeError,
                       "a bloomery key must be str, bytes (or a buffer) or int, not '%.200s'",
                       Py_TYPE(object)->tp_name);
          throw py::error_already_set();
        }
        is_int_ = true;
        integer_ = ToUint64(object);
        return;
      }
      // So is a NumPy integer array holding one int (0-d, or one element): the int key, as
      // add_many/contains_many of it read it and as its scalar is. An array of more is a batch.
      const bool is_array = numpy != nullptr && NumpyTypes::Is(object, numpy->ndarray);
      if (PyObject_GetBuffer(object, &view_,
                             is_array ? PyBUF_FORMAT | PyBUF_C_CONTIGUOUS : PyBUF_C_CONTIGUOUS) !=
          0) {
        throw py::error_already_set();
      }
      has_view_ = true;
      if (const std::optional<IntegerItems> items =
              is_array ? IntegerItems::Of(view_) : std::nullopt) {
        // The destructor does not run when the constructor throws: release the view first.
        const bool one = view_.ndim <= 1 && view_.len == view_.itemsize;
        const bool negative = one && !items->Load(static_cast<const char*>(view_.buf), integer_);
        const Py_ssize_t count = view_.len / view_.itemsize;
        PyBuffer_Release(&view_);
        has_view_ = false;
        if (!one) {
          PyErr_Format(PyExc_TypeError,
                       "a NumPy integer array is one key only when it holds one int (it holds "
                       "%zd): pass its keys to add_many()/contains_many(), or arr.tobytes() as "
                       "one byte-string key",
                       count);
          throw py::error_already_set();
        }
        if (negative) ThrowKeyOutOfRange();
        is_int_ = true;
        return;
      }
      bytes_ = {static_cast<const char*>(view_.buf), static_cast<size_t>(view_.len)};
    } else {
      PyErr_Format(PyExc_TypeError,
                   "a bloomery key must be str, bytes (or a buffer) or int, not '%.200s'",
                   Py_TYPE(object)->tp_name);
      throw py::error_already_set();
    }
  }
  Key(const Key&) = delete;
  Key& operator=(const Key&) = delete;
  ~Key() {
    if (has_view_) PyBuffer_Release(&view_);
  }

  // An int key as uint64_t; negative or above 2^64 - 1 is OverflowError.
  static uint64_t ToUint64(PyObject* object) {
    py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(object));
    if (!index) throw py::error_already_set();
    const unsigned long long value = PyLong_AsUnsignedLongLong(index.ptr());
    if (value == static_cast<unsigned long long>(-1) && PyErr_Occurred()) ThrowKeyOutOfRange();
    return value;
  }

  [[nodiscard]] bool is_int() const noexcept { return is_int_; }
  [[nodiscard]] uint64_t integer() const noexcept { return integer_; }
  [[nodiscard]] std::string_view bytes() const noexcept { return bytes_; }

  // Calls `fn` with the key in the form the C++ API takes.
  template <typename Fn>
  decltype(auto) Visit(Fn&& fn) const {
    return is_int_ ? fn(integer_) : fn(bytes_);
  }
  [[nodiscard]] KeyHash Hash(const KeyHasher& hasher) const noexcept {
    return is_int_ ? hasher(integer_) : hasher(bytes_);
  }

 private:
  std::string_view bytes_;
  uint64_t integer_ = 0;
  bool is_int_ = false;
  bool has_view_ = false;
  Py_buffer view_{};
};

// How the items of a key buffer are keys, from its struct format (KeyItems::Of).
struct KeyItems {
  enum class Kind {
    kIntegers,  // any native integer format: each item is an int key
    kBytes,     // '<n>s' (NumPy 'S<n>'): each item a byte string, trailing NULs stripped
    kUcs4,      // '<n>w' (NumPy 'U<n>'): each item UTF-8 encoded, trailing NUL code points stripped
    kObjects,   // 'O' (NumPy object): each item a pointer to a str or bytes
  };
  Kind kind = Kind::kIntegers;
  IntegerItems integers;   // kIntegers
  bool swap_ucs4 = false;  // kUcs4 in the other byte order than this machine's
  static std::optional<KeyItems> Of(const Py_buffer& view);
};

// The length of the byte string `item[0, size)` without its trailing NULs (NumPy's 'S' padding),
// reading nothing outside it.
[[nodiscard]] inline size_t WithoutTrailingNuls(const char* item, size_t size) noexcept {
  while (size >= sizeof(uint64_t)) {
    uint64_t word;
    std::memcpy(&word, item + size - sizeof word, sizeof word);
    if (word != 0) {  // its last bytes in memory that are 0
      const int zero_bits = std::endian::native == std::endian::little ? std::countl_zero(word)
                                                                       : std::countr_zero(word);
      return size - static_cast<size_t>(zero_bits / 8);
    }
    size -= sizeof word;
  }
  while (size > 0 && item[size - 1] == '\0') --size;
  return size;
}

// A batch of keys ready for a C++ batch call: the items of a 1-D key buffer (integers, an aligned
// NumPy uint64 array used in place; fixed-width bytes, as views into the buffer; UCS-4 strings,
// each encoded to UTF-8 and hashed; the str and bytes of an object array, its pointers walked and
// each key hashed with the GIL held), or a chunk of keys converted from any iterable.
class Batch {
 public:
  // Keys converted per chunk from iterables: big enough that the GIL round trip and the batch
  // pipeline's start-up are noise, small enough that the views stay in cache.
  static constexpr size_t kChunk = 16384;

  // Buffers (1-D NumPy arrays, memoryviews, array.array) are batches of their items. str, bytes
  // and bytearray are refused: iterating them yields characters or small ints, never what the
  // caller meant.
  static bool IsKeyBuffer(PyObject* object) {
    return PyObject_CheckBuffer(object) && !PyBytes_Check(object) && !PyByteArray_Check(object);
  }

  // Reads a key buffer (any strides), kept exported (so that it cannot be resized while the GIL
  // is released) for VisitBuffer and NextObjects. ValueError unless 1-D; TypeError for a format
  // KeyItems does not know; OverflowError for a negative integer item, before any key is used.
  void FromBuffer(PyObject* object);

  [[nodiscard]] bool holds_objects() const noexcept {
    return items_.kind == KeyItems::Kind::kObjects;
  }

  // Calls `fn(span, offset)` over the integer, bytes or UCS-4 buffer FromBuffer read: once, in
  // place, when it holds contiguous aligned uint64_t; else per kChunk keys (integers widened into
  // aligned scratch, since a std::span<const uint64_t> over misaligned memory would itself be
  // undefined behaviour; byte strings as views into the buffer; UCS-4 strings encoded to UTF-8
  // and hashed with `hasher` one at a time, while the encoding is in cache).
  // Calls nothing of Python: runs with the GIL released. Stops before the chunk of a UCS-4 item
  // that UTF-8 cannot encode: ThrowIfBadItem raises for it once the GIL is held again.
  template <typename Fn>
  void VisitBuffer(const KeyHasher& hasher, Fn&& fn) {
    if (in_place_) {
      fn(std::span<const uint64_t>(reinterpret_cast<const uint64_t*>(data_), buffer_keys_),
         size_t{0});
      return;
    }
    for (size_t offset = 0; offset < buffer_keys_; offset += kChunk) {
      const size_t count = std::min(kChunk, buffer_keys_ - offset);
      switch (items_.kind) {
        case KeyItems::Kind::kIntegers:
          owned_integers_.resize(count);
          for (size_t i = 0; i < count; ++i) {
            // FromBuffer refused negative items; one written since by another thread (a race
            // the caller made) becomes a key above 2^63, never undefined behaviour.
            static_cast<void>(items_.integers.Load(Item(offset + i), owned_integers_[i]));
          }
          fn(std::span<const uint64_t>(owned_integers_.data(), count), offset);
          break;
        case KeyItems::Kind::kBytes:
          views_.resize(count);
          for (size_t i = 0; i < count; ++i) {
            const char* item = Item(offset + i);
            views_[i] = {item, WithoutTrailingNuls(item, item_size_)};
          }
          fn(std::span<const std::string_view>(views_.data(), count), offset);
          break;
        default:  // kUcs4
          if (!EncodeChunk(offset, count, hasher)) return;
          fn(std::span<const KeyHash>(hashes_.data(), count), offset);
          break;
      }
    }
  }

  // After VisitBuffer: UnicodeEncodeError (ValueError above U+10FFFF) naming the key and the
  // position of a UCS-4 point that UTF-8 cannot encode, if VisitBuffer stopped at one.
  void ThrowIfBadItem() const;

  // Hashes the str and bytes keys of the next chunk of the object buffer FromBuffer read, from
  // key `offset` on, with the GIL held: each object is read once, while it is in cache, and no
  // reference to it outlives the GIL (other threads may change the array while the C++ call
  // runs). TypeError naming the key's index for an item that is neither. Returns false at the
  // end.
  bool NextObjects(size_t offset, const KeyHasher& hasher);

  // Converts the next chunk of `iterator` (a new reference is kept for every key, so that other
  // threads may change the container while the GIL is released). Returns false at the end.
  bool NextChunk(PyObject* iterator, const KeyHasher& hasher);

  [[nodiscard]] size_t size() const noexcept {
    return mixed_ ? hashes_.size() : (strings_.empty() ? integers_.size() : strings_.size());
  }

  // Calls `fn` with the batch as a span of the type the C++ batch calls take.
  template <typename Fn>
  decltype(auto) Visit(Fn&& fn) const {
    if (mixed_) return fn(std::span<const KeyHash>(hashes_));
    if (!strings_.empty()) return fn(strings_);
    return fn(integers_);
  }

 private:
  // A Py_buffer released on destruction (key buffers used in place).
  struct View : Py_buffer {
    View(PyObject* object, int flags) {
      if (PyObject_GetBuffer(object, this, flags) != 0) throw py::error_already_set();
    }
    View(const View&) = delete;
    ~View() { PyBuffer_Release(this); }
  };

  // The buffer's item `index` (strides may be negative, or 0).
  [[nodiscard]] const char* Item(size_t index) const noexcept {
    return data_ + static_cast<ptrdiff_t>(index) * stride_;
  }

  // The hashes of UCS-4 items [offset, offset + count) as UTF-8 into `hashes_`, each encoded
  // into `encoded_` and hashed while there; false (bad_key_ and bad_point_ set) at a point UTF-8
  // cannot encode.
  bool EncodeChunk(size_t offset, size_t count, const KeyHasher& hasher) noexcept;

  std::optional<View> buffer_;  // a key buffer (FromBuffer)
  KeyItems items_;
  const char* data_ = nullptr;
  ptrdiff_t stride_ = 0;
  size_t item_size_ = 0;
  size_t buffer_keys_ = 0;
  bool in_place_ = false;
  std::unique_ptr<char[]> encoded_;  // room for one UCS-4 item as UTF-8
  std::optional<size_t> bad_key_;
  size_t bad_point_ = 0;
  std::vector<py::object> keepalive_;
  std::vector<std::string_view> views_;
  std::vector<uint64_t> owned_integers_;
  std::vector<KeyHash> hashes_;
  std::vector<char> is_int_;
  std::deque<std::string> copies_;
  std::span<const uint64_t> integers_;
  std::span<const std::string_view> strings_;
  bool mixed_ = false;
};

// Runs `fn` over `keys` (a key buffer, or any iterable of keys) one chunk at a time, with the GIL
// released during each C++ call. `fn(span, offset)` gets the chunk and its first key's index.
template <typename Guard, typename Fn>
void ForEachChunk(py::handle keys, const KeyHasher& hasher, Guard& guard, Fn&& fn) {
  PyObject* object = keys.ptr();
  if (PyUnicode_Check(object) || PyBytes_Check(object) || PyByteArray_Check(object)) {
    PyErr_SetString(PyExc_TypeError,
                    "keys must be an iterable of keys or a key buffer; a single str or bytes "
                    "is one key: use add() or 'in'");
    throw py::error_already_set();
  }
  Batch batch;
  if (Batch::IsKeyBuffer(object)) {
    batch.FromBuffer(object);
    if (batch.holds_objects()) {
      for (size_t offset = 0; batch.NextObjects(offset, hasher); offset += batch.size()) {
        auto unlocked = guard.Unlock();
        batch.Visit([&](auto span) { fn(span, offset); });
      }
      return;
    }
    {
      auto unlocked = guard.Unlock();
      batch.VisitBuffer(hasher, fn);
    }
    batch.ThrowIfBadItem();
    return;
  }
  py::object iterator = py::reinterpret_steal<py::object>(PyObject_GetIter(object));
  if (!iterator) throw py::error_already_set();
  size_t offset = 0;
  while (batch.NextChunk(iterator.ptr(), hasher)) {
    auto unlocked = guard.Unlock();
    batch.Visit([&](auto span) { fn(span, offset); });
    offset += batch.size();
  }
}

// The number of keys `keys` holds when it says so (len()), for sizing a result array up front.
// A container without __len__ has no known length; any exception its __len__ raises (a
// KeyboardInterrupt, a MemoryError) propagates.
std::optional<size_t> KnownLength(py::handle keys);

}  // namespace bloomery::python

#endif  // BLOOMERY_PYTHON_SRC_KEYS_H_
