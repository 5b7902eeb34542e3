// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// hot_calls.h: the single-key hot calls, `key in filter` and add(key), and pybloom-live's add, as
// CPython slots and C methods.
//
// They bypass pybind11's dispatch: `in` is the type's sq_contains slot and add a METH_O method,
// called by CPython directly. Through pybind11 (slot wrapper or method lookup, argument loader,
// result caster) each cost ~80 ns more; a URL lookup in an L2-sized filter took ~130 ns that way
// and ~25 ns this way.
#ifndef BLOOMERY_PYTHON_SRC_HOT_CALLS_H_
#define BLOOMERY_PYTHON_SRC_HOT_CALLS_H_

#include <cstdint>
#include <type_traits>

#include "common.h"
#include "keys.h"
#include "py_filter.h"

namespace bloomery::python {

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

// `call(filter, key)` for a key given as a Python object, on the filter as a single-key call
// (PyFilter::Single): 1 if it answered true, 0 if false, -1 with the Python error set (a key that
// is not one, or a call that raised). The one body of `in`, add and pybloom's add.
template <typename Filter, typename Call>
int CallWithKey(PyFilter<Filter>& wrapper, PyObject* key, Call call) {
  try {
    const Key k(key);
    return wrapper.Single([&](Filter& f) { return k.Visit([&](auto v) { return call(f, v); }); })
               ? 1
               : 0;
  } catch (py::error_already_set& error) {
    error.restore();
    return -1;
  }
}

template <typename Filter>
int ContainsSlot(PyObject* self, PyObject* key) {
  PyFilter<Filter>* wrapper = Unwrap<Filter>(self);
  if (wrapper == nullptr) return -1;
  return CallWithKey(*wrapper, key, [](const Filter& f, auto v) { return f.MayContain(v); });
}

// Adds `key` to the filter: 1 if it was already present, 0 if it was new, -1 with the Python
// error set.
template <typename Filter>
int AddKey(PyFilter<Filter>& wrapper, PyObject* key) {
  return CallWithKey(wrapper, key, [](Filter& f, auto v) { return AlreadyPresent(f.Insert(v)); });
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

// Installs `in`, add and (BlockedFilter, for bloomery.BloomFilter) pybloom's add on `cls`.
template <typename Filter>
void BindHotCalls(py::class_<PyFilter<Filter>>& cls) {
  using W = PyFilter<Filter>;
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
}

}  // namespace bloomery::python

#endif  // BLOOMERY_PYTHON_SRC_HOT_CALLS_H_
