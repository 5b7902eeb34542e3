// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// keys.cc: the parts of keys.h that run once per batch or chunk, not once per key.
#include "keys.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

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

void Batch::FromBuffer(PyObject* object) {
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
