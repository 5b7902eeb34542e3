// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// module.cc: bloomery._native, the C++ filters as Python classes (pybind11).
//
// One template, PyFilter<Filter>, binds every kind, so a kind is a row in PYBIND11_MODULE, not a
// copy of the binding. What the binding adds to the C++ contract:
//   - Keys are str (its UTF-8 bytes), bytes and other contiguous buffers, or int (a uint64_t,
//     hashed as its 8 little-endian bytes as in C++); a NumPy integer, or a NumPy integer array
//     holding one, is that int. Anything else is TypeError: Python's hash() is salted per
//     process, and a filter's answers must not depend on the process.
//   - add() returns True when the key was ALREADY present (pybloom-live's meaning), the negation of
//     C++ Insert, which answers "was new".
//   - Batch calls release the GIL. A single-writer filter (concurrent=False) is then guarded by a
//     lock that single-key calls take only while a batch is running, so Python threads can never
//     break its single-writer contract. A concurrent filter's batches share that lock (they run
//     together); whole-filter calls (clear, save, tobytes, copy, pickle, union...) of either kind
//     take it exclusively, waiting for running batches with the GIL released.
//   - absl::Status errors become exceptions: InvalidArgument on creation ValueError (with the C++
//     message), NotFound FileNotFoundError, PermissionDenied PermissionError, ResourceExhausted
//     MemoryError, a file that is not a valid filter bloomery.FormatError (a ValueError).
#include <Python.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bloomery/bloomery.h"

namespace py = pybind11;

namespace bloomery::python {
namespace {

// Raised for a file or byte string that is not a valid filter of the expected kind.
PyObject* format_error = nullptr;
// Raised when a scalable filter refuses a new key (it reached a memory or stage limit).
PyObject* full_error = nullptr;

// Where a failed absl::Status surfaces in Python. `reading` says the status came from reading a
// file or byte string, where InvalidArgument and FailedPrecondition describe the data, not the
// caller's arguments.
[[noreturn]] void Throw(const absl::Status& status, bool reading = false) {
  const std::string message(status.message());
  PyObject* type = PyExc_ValueError;
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      type = PyExc_FileNotFoundError;
      break;
    case absl::StatusCode::kPermissionDenied:
      type = PyExc_PermissionError;
      break;
    case absl::StatusCode::kResourceExhausted:
      type = PyExc_MemoryError;
      break;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
      type = reading ? format_error : PyExc_ValueError;
      break;
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kOutOfRange:
      type = format_error;
      break;
    default:
      type = PyExc_OSError;
      break;
  }
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

// Runs `fn` (file I/O, no Python objects) with the GIL released. Statuses are turned into
// exceptions after it returns: raising needs the GIL.
template <typename Fn>
auto WithoutGil(Fn&& fn) {
  py::gil_scoped_release release;
  return fn();
}

template <typename T>
T OrThrow(absl::StatusOr<T> value, bool reading = false) {
  if (!value.ok()) Throw(value.status(), reading);
  return *std::move(value);
}

void OrThrow(const absl::Status& status, bool reading = false) {
  if (!status.ok()) Throw(status, reading);
}

// NumPy's scalar types, looked up once NumPy is imported (until then no NumPy scalar exists).
struct NumpyTypes {
  PyObject* generic = nullptr;    // numpy.generic, every NumPy scalar
  PyObject* integer = nullptr;    // numpy.integer
  PyObject* timedelta = nullptr;  // numpy.timedelta64, an integer subclass counted in its unit
  PyObject* ndarray = nullptr;    // numpy.ndarray

  // The types, or nullptr if NumPy is not imported. Called with the GIL held.
  static const NumpyTypes* Get() {
    static NumpyTypes types;
    if (types.generic == nullptr) {
      static PyObject* name = PyUnicode_InternFromString("numpy");
      py::object numpy = py::reinterpret_steal<py::object>(PyImport_GetModule(name));
      if (!numpy) {
        PyErr_Clear();
        return nullptr;
      }
      // References kept for the life of the process, as the module itself is.
      types.integer = py::object(numpy.attr("integer")).release().ptr();
      types.timedelta = py::object(numpy.attr("timedelta64")).release().ptr();
      types.ndarray = py::object(numpy.attr("ndarray")).release().ptr();
      types.generic = py::object(numpy.attr("generic")).release().ptr();
    }
    return &types;
  }

  // Whether `object` is an instance of `type` (one of the above); never raises.
  static bool Is(PyObject* object, PyObject* type) {
    return PyObject_TypeCheck(object, reinterpret_cast<PyTypeObject*>(type));
  }
};

// A path argument (str, bytes or os.PathLike) as the bytes the OS takes. An embedded NUL is
// ValueError, as open() gives: the C calls would silently cut the path there.
std::string FsPath(py::handle path) {
  PyObject* bytes = nullptr;
  if (PyUnicode_FSConverter(path.ptr(), &bytes) == 0) throw py::error_already_set();
  const py::object owner = py::reinterpret_steal<py::object>(bytes);
  return {PyBytes_AS_STRING(bytes), static_cast<size_t>(PyBytes_GET_SIZE(bytes))};
}

// save()'s hold on the file it replaces: the update lock the CLI takes (LockForUpdate, file.h),
// failing fast. A read-write mapping holds that lock shared for its whole life, in this process
// or another (an flock belongs to an open file description, so this process's own mappings
// conflict too), and a save's rename over it would leave the mapping writing to a file no path
// names. Only an existing regular file is locked: a new file has no mapping (LockForUpdate
// would lock its directory, failing saves of other new files beside it), and Save refuses
// what is not a regular file with its own message.
std::optional<FileLock> LockForSave(const std::string& path) {
  struct stat target {};
  if (stat(path.c_str(), &target) != 0 || !S_ISREG(target.st_mode)) return std::nullopt;
  absl::StatusOr<FileLock> lock =
      WithoutGil([&] { return LockForUpdate(path, LockWait::kFailFast); });
  if (lock.ok()) return *std::move(lock);
  if (lock.status().code() != absl::StatusCode::kUnavailable) Throw(lock.status());
  const std::string message =
      "save(): " + std::string(lock.status().message()) +
      ": a read-write map() of the file (in this process or that one) or an update holds it, "
      "and replacing the file would lose the mapping's adds; flush() the mapping instead, or "
      "save once it is closed";
  PyErr_SetString(PyExc_BlockingIOError, message.c_str());
  throw py::error_already_set();
}

// The items of an integer buffer (a NumPy integer array, an array.array, a memoryview cast to an
// integer format): their width and signedness, from the buffer's struct format.
struct IntegerItems {
  size_t width = 0;  // bytes: 1, 2, 4 or 8
  bool is_signed = false;

  // The items of `view` (taken with PyBUF_FORMAT) if its format is one native integer, else
  // nullopt.
  static std::optional<IntegerItems> Of(const Py_buffer& view) {
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

[[noreturn]] void ThrowKeyOutOfRange() {
  PyErr_SetString(PyExc_OverflowError, "an int key must be in [0, 2**64 - 1]");
  throw py::error_already_set();
}

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

// A batch of keys ready for a C++ batch call: uint64_t keys from an integer buffer (an aligned
// NumPy uint64 array is used in place), or a chunk of keys converted from any iterable.
class Batch {
 public:
  // Keys converted per chunk from iterables: big enough that the GIL round trip and the batch
  // pipeline's start-up are noise, small enough that the views stay in cache.
  static constexpr size_t kChunk = 16384;

  // Integer buffers (1-D, any integer type) are batches of int keys. str, bytes and bytearray are
  // refused: iterating them yields characters or small ints, never what the caller meant.
  static bool IsIntegerBuffer(PyObject* object) {
    return PyObject_CheckBuffer(object) && !PyBytes_Check(object) && !PyByteArray_Check(object);
  }

  // Reads an integer buffer, kept exported (so that it cannot be resized while the GIL is
  // released) for VisitBuffer. TypeError for other formats; OverflowError for a negative item,
  // before any key is used.
  void FromBuffer(PyObject* object) {
    buffer_.emplace(object, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS);
    if (buffer_->ndim != 1) {
      PyErr_SetString(PyExc_ValueError,
                      "a key buffer must be one-dimensional (a 0-d NumPy array is one key: use "
                      "add() or 'in')");
      throw py::error_already_set();
    }
    const std::optional<IntegerItems> items = IntegerItems::Of(*buffer_);
    if (!items) {
      PyErr_Format(PyExc_TypeError,
                   "a key buffer must hold integers (NumPy uint64 is used in place), not format "
                   "'%s'",
                   buffer_->format != nullptr ? buffer_->format : "B");
      throw py::error_already_set();
    }
    items_ = *items;
    buffer_keys_ = static_cast<size_t>(buffer_->len) / items_.width;
    const char* data = static_cast<const char*>(buffer_->buf);
    if (!items_.is_signed && items_.width == sizeof(uint64_t) &&
        reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) == 0) {
      in_place_ = true;  // the common case: the caller's memory is the batch
      return;
    }
    if (items_.is_signed) {
      uint64_t key = 0;
      for (size_t i = 0; i < buffer_keys_; ++i) {
        if (!items_.Load(data + i * items_.width, key)) ThrowKeyOutOfRange();
      }
    }
  }

  // Calls `fn(span, offset)` over the integer buffer FromBuffer read: once, in place, when it
  // holds aligned uint64_t; else per kChunk keys widened into aligned scratch, since a
  // std::span<const uint64_t> over misaligned memory (a NumPy view at an odd offset, a
  // memoryview cast of a slice) would itself be undefined behaviour. Calls nothing of Python:
  // runs with the GIL released.
  template <typename Fn>
  void VisitBuffer(Fn&& fn) {
    const char* data = static_cast<const char*>(buffer_->buf);
    if (in_place_) {
      fn(std::span<const uint64_t>(reinterpret_cast<const uint64_t*>(data), buffer_keys_),
         size_t{0});
      return;
    }
    owned_integers_.resize(std::min(buffer_keys_, kChunk));
    for (size_t offset = 0; offset < buffer_keys_; offset += kChunk) {
      const size_t count = std::min(kChunk, buffer_keys_ - offset);
      for (size_t i = 0; i < count; ++i) {
        // FromBuffer refused negative items; one written since by another thread (a race the
        // caller made) becomes a key above 2^63, never undefined behaviour.
        static_cast<void>(items_.Load(data + (offset + i) * items_.width, owned_integers_[i]));
      }
      fn(std::span<const uint64_t>(owned_integers_.data(), count), offset);
    }
  }

  // Converts the next chunk of `iterator` (a new reference is kept for every key, so that other
  // threads may change the container while the GIL is released). Returns false at the end.
  bool NextChunk(PyObject* iterator, const KeyHasher& hasher) {
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
  // A Py_buffer released on destruction (integer buffers used in place).
  struct View : Py_buffer {
    View(PyObject* object, int flags) {
      if (PyObject_GetBuffer(object, this, flags) != 0) throw py::error_already_set();
    }
    View(const View&) = delete;
    ~View() { PyBuffer_Release(this); }
  };

  std::optional<View> buffer_;  // an integer buffer (FromBuffer)
  IntegerItems items_;
  size_t buffer_keys_ = 0;
  bool in_place_ = false;
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

// Runs `fn` over `keys` (an integer buffer, or any iterable of keys) one chunk at a time, with the
// GIL released during each C++ call. `fn(span, offset)` gets the chunk and its first key's index.
template <typename Guard, typename Fn>
void ForEachChunk(py::handle keys, const KeyHasher& hasher, Guard& guard, Fn&& fn) {
  PyObject* object = keys.ptr();
  if (PyUnicode_Check(object) || PyBytes_Check(object) || PyByteArray_Check(object)) {
    PyErr_SetString(PyExc_TypeError,
                    "keys must be an iterable of keys or an integer buffer; a single str or bytes "
                    "is one key: use add() or 'in'");
    throw py::error_already_set();
  }
  Batch batch;
  if (Batch::IsIntegerBuffer(object)) {
    batch.FromBuffer(object);
    auto unlocked = guard.Unlock();
    batch.VisitBuffer(fn);
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

// Is the filter kind's C++ type able to do X? (compile-time rows of the binding)
template <typename F>
concept HasIntersect = requires(F f, const F& g) {
  f.IntersectWith(g);
};
template <typename F>
concept HasMap = requires(const std::string& p) {
  F::Map(p, MapMode::kReadOnly, LoadOptions{});
};
template <typename F>
concept IsScalable = std::is_same_v<F, ScalableFilter>;

// A shared/exclusive lock that prefers the exclusive side: once a whole-filter call (save, clear,
// copy...) waits, new batches wait behind it, so a stream of overlapping batches from many threads
// cannot starve it. std::shared_mutex (glibc's rwlock) prefers readers and would.
class BatchLock {
 public:
  void lock_shared() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return !exclusive_ && exclusive_waiting_ == 0; });
    ++shared_;
  }
  void unlock_shared() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--shared_ == 0) changed_.notify_all();
  }
  void lock() {
    std::unique_lock<std::mutex> lock(mutex_);
    ++exclusive_waiting_;
    changed_.wait(lock, [&] { return !exclusive_ && shared_ == 0; });
    --exclusive_waiting_;
    exclusive_ = true;
  }
  void unlock() {
    std::lock_guard<std::mutex> lock(mutex_);
    exclusive_ = false;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int shared_ = 0;
  int exclusive_waiting_ = 0;
  bool exclusive_ = false;
};

// A filter with its Python-side thread guard.
template <typename Filter>
class PyFilter {
 public:
  explicit PyFilter(Filter filter) : filter_(std::move(filter)) {}

  Filter& filter() noexcept { return filter_; }
  const Filter& filter() const noexcept { return filter_; }

  // bloomery.BloomFilter's `count` (pybloom-live's: keys added that were new), kept here so that
  // its add (PybloomAddMethod) reads and bumps it without a Python attribute; 0 for other classes.
  uint64_t pybloom_count = 0;

  // Runs each C++ batch call (GIL released) under `lock_`: exclusively on a single-writer filter,
  // shared on a concurrent one, so that concurrent batches overlap each other but never a
  // whole-filter call. All changes of `batches_` happen with the GIL held, and so does every
  // single-key and whole-filter call: a call that sees no batch running cannot have one start
  // under it.
  class Guard {
   public:
    explicit Guard(PyFilter& owner) : owner_(owner) {}
    // For the duration of a C++ batch call: the GIL released, `lock_` held.
    class Unlocked {
     public:
      explicit Unlocked(PyFilter& owner) : owner_(owner) {
        ++owner_.batches_;
        release_.emplace();
        if (owner_.filter_.concurrent()) {
          shared_ = std::shared_lock<BatchLock>(owner_.lock_);
        } else {
          exclusive_ = std::unique_lock<BatchLock>(owner_.lock_);
        }
      }
      Unlocked(const Unlocked&) = delete;
      ~Unlocked() {
        if (shared_.owns_lock()) shared_.unlock();
        if (exclusive_.owns_lock()) exclusive_.unlock();
        release_.reset();
        --owner_.batches_;
      }

     private:
      PyFilter& owner_;
      std::optional<py::gil_scoped_release> release_;
      std::shared_lock<BatchLock> shared_;
      std::unique_lock<BatchLock> exclusive_;
    };
    [[nodiscard]] Unlocked Unlock() { return Unlocked(owner_); }

   private:
    PyFilter& owner_;
  };

  // Runs a single-key call: directly when no batch is running (the common case costs one load)
  // or when the filter is concurrent (a single key is a small batch, and whole-filter calls hold
  // the GIL), else waits for the batch with the GIL released.
  template <typename Fn>
  decltype(auto) Single(Fn&& fn) {
    if (batches_ == 0 || filter_.concurrent()) return fn(filter_);
    std::unique_lock<BatchLock> lock = WaitForBatches();
    return fn(filter_);
  }

  // Runs a whole-filter call (save, union, clear...) with no batch running on it, concurrent or
  // not, with the GIL held (`fn` may touch Python objects).
  template <typename Fn>
  decltype(auto) Exclusive(Fn&& fn) {
    if (batches_ == 0) return fn(filter_);
    std::unique_lock<BatchLock> lock = WaitForBatches();
    return fn(filter_);
  }

  // Exclusive() over two filters at once (a merge reads `other` whole). Waits for the batches of
  // both, taking the two locks in address order so that a |= b and b |= a cannot deadlock.
  template <typename Fn>
  decltype(auto) ExclusiveWith(PyFilter& other, Fn&& fn) {
    if (&other == this) return Exclusive(std::forward<Fn>(fn));
    if (batches_ == 0 && other.batches_ == 0) return fn(filter_);
    PyFilter* first = std::less<PyFilter*>()(this, &other) ? this : &other;
    PyFilter* second = first == this ? &other : this;
    std::unique_lock<BatchLock> first_lock;
    std::unique_lock<BatchLock> second_lock;
    {
      py::gil_scoped_release release;
      first_lock = std::unique_lock(first->lock_);
      second_lock = std::unique_lock(second->lock_);
    }
    return fn(filter_);
  }

  // For a writable mapping: the file it maps, to refuse a save() that would replace it.
  void set_mapped_file(dev_t device, ino_t inode) { mapped_file_ = {device, inode}; }
  [[nodiscard]] std::optional<std::pair<dev_t, ino_t>> mapped_file() const { return mapped_file_; }

 private:
  // Takes the lock with the GIL released, then returns holding both. No deadlock: a batch
  // releases the GIL before it takes the lock and the lock before it retakes the GIL, so no
  // thread ever waits for the lock while holding the GIL.
  std::unique_lock<BatchLock> WaitForBatches() {
    py::gil_scoped_release release;
    return std::unique_lock<BatchLock>(lock_);
  }

  Filter filter_;
  BatchLock lock_;
  int batches_ = 0;  // changed only with the GIL held
  std::optional<std::pair<dev_t, ino_t>> mapped_file_;
};

// Whether the instance `self` (a PyFilter<Filter> or a subclass) holds a filter: false for one
// made by cls.__new__(cls) whose __init__ never ran.
template <typename Filter>
bool IsInitialised(PyObject* self) {
  auto* instance = reinterpret_cast<py::detail::instance*>(self);
  const py::detail::value_and_holder holder = instance->get_value_and_holder(
      py::detail::get_type_info(typeid(PyFilter<Filter>)), /*throw_if_missing=*/false);
  return holder && holder.holder_constructed();
}

}  // namespace
}  // namespace bloomery::python

namespace pybind11::detail {
// Every bound method takes its filter through this caster: an instance whose __init__ never ran
// is TypeError here. pybind11's own caster would allocate an uninitialised value for it and call
// the method on that.
template <typename Filter>
class type_caster<bloomery::python::PyFilter<Filter>>
    : public type_caster_base<bloomery::python::PyFilter<Filter>> {
 public:
  bool load(handle src, bool convert) {
    if (isinstance<bloomery::python::PyFilter<Filter>>(src) &&
        !bloomery::python::IsInitialised<Filter>(src.ptr())) {
      throw type_error("the filter was not initialised (__init__ was not called)");
    }
    return type_caster_base<bloomery::python::PyFilter<Filter>>::load(src, convert);
  }
};
}  // namespace pybind11::detail

namespace bloomery::python {
namespace {

template <typename Filter>
py::bytes ToBytes(const Filter& filter) {
  const std::string data = OrThrow(filter.SaveToBytes());
  return py::bytes(data);
}

template <typename Filter>
Filter FromBytes(std::string_view data, const LoadOptions& options) {
  return OrThrow(WithoutGil([&] { return Filter::LoadFromBytes(data, options); }),
                 /*reading=*/true);
}

LoadOptions MakeLoadOptions(bool concurrent, uint64_t max_bytes, bool verify_checksums,
                            bool allow_dirty) {
  return LoadOptions{.max_bytes = max_bytes,
                     .verify_checksums = verify_checksums,
                     .allow_dirty = allow_dirty,
                     .concurrent = concurrent};
}

// integer_hash: "xxh3" or "mix" (IntegerHash, key.h; IntegerHashName's names).
IntegerHash ParseIntegerHash(const std::string& name) {
  if (name == IntegerHashName(IntegerHash::kXxh3)) return IntegerHash::kXxh3;
  if (name == IntegerHashName(IntegerHash::kMix)) return IntegerHash::kMix;
  throw py::value_error("integer_hash must be 'xxh3' or 'mix'");
}

// The constructor arguments every kind takes, into the fields of the same names that every
// kind's options struct has (FilterOptions, ScalableOptions, WindowedOptions).
template <typename Options>
void SetSharedOptions(Options& options, double error_rate, std::optional<uint64_t> seed,
                      const std::string& integer_hash, bool concurrent, uint64_t max_memory,
                      bool huge_pages) {
  options.fpr = error_rate;
  options.seed = seed.value_or(kDefaultSeed);
  options.integer_hash = ParseIntegerHash(integer_hash);
  options.concurrent = concurrent;
  options.max_memory_bytes = max_memory;
  options.huge_pages = huge_pages ? HugePages::kAuto : HugePages::kNever;
}

FilterOptions MakeOptions(uint64_t capacity, double error_rate, uint64_t bits, uint32_t hashes,
                          std::optional<uint64_t> seed, const std::string& integer_hash,
                          bool concurrent, uint64_t max_memory, bool huge_pages, bool populate) {
  FilterOptions options{.capacity = capacity, .bits = bits, .hashes = hashes, .populate = populate};
  SetSharedOptions(options, error_rate, seed, integer_hash, concurrent, max_memory, huge_pages);
  return options;
}

// add()'s answer: pybloom's "already present", and for a scalable filter a refused key raises.
template <typename Result>
bool AlreadyPresent(Result result) {
  if constexpr (std::is_same_v<Result, InsertResult>) {
    if (result == InsertResult::kRefused) {
      PyErr_SetString(
          full_error,
          "the scalable filter is full (a memory or stage limit): the key was not added");
      throw py::error_already_set();
    }
    return result == InsertResult::kPresent;
  } else {
    return !result;
  }
}

// Keys that were new in a batch insert; raises after the batch if a scalable filter refused some.
template <typename Counts>
size_t NewKeys(Counts counts, size_t& refused) {
  if constexpr (std::is_same_v<Counts, InsertCounts>) {
    refused += counts.refused;
    return counts.added;
  } else {
    return counts;
  }
}

template <typename Filter>
std::unique_ptr<PyFilter<Filter>> Wrap(Filter filter) {
  return std::make_unique<PyFilter<Filter>>(std::move(filter));
}

// What a copy (copy(), copy.copy, pickle, union) keeps that the file format does not carry, as
// the options it is loaded with: the mode, and a scalable filter's memory cap and huge-page
// choice, which its later stages are created under (the fixed-size kinds use theirs only at
// creation).
template <typename Filter>
LoadOptions CopyOptions(const Filter& filter) {
  LoadOptions options = MakeLoadOptions(filter.concurrent(), 0, true, false);
  if constexpr (IsScalable<Filter>) {
    options.max_bytes = filter.options().max_memory_bytes;
    options.huge_pages = filter.options().huge_pages;
  }
  return options;
}

// An independent copy, with CopyOptions, through the file format (its bytes are validated).
template <typename Filter>
std::unique_ptr<PyFilter<Filter>> Copy(PyFilter<Filter>& self) {
  const LoadOptions options = CopyOptions(self.filter());
  py::bytes data = self.Exclusive([](Filter& f) { return ToBytes(f); });
  return Wrap(FromBytes<Filter>(std::string_view(data), options));
}

// A merge (UnionWith, IntersectWith) as Python offers it: in place (|=, union_update) or into a
// copy (|, union).
template <typename Filter, typename Merge>
PyFilter<Filter>& MergeInto(PyFilter<Filter>& self, PyFilter<Filter>& other, Merge merge) {
  OrThrow(self.ExclusiveWith(other, [&](Filter& f) { return merge(f, other.filter()); }));
  return self;
}
template <typename Filter, typename Merge>
std::unique_ptr<PyFilter<Filter>> Merged(PyFilter<Filter>& self, PyFilter<Filter>& other,
                                         Merge merge) {
  auto result = Copy(self);
  OrThrow(other.Exclusive([&](Filter& f) { return merge(result->filter(), f); }));
  return result;
}

// add_many() and update(): every key inserted, in order; raises after the batch if a scalable
// filter refused some. Returns how many were new.
template <typename Filter>
size_t InsertAll(PyFilter<Filter>& self, py::handle keys) {
  typename PyFilter<Filter>::Guard guard(self);
  size_t added = 0;
  size_t refused = 0;
  ForEachChunk(keys, self.filter().hasher(), guard, [&](auto span, size_t) {
    added += NewKeys(self.filter().InsertMany(span), refused);
  });
  if (refused > 0) {
    PyErr_Format(full_error, "the scalable filter is full: %zu new keys were not added", refused);
    throw py::error_already_set();
  }
  return added;
}

// The single-key hot calls, `key in filter` and add(key), bypass pybind11's dispatch: `in` is the
// type's sq_contains slot and add a METH_O method, called by CPython directly. Through pybind11
// (slot wrapper or method lookup, argument loader, result caster) each cost ~80 ns more; a URL
// lookup in an L2-sized filter took ~130 ns that way and ~25 ns this way.

// The C++ object of a filter instance, or nullptr (TypeError set) if __init__ never ran.
template <typename Filter>
PyFilter<Filter>* Unwrap(PyObject* self) {
  auto* instance = reinterpret_cast<py::detail::instance*>(self);
  if (instance->simple_layout) {  // always, but for multiple inheritance from pybind11 classes
    if (instance->simple_holder_constructed) {
      return static_cast<PyFilter<Filter>*>(instance->simple_value_holder[0]);
    }
  } else if (IsInitialised<Filter>(self)) {
    return static_cast<PyFilter<Filter>*>(instance->nonsimple.values_and_holders[0]);
  }
  PyErr_SetString(PyExc_TypeError, "the filter was not initialised (__init__ was not called)");
  return nullptr;
}

template <typename Filter>
int ContainsSlot(PyObject* self, PyObject* key) {
  PyFilter<Filter>* wrapper = Unwrap<Filter>(self);
  if (wrapper == nullptr) return -1;
  try {
    const Key k(key);
    return wrapper->Single(
               [&](Filter& f) { return k.Visit([&](auto v) { return f.MayContain(v); }); })
               ? 1
               : 0;
  } catch (py::error_already_set& error) {
    error.restore();
    return -1;
  }
}

// Adds `key` (a Python object) to the filter: 1 if it was already present, 0 if it was new, -1
// with the Python error set (a key that is not one). The one body of add and pybloom's add.
template <typename Filter>
int AddKey(PyFilter<Filter>& wrapper, PyObject* key) {
  try {
    const Key k(key);
    return wrapper.Single([&](Filter& f) {
      return AlreadyPresent(k.Visit([&](auto v) { return f.Insert(v); }));
    })
               ? 1
               : 0;
  } catch (py::error_already_set& error) {
    error.restore();
    return -1;
  }
}

template <typename Filter>
PyObject* AddMethod(PyObject* self, PyObject* key) {
  PyFilter<Filter>* wrapper = Unwrap<Filter>(self);
  if (wrapper == nullptr) return nullptr;
  const int present = AddKey(*wrapper, key);
  return present < 0 ? nullptr : Py_NewRef(present != 0 ? Py_True : Py_False);
}

// pybloom-live's BloomFilter.add(key, skip_check=False) (python/bloomery/pybloom.py binds it as
// its `add`), in C so that the pybloom class costs what BlockedFilter.add does: a Python method
// around the C call took ~4x as long. IndexError once the count (PyFilter::pybloom_count) has
// reached the plan's capacity (checked first: a duplicate is refused too); skip_check=True counts
// the key as new without looking, as pybloom-live does.
template <typename Filter>
PyObject* PybloomAddMethod(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                           PyObject* kwnames) {
  PyFilter<Filter>* wrapper = Unwrap<Filter>(self);
  if (wrapper == nullptr) return nullptr;
  static PyObject* const kSkipCheck = PyUnicode_InternFromString("skip_check");
  const Py_ssize_t keywords = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  PyObject* skip_check = nargs > 1 ? args[1] : nullptr;
  for (Py_ssize_t i = 0; i < keywords; ++i) {
    PyObject* name = PyTuple_GET_ITEM(kwnames, i);
    if (nargs > 1 || PyUnicode_Compare(name, kSkipCheck) != 0) {
      PyErr_Format(PyExc_TypeError, "add() got an unexpected keyword argument '%S'", name);
      return nullptr;
    }
    skip_check = args[nargs + i];
  }
  if (nargs < 1 || nargs > 2) {
    PyErr_SetString(PyExc_TypeError, "add(key, skip_check=False) takes a key");
    return nullptr;
  }
  const int skip = skip_check == nullptr ? 0 : PyObject_IsTrue(skip_check);
  if (skip < 0) return nullptr;
  if (wrapper->pybloom_count >= wrapper->filter().plan().capacity) {
    PyErr_SetString(PyExc_IndexError, "BloomFilter is at capacity");
    return nullptr;
  }
  const int present = AddKey(*wrapper, args[0]);
  if (present < 0) return nullptr;
  if (present != 0 && skip == 0) return Py_NewRef(Py_True);
  ++wrapper->pybloom_count;
  return Py_NewRef(Py_False);
}

constexpr const char* kAddDoc =
    "add(key) -> bool\n\nAdds `key`. Returns True if it was already present (a duplicate, or a "
    "false positive), False if it was new: pybloom-live's meaning, the negation of C++ Insert.";

template <typename Filter>
py::class_<PyFilter<Filter>> BindCommon(py::module_& m, const char* name, const char* doc) {
  using W = PyFilter<Filter>;
  py::class_<W> cls(m, name, doc);
  // union_update and |= (intersection_update and &=) are one method under two names.
  static constexpr auto unite = [](Filter& f, const Filter& other) { return f.UnionWith(other); };
  const auto union_update = [](W& self, W& other) -> W& { return MergeInto(self, other, unite); };
  cls.def(
         "__contains__",
         [](W& self, py::handle key) {
           const Key k(key.ptr());
           return self.Single(
               [&](Filter& f) { return k.Visit([&](auto v) { return f.MayContain(v); }); });
         },
         "False: the key was certainly never added. True: it was, or a false positive.")
      .def(
          "add_many", [](W& self, py::handle keys) { return InsertAll(self, keys); },
          py::arg("keys"),
          "Adds every key of an iterable (str, bytes, int) or of an integer buffer (a NumPy uint64 "
          "array is read in place), in order, with the GIL released. Returns how many were new.")
      .def(
          "update", [](W& self, py::handle keys) { InsertAll(self, keys); }, py::arg("keys"),
          "Adds every key of `keys` (as add_many, returning None like set.update).")
      .def(
          "contains_many",
          [](W& self, py::handle keys, bool count) -> py::object {
            typename W::Guard guard(self);
            if (count) {
              size_t present = 0;
              ForEachChunk(keys, self.filter().hasher(), guard, [&](auto span, size_t) {
                present += self.filter().MayContainMany(span);
              });
              return py::int_(present);
            }
            // Answers go straight into the result array when the length is known (a NumPy
            // array, a list); iterables of unknown (or wrong) length collect them in `grown`.
            std::optional<size_t> length = KnownLength(keys);
            py::array_t<bool> results(static_cast<py::ssize_t>(length.value_or(0)));
            std::vector<uint8_t> grown;
            size_t total = 0;
            ForEachChunk(keys, self.filter().hasher(), guard, [&](auto span, size_t offset) {
              total = offset + span.size();
              if (length && total <= *length) {
                bool* out = results.mutable_data() + offset;
                self.filter().MayContainMany(span, std::span<bool>(out, span.size()));
                return;
              }
              if (length) {
                grown.assign(results.data(), results.data() + offset);
                length.reset();
              }
              const auto chunk = std::make_unique<bool[]>(span.size());
              self.filter().MayContainMany(span, std::span<bool>(chunk.get(), span.size()));
              grown.insert(grown.end(), chunk.get(), chunk.get() + span.size());
            });
            if (!length) {
              py::array_t<bool> all(static_cast<py::ssize_t>(grown.size()));
              std::copy(grown.begin(), grown.end(), all.mutable_data());
              return all;
            }
            if (total < *length) results.resize({static_cast<py::ssize_t>(total)});
            return results;
          },
          py::arg("keys"), py::kw_only(), py::arg("count") = false,
          "Looks up every key of an iterable or integer buffer with the GIL released. Returns a "
          "NumPy bool array (one answer per key), or with count=True the number that may be "
          "present.")
      .def(
          "__len__",
          [](W& self) {
            return self.Exclusive([](Filter& f) {
              // A saturated filter estimates +inf (every bit set): len() must still be an int.
              const double most = 8.0 * static_cast<double>(f.memory_bytes());
              const double estimate = f.EstimatedCount();
              if (!(estimate < most)) return static_cast<uint64_t>(most);
              return static_cast<uint64_t>(std::llround(std::max(0.0, estimate)));
            });
          },
          "Estimated number of distinct keys added (from the bits; exact for scalable filters "
          "built by inserts). A saturated filter, whose bits can no longer tell, reports its "
          "number of memory bits.")
      .def(
          "estimated_fpr",
          [](W& self) { return self.Exclusive([](Filter& f) { return f.EstimatedFpr(); }); },
          "The false-positive rate the filter has now, computed from its bits.")
      .def(
          "clear", [](W& self) { self.Exclusive([](Filter& f) { f.Clear(); }); },
          "Removes every key.")
      .def("union_update", union_update, py::arg("other"),
           "self |= other. ValueError unless both have the same geometry, seed and integer_hash.")
      .def_property_readonly("seed", [](W& self) { return self.filter().seed(); })
      .def_property_readonly(
          "integer_hash",
          [](W& self) { return std::string(IntegerHashName(self.filter().integer_hash())); },
          "How int keys are hashed: 'xxh3' (as their 8-byte string) or 'mix'.")
      .def_property_readonly("concurrent", [](W& self) { return self.filter().concurrent(); })
      .def_property_readonly(
          "memory_bytes", [](W& self) { return self.filter().memory_bytes(); },
          "Bytes of filter memory.");
  cls.def("__ior__", union_update);
  cls.def(
         "save",
         [](W& self, py::handle path) {
           const std::string file = FsPath(path);
           if (const auto mapped = self.mapped_file()) {
             // The rename would replace the file under the mapping, whose later adds would
             // then go to the unlinked old one.
             struct stat target {};
             if (stat(file.c_str(), &target) == 0 && target.st_dev == mapped->first &&
                 target.st_ino == mapped->second) {
               throw py::value_error(
                   "save(): this filter maps that file writable; call flush() to make the file "
                   "valid instead (a save would replace the file under the mapping)");
             }
           }
           const std::optional<FileLock> lock = LockForSave(file);
           OrThrow(self.Exclusive([&](Filter& f) { return f.Save(file); }));
         },
         py::arg("path"),
         "Writes the filter atomically to `path` (str, bytes or os.PathLike) in bloomery's file "
         "format (the C++ library's and the `bloomery` CLI's). ValueError onto the file this "
         "filter maps writable: flush() that one. BlockingIOError, naming the holder's pid, "
         "while another filter maps that file writable (in this process or another) or the "
         "CLI updates it: the update lock is taken as the CLI takes it, failing fast.")
      .def(
          "tobytes", [](W& self) { return self.Exclusive([](Filter& f) { return ToBytes(f); }); },
          "The filter as the bytes of its file.")
      .def(
          "tofile",
          [](W& self, py::object file) {
            file.attr("write")(self.Exclusive([](Filter& f) { return ToBytes(f); }));
          },
          py::arg("f"), "Writes the filter's file to the binary file object `f` (pybloom-live).")
      .def(
          "copy", [](W& self) { return Copy(self); }, "An independent copy.")
      .def(
          "union", [](W& self, W& other) { return Merged(self, other, unite); }, py::arg("other"),
          "A new filter holding the keys of both (pybloom-live's union, `|`).")
      .def_static(
          "load",
          [](py::handle path, bool concurrent, uint64_t max_bytes, bool verify_checksums,
             bool allow_dirty) {
            const std::string file = FsPath(path);
            const LoadOptions options =
                MakeLoadOptions(concurrent, max_bytes, verify_checksums, allow_dirty);
            return Wrap(OrThrow(WithoutGil([&] { return Filter::Load(file, options); }),
                                /*reading=*/true));
          },
          py::arg("path"), py::kw_only(), py::arg("concurrent") = false, py::arg("max_bytes") = 0,
          py::arg("verify_checksums") = true, py::arg("allow_dirty") = false,
          "Reads a filter file into memory, validating it. FileNotFoundError, PermissionError, "
          "bloomery.FormatError for a file that is not a valid filter of this kind, MemoryError "
          "above max_bytes.")
      .def_static(
          "frombytes",
          [](py::bytes data, bool concurrent, uint64_t max_bytes) {
            return Wrap(FromBytes<Filter>(std::string_view(data),
                                          MakeLoadOptions(concurrent, max_bytes, true, false)));
          },
          py::arg("data"), py::kw_only(), py::arg("concurrent") = false, py::arg("max_bytes") = 0,
          "A filter from the bytes of its file (tobytes()).")
      .def_static(
          "fromfile",
          [](py::object file, py::ssize_t n) {
            py::bytes data = n < 0 ? file.attr("read")() : file.attr("read")(n);
            return Wrap(
                FromBytes<Filter>(std::string_view(data), MakeLoadOptions(false, 0, true, false)));
          },
          py::arg("f"), py::arg("n") = -1,
          "Reads a filter written by tofile() from the binary file object `f` (pybloom-live).")
      // The state carries what the file format does not (CopyOptions): an unpickled (or
      // copy.copy'd) concurrent filter must stay safe for the threads that share it, and a
      // scalable one must not grow past its memory cap. (bytes, concurrent), the state before
      // the cap was kept, still loads.
      .def(py::pickle(
          [](W& self) {
            const LoadOptions options = CopyOptions(self.filter());
            return py::make_tuple(self.Exclusive([](Filter& f) { return ToBytes(f); }),
                                  options.concurrent, options.max_bytes,
                                  options.huge_pages == HugePages::kAuto);
          },
          [](const py::tuple& state) {
            if (state.size() != 2 && state.size() != 4) {
              throw py::value_error(
                  "a bloomery pickle is (bytes, concurrent, max_memory, huge_pages)");
            }
            const bool typed = PyBytes_Check(state[0].ptr()) && PyBool_Check(state[1].ptr()) &&
                               (state.size() == 2 ||
                                (PyLong_Check(state[2].ptr()) && PyBool_Check(state[3].ptr())));
            if (!typed) {
              std::string types;
              for (const py::handle item : state) {
                types += std::string(types.empty() ? "" : ", ") + Py_TYPE(item.ptr())->tp_name;
              }
              PyErr_Format(PyExc_TypeError,
                           "a bloomery pickle is (bytes, concurrent: bool[, max_memory: int, "
                           "huge_pages: bool]), not (%.400s)",
                           types.c_str());
              throw py::error_already_set();
            }
            LoadOptions options = MakeLoadOptions(state[1].ptr() == Py_True, 0, true, false);
            if (state.size() == 4) {
              options.max_bytes = PyLong_AsUnsignedLongLong(state[2].ptr());
              if (PyErr_Occurred() != nullptr)
                throw py::error_already_set();  // negative: OverflowError
              options.huge_pages = state[3].ptr() == Py_True ? HugePages::kAuto : HugePages::kNever;
            }
            return Wrap(FromBytes<Filter>(std::string_view(state[0].cast<py::bytes>()), options));
          }));
  cls.def("__or__", [](py::object self, py::object other) { return self.attr("union")(other); });
  if constexpr (HasIntersect<Filter>) {
    static constexpr auto intersect = [](Filter& f, const Filter& other) {
      return f.IntersectWith(other);
    };
    const auto intersection_update = [](W& self, W& other) -> W& {
      return MergeInto(self, other, intersect);
    };
    cls.def("intersection_update", intersection_update, py::arg("other"),
            "self &= other: keeps the keys that may be in both.")
        .def(
            "intersection", [](W& self, W& other) { return Merged(self, other, intersect); },
            py::arg("other"), "A new filter of the keys that may be in both (`&`).");
    cls.def("__and__",
            [](py::object self, py::object other) { return self.attr("intersection")(other); });
    cls.def("__iand__", intersection_update);
  }
  if constexpr (HasMap<Filter>) {
    cls.def_static(
           "map",
           [](py::handle path, bool writable, uint64_t max_bytes, bool allow_dirty) {
             const std::string file = FsPath(path);
             const LoadOptions options = MakeLoadOptions(false, max_bytes, true, allow_dirty);
             const MapMode mode = writable ? MapMode::kReadWrite : MapMode::kReadOnly;
             auto wrapper = Wrap(OrThrow(
                 WithoutGil([&] { return Filter::Map(file, mode, options); }), /*reading=*/true));
             struct stat mapped {};
             if (writable && stat(file.c_str(), &mapped) == 0) {
               wrapper->set_mapped_file(mapped.st_dev, mapped.st_ino);
             }
             return wrapper;
           },
           py::arg("path"), py::kw_only(), py::arg("writable") = false, py::arg("max_bytes") = 0,
           py::arg("allow_dirty") = false,
           "Maps a filter file without copying it. writable=False: copy-on-write, adds stay in "
           "this process. writable=True: adds reach the file, which is marked dirty while "
           "mapped; flush() checksums and syncs it (readers then load it), and it is marked "
           "clean when the mapping ends with nothing added since the last flush(). Do not "
           "truncate or "
           "rewrite a mapped file in place: a read past its new end kills the process (SIGBUS); "
           "save() replaces a file by rename, which a mapping survives.")
        .def(
            "flush", [](W& self) { OrThrow(self.Exclusive([](Filter& f) { return f.Flush(); })); },
            "For a writable mapping: syncs the file and writes its checksums (it stays marked "
            "dirty while mapped). ValueError if the path no longer names the mapped file "
            "(another file was renamed over it): the adds are then only in this filter; save() "
            "it elsewhere to keep them.");
  }
  auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  type->tp_as_sequence->sq_contains = &ContainsSlot<Filter>;
  PyType_Modified(type);
  static PyMethodDef add_def = {"add", reinterpret_cast<PyCFunction>(&AddMethod<Filter>), METH_O,
                                kAddDoc};
  cls.attr("add") = py::reinterpret_steal<py::object>(PyDescr_NewMethod(type, &add_def));
  if constexpr (std::is_same_v<Filter, BlockedFilter>) {
    static PyMethodDef pybloom_add_def = {
        "_pybloom_add",
        reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&PybloomAddMethod<Filter>)),
        METH_FASTCALL | METH_KEYWORDS,
        "add(key, skip_check=False) -> bool: bloomery.BloomFilter's add (pybloom-live's)."};
    cls.attr("_pybloom_add") =
        py::reinterpret_steal<py::object>(PyDescr_NewMethod(type, &pybloom_add_def));
    cls.def_property(
        "_pybloom_count", [](const W& self) { return self.pybloom_count; },
        [](W& self, uint64_t count) { self.pybloom_count = count; },
        "bloomery.BloomFilter's count (pybloom-live's), which its add keeps.");
  }
  return cls;
}

// pybloom-live's attribute names, for the fixed-size kinds (blocked, classic, counting).
template <typename Filter>
void BindGeometry(py::class_<PyFilter<Filter>>& cls) {
  using W = PyFilter<Filter>;
  cls.def_property_readonly(
         "capacity", [](W& self) { return self.filter().plan().capacity; },
         "Keys the filter was planned for.")
      .def_property_readonly(
          "error_rate", [](W& self) { return self.filter().plan().expected_fpr; },
          "The FPR predicted at `capacity` keys (at most the one asked for).")
      .def_property_readonly("num_bits",
                             [](W& self) -> uint64_t {
                               // CountingFilter keeps its size in its plan only.
                               if constexpr (requires { self.filter().bits(); }) {
                                 return self.filter().bits();
                               } else {
                                 return self.filter().plan().bits();
                               }
                             })
      .def_property_readonly("hashes", [](W& self) { return self.filter().hashes(); });
}

template <typename Filter>
std::string Describe(const char* kind, const Filter& f) {
  return std::string("<bloomery.") + kind + " bits=" + std::to_string(f.bits()) +
         " hashes=" + std::to_string(f.hashes()) + (f.concurrent() ? " concurrent" : "") + ">";
}

py::dict InfoDict(const FileInfo& info) {
  py::dict d;
  d["kind"] = std::string(FilterKindName(info.kind));
  d["version"] = info.version;
  d["file_bytes"] = info.file_bytes;
  d["bits"] = info.bits;
  d["hashes"] = info.hashes;
  d["counter_bits"] = info.counter_bits;
  d["stages"] = info.stages;
  d["capacity"] = info.capacity;
  d["fpr"] = info.fpr;
  d["insert_count"] = info.insert_count;
  d["seed"] = info.seed;
  d["integer_hash"] = std::string(IntegerHashName(info.integer_hash));
  d["dirty"] = info.dirty;
  return d;
}

constexpr const char* kFixedDoc =
    "(capacity=0, error_rate=0.001, *, bits=0, hashes=0, seed=None, integer_hash='xxh3', "
    "concurrent=False, max_memory=0, huge_pages=True, populate=False)\n\n"
    "Sized by capacity (keys) and error_rate (FPR at capacity), or by bits (and hashes). "
    "integer_hash='mix' hashes int keys with a cheaper mix (an int is then no longer the same "
    "key as its 8-byte string; saved in the file). "
    "ValueError with the library's message for options it refuses.";

// The kinds sized by FilterOptions alone (blocked, classic): the same constructor and attributes.
template <typename Filter>
void BindFixedSize(py::module_& m, const char* name, const char* doc) {
  auto cls = BindCommon<Filter>(m, name, doc);
  cls.def(py::init([](uint64_t capacity, double error_rate, uint64_t bits, uint32_t hashes,
                      std::optional<uint64_t> seed, const std::string& integer_hash,
                      bool concurrent, uint64_t max_memory, bool huge_pages, bool populate) {
            return Wrap(OrThrow(
                Filter::Create(MakeOptions(capacity, error_rate, bits, hashes, seed, integer_hash,
                                           concurrent, max_memory, huge_pages, populate))));
          }),
          py::arg("capacity") = 0, py::arg("error_rate") = 0.001, py::kw_only(),
          py::arg("bits") = 0, py::arg("hashes") = 0, py::arg("seed") = py::none(),
          py::arg("integer_hash") = "xxh3", py::arg("concurrent") = false,
          py::arg("max_memory") = 0, py::arg("huge_pages") = true, py::arg("populate") = false,
          kFixedDoc);
  BindGeometry(cls);
  cls.def_property_readonly(
      "num_slices", [](PyFilter<Filter>& self) { return self.filter().hashes(); },
      "k, the number of probes per key.");
  cls.def("__repr__", [name](PyFilter<Filter>& self) { return Describe(name, self.filter()); });
}

// WindowedFilter's `window`: seconds as a number (int, float, a NumPy one, Decimal...), or an
// object with total_seconds() (datetime.timedelta) returning one. Anything else, a str or a
// numpy.timedelta64 (an integer counted in its own unit) included, is TypeError.
double WindowSeconds(py::handle window) {
  // A number of seconds, or nullopt for anything else; errors of its __float__ propagate.
  const auto seconds_of = [](PyObject* object) -> std::optional<double> {
    const NumpyTypes* numpy = NumpyTypes::Get();
    if (numpy != nullptr && NumpyTypes::Is(object, numpy->timedelta)) return std::nullopt;
    if (!PyNumber_Check(object)) return std::nullopt;  // int, float, Decimal, Fraction...; not str
    const py::object seconds = py::reinterpret_steal<py::object>(PyNumber_Float(object));
    if (!seconds) throw py::error_already_set();
    return PyFloat_AS_DOUBLE(seconds.ptr());
  };
  PyObject* object = window.ptr();
  // getattr, not hasattr: hasattr would swallow whatever the lookup raises (KeyboardInterrupt).
  const py::object total_seconds =
      py::reinterpret_steal<py::object>(PyObject_GetAttrString(object, "total_seconds"));
  if (total_seconds) {
    const py::object result = total_seconds();
    if (const std::optional<double> seconds = seconds_of(result.ptr())) return *seconds;
    PyErr_Format(PyExc_TypeError,
                 "WindowedFilter: window.total_seconds() must return a number of seconds, not "
                 "'%.200s'",
                 Py_TYPE(result.ptr())->tp_name);
    throw py::error_already_set();
  }
  if (!PyErr_ExceptionMatches(PyExc_AttributeError)) throw py::error_already_set();
  PyErr_Clear();
  if (const std::optional<double> seconds = seconds_of(object)) return *seconds;
  const NumpyTypes* numpy = NumpyTypes::Get();
  PyErr_Format(PyExc_TypeError,
               "WindowedFilter: window must be seconds (int or float) or a datetime.timedelta, "
               "not '%.200s'%s",
               Py_TYPE(object)->tp_name,
               numpy != nullptr && NumpyTypes::Is(object, numpy->timedelta)
                   ? " (pass td / numpy.timedelta64(1, 's'))"
                   : "");
  throw py::error_already_set();
}

// WindowedOptions::window from `window` (WindowSeconds), rounded to the library's resolution, the
// nanosecond (std::chrono::nanoseconds). ValueError for what no such duration holds: NaN, a
// negative window, one past 9e9 s (int64 nanoseconds end at ~9.22e9 s), and a positive one that
// rounds to 0 ns, which would silently select key-count mode. The library refuses the rest
// (windows of fewer nanoseconds than generations) with its own message.
std::chrono::nanoseconds WindowDuration(py::handle window) {
  constexpr double kMaxSeconds = 9.0e9;
  const double seconds = WindowSeconds(window);
  const auto refuse = [&](const char* what) {
    PyErr_Format(PyExc_ValueError, "WindowedFilter: window must be %s, got %R s", what,
                 py::float_(seconds).ptr());
    throw py::error_already_set();
  };
  if (std::isnan(seconds)) refuse("a number of seconds");
  if (seconds < 0) refuse("0 (key-count mode) or a positive number of seconds");
  if (seconds > kMaxSeconds) refuse("at most 9e9 seconds (about 285 years)");
  const std::chrono::nanoseconds duration(std::llround(seconds * 1e9));
  if (seconds > 0 && duration.count() == 0) {
    refuse("0 (key-count mode) or at least 1 ns, the resolution of the filter's clock");
  }
  return duration;
}

void BindModule(py::module_& m) {
  m.doc() = "bloomery's C++ filters (see the bloomery package for the documented API).";
  format_error = PyErr_NewExceptionWithDoc(
      "bloomery.FormatError",
      "A file or byte string that is not a valid bloomery filter (of the expected kind).",
      PyExc_ValueError, nullptr);
  m.attr("FormatError") = py::reinterpret_borrow<py::object>(format_error);
  full_error = PyErr_NewExceptionWithDoc(
      "bloomery.FilterFullError",
      "A scalable filter reached its memory or stage limit and refused a new key.",
      PyExc_IndexError, nullptr);
  m.attr("FilterFullError") = py::reinterpret_borrow<py::object>(full_error);

  BindFixedSize<BlockedFilter>(
      m, "BlockedFilter",
      "The default filter: one 64-byte cache line per key, lock-free concurrent inserts.");
  BindFixedSize<ClassicFilter>(m, "ClassicFilter",
                               "The textbook partitioned filter (k slices, k cache lines per "
                               "key): the fewest bits per key.");

  using Counting = PyFilter<CountingFilter>;
  auto counting = BindCommon<CountingFilter>(
      m, "CountingFilter",
      "A blocked filter of 4- or 8-bit counters: keys can be removed and counted.");
  counting
      .def(py::init([](uint64_t capacity, double error_rate, uint64_t bits, uint32_t hashes,
                       uint32_t counter_bits, std::optional<uint64_t> seed,
                       const std::string& integer_hash, bool concurrent, uint64_t max_memory,
                       bool huge_pages, bool populate) {
             CountingOptions options;
             static_cast<FilterOptions&>(options) =
                 MakeOptions(capacity, error_rate, bits, hashes, seed, integer_hash, concurrent,
                             max_memory, huge_pages, populate);
             options.counter_bits = counter_bits;
             return Wrap(OrThrow(CountingFilter::Create(options)));
           }),
           py::arg("capacity") = 0, py::arg("error_rate") = 0.001, py::kw_only(),
           py::arg("bits") = 0, py::arg("hashes") = 0, py::arg("counter_bits") = 4,
           py::arg("seed") = py::none(), py::arg("integer_hash") = "xxh3",
           py::arg("concurrent") = false, py::arg("max_memory") = 0, py::arg("huge_pages") = true,
           py::arg("populate") = false,
           "As BlockedFilter, plus counter_bits (4: counts saturate at 15; 8: at 255).")
      .def(
          "remove",
          [](Counting& self, py::handle key) {
            const Key k(key.ptr());
            return self.Single([&](CountingFilter& f) {
              return k.Visit([&](auto v) { return f.Erase(v); }) == EraseResult::kErased;
            });
          },
          py::arg("key"),
          "Removes one occurrence of `key`. Returns False (and changes nothing) if the key is "
          "certainly absent. Remove only keys that were added.")
      .def(
          "remove_many",
          [](Counting& self, py::handle keys) {
            typename Counting::Guard guard(self);
            size_t erased = 0;
            ForEachChunk(keys, self.filter().hasher(), guard,
                         [&](auto span, size_t) { erased += self.filter().EraseMany(span); });
            return erased;
          },
          py::arg("keys"), "Removes every key of `keys`; returns how many were removed.")
      .def(
          "count",
          [](Counting& self, py::handle key) {
            const Key k(key.ptr());
            return self.Single(
                [&](CountingFilter& f) { return k.Visit([&](auto v) { return f.Count(v); }); });
          },
          py::arg("key"),
          "An upper bound on how many times `key` was added (its smallest counter).")
      .def_property_readonly("counter_bits",
                             [](Counting& self) { return self.filter().counter_bits(); })
      .def("__repr__", [](Counting& self) {
        const CountingFilter& f = self.filter();
        return "<bloomery.CountingFilter bits=" + std::to_string(f.plan().bits()) +
               " hashes=" + std::to_string(f.hashes()) +
               " counter_bits=" + std::to_string(f.counter_bits()) +
               (f.concurrent() ? " concurrent" : "") + ">";
      });
  BindGeometry(counting);

  using Scalable = PyFilter<ScalableFilter>;
  auto scalable = BindCommon<ScalableFilter>(
      m, "ScalableFilter",
      "A chain of blocked filters that grows x2 or x4 when full, keeping the total FPR under "
      "error_rate (Almeida et al. 2007).");
  scalable
      .def(py::init([](uint64_t initial_capacity, double error_rate, uint32_t mode,
                       double tightening, std::optional<uint64_t> seed,
                       const std::string& integer_hash, bool concurrent, uint64_t max_memory,
                       uint32_t max_stages, bool scaling, bool huge_pages) {
             ScalableOptions options;
             SetSharedOptions(options, error_rate, seed, integer_hash, concurrent, max_memory,
                              huge_pages);
             options.capacity = initial_capacity;
             options.growth = mode;
             options.tightening = tightening;
             options.max_stages = max_stages;
             options.scaling = scaling;
             return Wrap(OrThrow(ScalableFilter::Create(options)));
           }),
           py::arg("initial_capacity") = 100, py::arg("error_rate") = 0.001, py::arg("mode") = 2,
           py::kw_only(), py::arg("tightening") = kDefaultTightening, py::arg("seed") = py::none(),
           py::arg("integer_hash") = "xxh3", py::arg("concurrent") = false,
           py::arg("max_memory") = 0, py::arg("max_stages") = kMaxScalableStages,
           py::arg("scaling") = true, py::arg("huge_pages") = true,
           "(initial_capacity=100, error_rate=0.001, mode=2, *, tightening=0.9, seed=None, "
           "integer_hash='xxh3', concurrent=False, max_memory=0, max_stages=64, scaling=True, "
           "huge_pages=True)\n\n"
           "mode is the growth factor, 1 to 32768 (pybloom-live's SMALL_SET_GROWTH = 2 and "
           "LARGE_SET_GROWTH = 4). A new key past max_memory or max_stages raises "
           "FilterFullError.")
      .def_property_readonly("initial_capacity",
                             [](Scalable& self) { return self.filter().options().capacity; })
      .def_property_readonly(
          "capacity", [](Scalable& self) { return self.filter().capacity(); },
          "Keys the allocated stages are planned for.")
      .def_property_readonly("error_rate", [](Scalable& self) { return self.filter().fpr(); })
      .def_property_readonly("mode", [](Scalable& self) { return self.filter().options().growth; })
      .def_property_readonly("stages", [](Scalable& self) { return self.filter().stage_count(); })
      .def_property_readonly("full", [](Scalable& self) { return self.filter().full(); })
      .def_property_readonly(
          "max_memory", [](Scalable& self) { return self.filter().options().max_memory_bytes; },
          "The cap on the bytes of all stages (0: this machine's memory); copies, pickles and "
          "unions keep it. A loaded filter's is load()'s max_bytes.")
      .def("__repr__", [](Scalable& self) {
        const ScalableFilter& f = self.filter();
        return "<bloomery.ScalableFilter stages=" + std::to_string(f.stage_count()) +
               " capacity=" + std::to_string(f.capacity()) + (f.concurrent() ? " concurrent" : "") +
               ">";
      });
  scalable.attr("SMALL_SET_GROWTH") = 2;
  scalable.attr("LARGE_SET_GROWTH") = 4;

  using Windowed = PyFilter<WindowedFilter>;
  auto windowed = BindCommon<WindowedFilter>(
      m, "WindowedFilter",
      "Keys that expire: 'was this key added within the last window?' (a window of `capacity` "
      "adds, or of `window` seconds). save/load/pickle/copy keep the window's clock state: a "
      "duration window goes on expiring by the system clock while the file is stored.");
  windowed
      .def(py::init([](uint64_t capacity, double error_rate, py::handle window,
                       uint32_t generations, const std::string& refresh, uint32_t hashes,
                       std::optional<uint64_t> seed, const std::string& integer_hash,
                       bool concurrent, uint64_t max_memory, bool huge_pages) {
             WindowedOptions options;
             SetSharedOptions(options, error_rate, seed, integer_hash, concurrent, max_memory,
                              huge_pages);
             options.capacity = capacity;
             options.window = WindowDuration(window);
             options.generations = generations;
             if (refresh == "on_insert") {
               options.refresh = Refresh::kOnInsert;
             } else if (refresh == "keep_first_seen") {
               options.refresh = Refresh::kKeepFirstSeen;
             } else {
               throw py::value_error(
                   "WindowedFilter: refresh must be 'on_insert' or 'keep_first_seen'");
             }
             options.hashes = hashes;
             return Wrap(OrThrow(WindowedFilter::Create(options)));
           }),
           py::arg("capacity"), py::arg("error_rate") = 0.01, py::kw_only(),
           py::arg("window") = 0.0, py::arg("generations") = 4, py::arg("refresh") = "on_insert",
           py::arg("hashes") = 0, py::arg("seed") = py::none(), py::arg("integer_hash") = "xxh3",
           py::arg("concurrent") = false, py::arg("max_memory") = 0, py::arg("huge_pages") = true,
           "(capacity, error_rate=0.01, *, window=0, generations=4, refresh='on_insert', "
           "hashes=0, seed=None, integer_hash='xxh3', concurrent=False, max_memory=0, "
           "huge_pages=True)\n\n"
           "capacity: keys in one window; error_rate: the FPR over the whole window at capacity. "
           "window=0: the window is the last `capacity` adds; else its length in seconds (a "
           "number or datetime.timedelta, from 1 ns to 9e9 s, rounded to the nanosecond), timed "
           "by the system clock. A key added at t is "
           "present until at least t + W*(G-1)/G and gone from t + W (G = generations). "
           "refresh='on_insert': adding a key again restarts its age; 'keep_first_seen': it "
           "expires W after it was first added. ValueError for options the library refuses.")
      .def(
          "advance", [](Windowed& self) { self.Single([](WindowedFilter& f) { f.Advance(); }); },
          "Duration windows: forgets the generations whose time is over (adds do this "
          "themselves). Key-count windows: nothing.")
      .def_property_readonly("capacity", [](Windowed& self) { return self.filter().capacity(); })
      .def_property_readonly(
          "error_rate", [](Windowed& self) { return self.filter().expected_fpr(); },
          "The FPR promised over the whole window at capacity (at most the one asked for).")
      .def_property_readonly(
          "window", [](Windowed& self) { return self.filter().window_ns() / 1e9; },
          "The window in seconds; 0 for a window of `capacity` adds.")
      .def_property_readonly("generations",
                             [](Windowed& self) { return self.filter().generations(); })
      .def_property_readonly(
          "refresh",
          [](Windowed& self) {
            return self.filter().refresh() == Refresh::kOnInsert ? "on_insert" : "keep_first_seen";
          })
      .def_property_readonly("hashes", [](Windowed& self) { return self.filter().hashes(); })
      .def_property_readonly(
          "epoch", [](Windowed& self) { return self.filter().epoch(); },
          "Rotations since creation (the newest generation's number).")
      .def("__repr__", [](Windowed& self) {
        const WindowedFilter& f = self.filter();
        return "<bloomery.WindowedFilter capacity=" + std::to_string(f.capacity()) +
               " generations=" + std::to_string(f.generations()) +
               (f.window_ns() == 0 ? std::string(" window=capacity adds")
                                   : " window=" + std::to_string(f.window_ns() / 1e9) + "s") +
               (f.concurrent() ? " concurrent" : "") + ">";
      });

  m.def(
      "_cxx_batch_seconds",
      [](PyFilter<BlockedFilter>& self, py::handle keys, bool insert) {
        // The C++ batch call alone, for benchmarks/python_bench.py's "x C++" ratios: the keys
        // are converted to what InsertMany/MayContainMany take before the clock starts.
        // Byte keys are copied into one arena first, as a C++ caller holding lines it read would
        // have them (views into 7M scattered bytes objects would time cache misses of Python's
        // heap, not the filter).
        std::string arena;
        std::vector<std::string_view> views;
        std::optional<py::buffer_info> numbers;
        if (PyList_Check(keys.ptr())) {
          const Py_ssize_t size = PyList_GET_SIZE(keys.ptr());
          std::vector<size_t> ends;
          ends.reserve(static_cast<size_t>(size));
          for (Py_ssize_t i = 0; i < size; ++i) {
            PyObject* item = PyList_GET_ITEM(keys.ptr(), i);
            if (!PyBytes_Check(item)) throw py::type_error("a list of bytes");
            arena.append(PyBytes_AS_STRING(item), static_cast<size_t>(PyBytes_GET_SIZE(item)));
            ends.push_back(arena.size());
          }
          views.reserve(ends.size());
          size_t begin = 0;
          for (const size_t end : ends) {
            views.emplace_back(arena.data() + begin, end - begin);
            begin = end;
          }
        } else {
          numbers = py::reinterpret_borrow<py::buffer>(keys).request();
          // Read as one contiguous run of aligned uint64_t: a strided view (a[::2], a[::-1]) or
          // one at an odd offset is refused (add_many copies those; this times the call alone).
          if (numbers->itemsize != 8 || numbers->ndim != 1 || numbers->strides[0] != 8 ||
              reinterpret_cast<uintptr_t>(numbers->ptr) % alignof(uint64_t) != 0) {
            throw py::type_error("a contiguous, aligned uint64 array");
          }
        }
        BlockedFilter& f = self.filter();
        py::gil_scoped_release release;
        const auto start = std::chrono::steady_clock::now();
        if (numbers) {
          const std::span<const uint64_t> span(static_cast<const uint64_t*>(numbers->ptr),
                                               static_cast<size_t>(numbers->size));
          if (insert) {
            f.InsertMany(span);
          } else {
            f.MayContainMany(span);
          }
        } else if (insert) {
          f.InsertMany(std::span<const std::string_view>(views));
        } else {
          f.MayContainMany(std::span<const std::string_view>(views));
        }
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      },
      py::arg("filter"), py::arg("keys"), py::arg("insert"),
      "Benchmark helper: seconds of one C++ InsertMany/MayContainMany over a uint64 array or a "
      "list of bytes, converted beforehand.");
  m.def(
      "info",
      [](py::handle path) {
        const std::string file = FsPath(path);
        return InfoDict(OrThrow(WithoutGil([&] { return InspectFile(file); }), /*reading=*/true));
      },
      py::arg("path"), "The header of a filter file: its kind, geometry and seed, validated.");
  m.def(
      "info_bytes",
      [](py::bytes data) {
        const std::string_view view(data);
        return InfoDict(OrThrow(WithoutGil([&] { return InspectBytes(view); }), /*reading=*/true));
      },
      py::arg("data"), "info() of a filter's bytes (tobytes(), a pickle's payload).");
  m.def(
      "hash_key",
      [](py::handle key, std::optional<uint64_t> seed, const std::string& integer_hash) {
        const KeyHash h = Key(key.ptr()).Hash(
            KeyHasher{seed.value_or(kDefaultSeed), ParseIntegerHash(integer_hash)});
        return py::make_tuple(h.lo, h.hi);
      },
      py::arg("key"), py::arg("seed") = py::none(), py::arg("integer_hash") = "xxh3",
      "The 128-bit hash (lo, hi) a filter computes for `key`: XXH3-128, or for an int key under "
      "integer_hash='mix' the mix (bloomery/key.h).");
}

}  // namespace
}  // namespace bloomery::python

PYBIND11_MODULE(_native, m) { bloomery::python::BindModule(m); }
