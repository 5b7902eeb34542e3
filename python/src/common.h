// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// common.h: what the files of bloomery._native share: absl::Status errors as Python exceptions,
// the GIL released around file I/O, path arguments, NumPy's scalar types. Internal to the
// extension, as is every header in python/src/.
#ifndef BLOOMERY_PYTHON_SRC_COMMON_H_
#define BLOOMERY_PYTHON_SRC_COMMON_H_

#include <Python.h>
#include <pybind11/pybind11.h>
// In every file of the extension, so that all of them see the same type casters.
#include <pybind11/stl.h>

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bloomery/bloomery.h"

namespace py = pybind11;

namespace bloomery::python {

// Raised for a file or byte string that is not a valid filter of the expected kind.
inline PyObject* format_error = nullptr;
// Raised when a scalable filter refuses a new key (it reached a memory or stage limit).
inline PyObject* full_error = nullptr;

// Where a failed absl::Status surfaces in Python. `reading` says the status came from reading a
// file or byte string, where InvalidArgument and FailedPrecondition describe the data, not the
// caller's arguments.
[[noreturn]] inline void Throw(const absl::Status& status, bool reading = false) {
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

inline void OrThrow(const absl::Status& status, bool reading = false) {
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
inline std::string FsPath(py::handle path) {
  PyObject* bytes = nullptr;
  if (PyUnicode_FSConverter(path.ptr(), &bytes) == 0) throw py::error_already_set();
  const py::object owner = py::reinterpret_steal<py::object>(bytes);
  return {PyBytes_AS_STRING(bytes), static_cast<size_t>(PyBytes_GET_SIZE(bytes))};
}

}  // namespace bloomery::python

#endif  // BLOOMERY_PYTHON_SRC_COMMON_H_
