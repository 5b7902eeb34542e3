// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// filter_class.h: BindCommon<Filter>, the Python class every kind shares (lookups, batches,
// merges, estimates, with persistence.h's and hot_calls.h's parts), and BindGeometry, the
// pybloom-live attribute names of the fixed-size kinds. Instantiated once per kind by module.cc.
#ifndef BLOOMERY_PYTHON_SRC_FILTER_CLASS_H_
#define BLOOMERY_PYTHON_SRC_FILTER_CLASS_H_

#include <pybind11/numpy.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "common.h"
#include "hot_calls.h"
#include "keys.h"
#include "persistence.h"
#include "py_filter.h"

namespace bloomery::python {

// Is the filter kind's C++ type able to do X? (compile-time rows of the binding)
template <typename F>
concept HasIntersect = requires(F f, const F& g) {
  f.IntersectWith(g);
};

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

// One bool per key of `keys`, from `answer(span, out)` over each chunk: written in place into
// the NumPy array where the length is known (a NumPy array, a list), else collected and copied.
template <typename Filter, typename Answer>
py::array_t<bool> AnswerEach(PyFilter<Filter>& self, py::handle keys,
                             typename PyFilter<Filter>::Guard& guard, const Answer& answer) {
  std::optional<size_t> length = KnownLength(keys);
  py::array_t<bool> results(static_cast<py::ssize_t>(length.value_or(0)));
  std::vector<uint8_t> grown;
  size_t total = 0;
  ForEachChunk(keys, self.filter().hasher(), guard, [&](auto span, size_t offset) {
    total = offset + span.size();
    if (length && total <= *length) {
      answer(span, std::span<bool>(results.mutable_data() + offset, span.size()));
      return;
    }
    if (length) {
      grown.assign(results.data(), results.data() + offset);
      length.reset();
    }
    const auto chunk = std::make_unique<bool[]>(span.size());
    answer(span, std::span<bool>(chunk.get(), span.size()));
    grown.insert(grown.end(), chunk.get(), chunk.get() + span.size());
  });
  if (!length) {
    py::array_t<bool> all(static_cast<py::ssize_t>(grown.size()));
    std::copy(grown.begin(), grown.end(), all.mutable_data());
    return all;
  }
  if (total < *length) results.resize({static_cast<py::ssize_t>(total)});
  return results;
}

// add_many(keys, present=True): every key inserted, in order, answering per key in add()'s
// sense: True where the key was already present. Raises after the batch as InsertAll does.
template <typename Filter>
py::array_t<bool> InsertAllPresent(PyFilter<Filter>& self, py::handle keys) {
  typename PyFilter<Filter>::Guard guard(self);
  size_t refused = 0;
  py::array_t<bool> present = AnswerEach(self, keys, guard, [&](auto span, std::span<bool> out) {
    using Answer = InsertAnswer<Filter>;
    if constexpr (std::is_same_v<Answer, bool>) {
      self.filter().InsertMany(span, out);
      for (bool& answer : out) answer = !answer;  // was new -> already present
    } else {
      std::vector<Answer> answers(span.size());
      refused += self.filter().InsertMany(span, std::span<Answer>(answers)).refused;
      for (size_t i = 0; i < answers.size(); ++i) {
        out[i] = answers[i] == InsertResult::kPresent;
      }
    }
  });
  if (refused > 0) {
    PyErr_Format(full_error, "the scalable filter is full: %zu new keys were not added", refused);
    throw py::error_already_set();
  }
  return present;
}

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
          "add_many",
          [](W& self, py::handle keys, bool present) -> py::object {
            if (present) return InsertAllPresent(self, keys);
            return py::int_(InsertAll(self, keys));
          },
          py::arg("keys"), py::kw_only(), py::arg("present") = false,
          "Adds every key of an iterable (str, bytes, int) or of a 1-D buffer: integers (a NumPy "
          "uint64 array is read in place), NumPy 'S', 'U' or object (str, bytes) columns, in "
          "order, with the GIL released. Returns how many were new; "
          "with present=True, a NumPy bool array in add()'s sense instead: True where the key was "
          "already present (a duplicate, or a false positive).")
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
            return AnswerEach(self, keys, guard, [&](auto span, std::span<bool> out) {
              self.filter().MayContainMany(span, out);
            });
          },
          py::arg("keys"), py::kw_only(), py::arg("count") = false,
          "Looks up every key of an iterable or 1-D buffer (as add_many) with the GIL released. "
          "Returns a "
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
          "health",
          [](W& self) {
            const FilterHealth h = self.Exclusive([](Filter& f) { return f.Health(); });
            py::dict out;
            out["state"] = std::string(HealthStateName(h.state));
            out["capacity"] = h.capacity;
            out["inserted"] = h.inserted ? py::object(py::int_(*h.inserted)) : py::none();
            out["estimated_count"] = h.estimated_count;
            out["estimated_count_error"] = h.estimated_count_error;
            out["fill_ratio"] = h.fill_ratio;
            out["planned_fpr"] = h.planned_fpr;
            out["estimated_fpr"] = h.estimated_fpr;
            out["estimated_fpr_error"] = h.estimated_fpr_error;
            out["sampled"] = h.sampled;
            return out;
          },
          "The filter's health (C++ Health(), bloomery/health.h) as a dict: state ('ok', "
          "'near_limit' or 'over_limit'), capacity, inserted (a scalable chain's count of keys "
          "added, else None), estimated_count and its 3-sigma estimated_count_error, fill_ratio, "
          "planned_fpr, estimated_fpr and estimated_fpr_error. Reads the whole filter up to 1 "
          "MiB, a ~1 MiB sample above (1-2 ms for 1 GiB).")
      .def(
          "clear", [](W& self) { self.Exclusive([](Filter& f) { f.Clear(); }); },
          "Removes every key.")
      .def("union_update", union_update, py::arg("other"),
           "self |= other. ValueError unless both have the same geometry, seed and integer_hash.")
      .def_property_readonly("seed", [](W& self) { return self.filter().seed(); })
      .def_property_readonly(
          "integer_hash",
          [](W& self) { return std::string(IntegerHashName(self.filter().integer_hash())); },
          "How int keys are hashed: 'xxh3' (as their 8-byte string), 'mix' or 'seeded-mix'.")
      .def_property_readonly("concurrent", [](W& self) { return self.filter().concurrent(); })
      .def_property_readonly(
          "memory_bytes", [](W& self) { return self.filter().memory_bytes(); },
          "Bytes of filter memory.");
  cls.def("__ior__", union_update);
  BindPersistence(cls);
  cls.def(
      "union", [](W& self, W& other) { return Merged(self, other, unite); }, py::arg("other"),
      "A new filter holding the keys of both (pybloom-live's union, `|`).");
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
  BindHotCalls(cls);
  return cls;
}

// pybloom-live's attribute names, for the fixed-size kinds (blocked, classic, counting).
template <typename Filter>
void BindGeometry(py::class_<PyFilter<Filter>>& cls) {
  using W = PyFilter<Filter>;
  cls.def_property_readonly(
         "capacity", [](W& self) { return self.filter().capacity(); },
         "Keys the filter was planned for (sized by bits and hashes alone: bits * ln 2 / hashes, "
         "as C++ capacity() says).")
      .def_property_readonly(
          "error_rate", [](W& self) { return self.filter().planned_fpr(); },
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

}  // namespace bloomery::python

#endif  // BLOOMERY_PYTHON_SRC_FILTER_CLASS_H_
