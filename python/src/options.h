// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// options.h: the constructors' Python arguments into the library's options structs.
#ifndef BLOOMERY_PYTHON_SRC_OPTIONS_H_
#define BLOOMERY_PYTHON_SRC_OPTIONS_H_

#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "common.h"

namespace bloomery::python {

// integer_hash: "xxh3", "mix" or "seeded-mix" (IntegerHash, key.h; IntegerHashName's names).
inline IntegerHash ParseIntegerHash(const std::string& name) {
  for (IntegerHash integers : {IntegerHash::kXxh3, IntegerHash::kMix, IntegerHash::kSeededMix}) {
    if (name == IntegerHashName(integers)) return integers;
  }
  throw py::value_error("integer_hash must be 'xxh3', 'mix' or 'seeded-mix'");
}
// A constructor's integer_hash: None is the layout's default (kAuto, ResolveIntegerHash).
inline IntegerHash ParseIntegerHash(const std::optional<std::string>& name) {
  return name ? ParseIntegerHash(*name) : IntegerHash::kAuto;
}

// layout: None (the kind's default), or a blocked shape's name (layout.h: "line512", "block256",
// "word64"; "auto" where the kind takes it), or "partitioned" where `partitioned` (a scalable
// filter's stages); the library refuses a layout its kind does not take.
inline std::optional<Layout> ParseLayoutArg(const std::optional<std::string>& name,
                                            bool partitioned = false) {
  if (!name) return std::nullopt;
  const std::optional<Layout> layout = ParseLayout(*name);
  if (!layout || (*layout == Layout::kPartitioned && !partitioned)) {
    std::string message = "layout must be ";
    if (partitioned) message += "'partitioned', ";
    // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on literal + string.
    for (const BlockShape& shape : kBlockShapes)
      message.append("'").append(shape.name).append("', ");
    message.resize(message.size() - 2);  // the last ", ": "or 'auto'" ends the list
    throw py::value_error(message + " or 'auto', got '" + *name + "'");
  }
  return layout;
}

// prefer= of a filter with layout='auto': LayoutChoice (layout.h) by name, or nullopt for None.
// ValueError for another name, or for a prefer without layout='auto' (it would be ignored).
inline std::optional<LayoutChoice> ParsePreferArg(const std::optional<std::string>& prefer,
                                                  const std::optional<Layout>& layout) {
  if (!prefer) return std::nullopt;
  if (*prefer != "smallest" && *prefer != "fastest") {
    throw py::value_error("prefer must be 'smallest' or 'fastest', got '" + *prefer + "'");
  }
  if (layout != Layout::kAuto) throw py::value_error("prefer needs layout='auto'");
  return *prefer == "fastest" ? LayoutChoice::kFastest : LayoutChoice::kSmallest;
}

// The constructor arguments every kind takes, as AnyOptions (bloomery/any_filter.h): fpr, and
// the hashing and memory parts.
inline AnyOptions SharedOptions(double error_rate, std::optional<uint64_t> seed,
                                const std::optional<std::string>& integer_hash, bool concurrent,
                                uint64_t max_memory, bool huge_pages) {
  return AnyOptions{.fpr = error_rate,
                    .hashing = {.seed = seed.value_or(kDefaultSeed),
                                .integer_hash = ParseIntegerHash(integer_hash)},
                    .memory = {.concurrent = concurrent,
                               .max_memory_bytes = max_memory,
                               .huge_pages = huge_pages ? HugePages::kAuto : HugePages::kNever}};
}

// The fixed-size kinds' constructor arguments (blocked, classic, counting).
inline AnyOptions MakeOptions(uint64_t capacity, double error_rate, uint64_t bits, uint32_t hashes,
                              std::optional<uint64_t> seed,
                              const std::optional<std::string>& integer_hash, bool concurrent,
                              uint64_t max_memory, bool huge_pages, bool populate) {
  AnyOptions options =
      SharedOptions(error_rate, seed, integer_hash, concurrent, max_memory, huge_pages);
  options.capacity = capacity;
  options.bits = bits;
  options.hashes = hashes;
  options.memory.populate = populate;
  return options;
}

// A filter of kind F from the library's one factory (AnyFilter::Create); its refusals raise
// (ValueError for InvalidArgument, as OrThrow maps them).
template <typename F>
F CreateFilter(const AnyOptions& options) {
  AnyFilter made = OrThrow(AnyFilter::Create(kKindOf<F>, options));
  return std::move(*made.get_if<F>());
}

// WindowedFilter's `window`: seconds as a number (int, float, a NumPy one, Decimal...), or an
// object with total_seconds() (datetime.timedelta) returning one. Anything else, a str or a
// numpy.timedelta64 (an integer counted in its own unit) included, is TypeError.
inline double WindowSeconds(py::handle window) {
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
inline std::chrono::nanoseconds WindowDuration(py::handle window) {
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

}  // namespace bloomery::python

#endif  // BLOOMERY_PYTHON_SRC_OPTIONS_H_
