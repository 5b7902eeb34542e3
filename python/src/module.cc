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
//
// The files, by what they hold (python/src/, all internal to the extension):
//   common.h        the error mapping (Throw, OrThrow), WithoutGil, FsPath, NumPy's types
//   keys.h, .cc     Key (one Python key); Batch and ForEachChunk (batches, GIL released)
//   py_filter.h     PyFilter<Filter>: a filter and its thread guard; the __init__ check
//   filter_class.h  BindCommon: the class every kind shares; BindGeometry
//   persistence.h   save/load, bytes, files, map/flush, copies and pickling
//   hot_calls.h     `in`, add and pybloom's add as CPython slots and C methods
//   options.h       constructor arguments into the library's options structs
//   module.cc       PYBIND11_MODULE: the exceptions, a registration per kind, module functions
#include <Python.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "bloomery/bloomery.h"
#include "bloomery/version.h"
#include "common.h"
#include "filter_class.h"
#include "keys.h"
#include "options.h"
#include "persistence.h"
#include "py_filter.h"

namespace bloomery::python {
namespace {

// python-xxhash's xxh128(data).digest(): XXH3-128 with seed 0 (the library's HashKey, key.h), in
// XXH128_canonicalFromHash's big-endian order (high 64 bits first). pybloom-live 4.0 hashes small
// filters with it (python/bloomery/pybloom.py reads and writes its files). A METH_O function,
// called by CPython directly: through pybind11's dispatch the call cost more than the hash of a
// URL.
PyObject* Xxh128Digest(PyObject* /*module*/, PyObject* data) {
  if (!PyBytes_Check(data)) {
    PyErr_SetString(PyExc_TypeError, "_xxh128_digest takes bytes");
    return nullptr;
  }
  const KeyHash hash = HashKey(
      std::string_view(PyBytes_AS_STRING(data), static_cast<size_t>(PyBytes_GET_SIZE(data))),
      /*seed=*/0);
  char digest[16];
  for (int i = 0; i < 8; ++i) {
    digest[i] = static_cast<char>(hash.hi >> (56 - 8 * i));
    digest[8 + i] = static_cast<char>(hash.lo >> (56 - 8 * i));
  }
  return PyBytes_FromStringAndSize(digest, sizeof(digest));
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
    "(capacity=0, error_rate=0.001, *, bits=0, hashes=0, seed=None, integer_hash=None, "
    "concurrent=False, max_memory=0, huge_pages=True, populate=False, layout=None, prefer=None)\n\n"
    "Sized by capacity (keys) and error_rate (FPR at capacity), or by bits (and hashes). "
    "layout (BlockedFilter): 'line512' (the default), 'block256', 'word64' (faster, more bits "
    "per key) or 'auto', the planner's choice by prefer: 'smallest' (the default: the fewest "
    "bits that meet error_rate) or 'fastest' (the fastest layout within max_memory); kept in the "
    "file. "
    "integer_hash='seeded-mix' or 'mix' hashes int keys with a cheaper mix (an int is then no "
    "longer the same key as its 8-byte string; saved in the file; under 'mix' seeds that differ "
    "only in low bits give small ints alike); None: 'seeded-mix' for word64 and block256, 'xxh3' "
    "for the line. "
    "ValueError with the library's message for options it refuses.";

// The kinds sized by FilterOptions alone (blocked, classic): the same constructor and attributes.
template <typename Filter>
void BindFixedSize(py::module_& m, const char* name, const char* doc) {
  auto cls = BindCommon<Filter>(m, name, doc);
  cls.def(py::init([](uint64_t capacity, double error_rate, uint64_t bits, uint32_t hashes,
                      std::optional<uint64_t> seed, const std::optional<std::string>& integer_hash,
                      bool concurrent, uint64_t max_memory, bool huge_pages, bool populate,
                      const std::optional<std::string>& layout,
                      const std::optional<std::string>& prefer) {
            AnyOptions options = MakeOptions(capacity, error_rate, bits, hashes, seed, integer_hash,
                                             concurrent, max_memory, huge_pages, populate);
            options.layout = ParseLayoutArg(layout);
            options.layout_choice = ParsePreferArg(prefer, options.layout);
            return Wrap(CreateFilter<Filter>(options));
          }),
          py::arg("capacity") = 0, py::arg("error_rate") = 0.001, py::kw_only(),
          py::arg("bits") = 0, py::arg("hashes") = 0, py::arg("seed") = py::none(),
          py::arg("integer_hash") = py::none(), py::arg("concurrent") = false,
          py::arg("max_memory") = 0, py::arg("huge_pages") = true, py::arg("populate") = false,
          py::arg("layout") = py::none(), py::arg("prefer") = py::none(), kFixedDoc);
  BindGeometry(cls);
  cls.def_property_readonly(
      "layout",
      [](PyFilter<Filter>& self) { return std::string(LayoutName(self.filter().plan().layout)); },
      "The block a key's bits live in: 'line512', 'block256', 'word64' ('partitioned' for "
      "ClassicFilter).");
  cls.def_property_readonly(
      "probe",
      [](PyFilter<Filter>& self) -> std::string {
        const Plan& plan = self.filter().plan();
        return FindBlockShape(plan.layout) == nullptr ? "none" : std::string(ProbeName(plan.probe));
      },
      "How a key's bits are placed in its block: 'fields' for a filter made now, 'salted' for a "
      "line512 or block256 file saved before the fields probe ('none' for ClassicFilter).");
  cls.def_property_readonly(
      "num_slices", [](PyFilter<Filter>& self) { return self.filter().hashes(); },
      "k, the number of probes per key.");
  cls.def("__repr__", [name](PyFilter<Filter>& self) { return Describe(name, self.filter()); });
  if constexpr (std::is_same_v<Filter, BlockedFilter> || std::is_same_v<Filter, ClassicFilter>) {
    cls.def(
        "folded",
        [](PyFilter<Filter>& self, double max_fpr, uint64_t max_memory) {
          return Wrap(OrThrow(self.Exclusive([&](Filter& f) {
            return f.FoldedTo(
                max_fpr,
                {.concurrent = f.concurrent(),
                 .max_memory_bytes = max_memory,
                 .huge_pages = f.huge_page_bytes() != 0 ? HugePages::kAuto : HugePages::kNever});
          })));
        },
        py::arg("max_fpr"), py::kw_only(), py::arg("max_memory") = 0,
        "A new filter, the smallest halving of this one whose FPR with the keys in it now stays "
        "<= max_fpr (C++ FoldedTo): every key added still answers True, at a fraction of the "
        "memory. Its capacity is what the folded size holds at max_fpr. ValueError when the FPR "
        "is already above max_fpr or the filter cannot halve (an odd block count: sized by "
        "bits); MemoryError when the folded filter is over max_memory (the halvings on the way "
        "to it do not count against it).");
  }
}

void BindModule(py::module_& m) {
  m.doc() = "bloomery's C++ filters (see the bloomery package for the documented API).";
  m.attr("__version__") = BLOOMERY_VERSION_STRING;  // the library's, from VERSION
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
                       const std::optional<std::string>& integer_hash, bool concurrent,
                       uint64_t max_memory, bool huge_pages, bool populate) {
             AnyOptions options =
                 MakeOptions(capacity, error_rate, bits, hashes, seed, integer_hash, concurrent,
                             max_memory, huge_pages, populate);
             options.counter_bits = counter_bits;
             return Wrap(CreateFilter<CountingFilter>(options));
           }),
           py::arg("capacity") = 0, py::arg("error_rate") = 0.001, py::kw_only(),
           py::arg("bits") = 0, py::arg("hashes") = 0, py::arg("counter_bits") = 4,
           py::arg("seed") = py::none(), py::arg("integer_hash") = py::none(),
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
      "A chain of filters (blocked, or classic with layout='partitioned') that grows by mode "
      "(2 or 4 usual) when full, keeping the total FPR under error_rate (Almeida et al. 2007).");
  scalable
      .def(py::init([](uint64_t initial_capacity, double error_rate, uint32_t mode,
                       double tightening, std::optional<uint64_t> seed,
                       const std::optional<std::string>& integer_hash, bool concurrent,
                       uint64_t max_memory, uint32_t max_stages, bool scaling, bool huge_pages,
                       const std::optional<std::string>& layout) {
             AnyOptions options =
                 SharedOptions(error_rate, seed, integer_hash, concurrent, max_memory, huge_pages);
             options.layout = ParseLayoutArg(layout, /*partitioned=*/true);
             options.capacity = initial_capacity;
             options.growth = mode;
             options.tightening = tightening;
             options.max_stages = max_stages;
             options.scaling = scaling;
             return Wrap(CreateFilter<ScalableFilter>(options));
           }),
           py::arg("initial_capacity") = 100, py::arg("error_rate") = 0.001, py::arg("mode") = 2,
           py::kw_only(), py::arg("tightening") = kDefaultTightening, py::arg("seed") = py::none(),
           py::arg("integer_hash") = py::none(), py::arg("concurrent") = false,
           py::arg("max_memory") = 0, py::arg("max_stages") = kMaxScalableStages,
           py::arg("scaling") = true, py::arg("huge_pages") = true, py::arg("layout") = py::none(),
           "(initial_capacity=100, error_rate=0.001, mode=2, *, tightening=0.9, seed=None, "
           "integer_hash=None, concurrent=False, max_memory=0, max_stages=64, scaling=True, "
           "huge_pages=True, layout=None)\n\n"
           "layout: every stage's block, 'line512' (the default), 'block256' or 'word64'; or "
           "'partitioned': classic stages, as pybloom-live's own (the fewest bits, k cache lines "
           "per key and stage). "
           "mode is the growth factor, 1 to 32768 (pybloom-live's SMALL_SET_GROWTH = 2 and "
           "LARGE_SET_GROWTH = 4). A new key past max_memory or max_stages raises "
           "FilterFullError.")
      .def_property_readonly("initial_capacity",
                             [](Scalable& self) { return self.filter().options().capacity; })
      .def_property_readonly(
          "capacity", [](Scalable& self) { return self.filter().capacity(); },
          "Keys the allocated stages are planned for.")
      .def_property_readonly("error_rate", [](Scalable& self) { return self.filter().fpr(); })
      .def_property_readonly(
          "planned_error_rate",
          [](Scalable& self) {
            return self.Exclusive([](ScalableFilter& f) { return f.planned_fpr(); });
          },
          "The bound the chain promises on its FPR, however far it grows: error_rate, plus the "
          "share of each stage a union kept beside another of its level.")
      .def(
          "_stage",
          [](Scalable& self, uint32_t i) {
            return self.Exclusive([i](ScalableFilter& f) {
              if (i >= f.stage_count()) throw py::index_error("stage index out of range");
              const BitArray& stage = f.stage(i);
              return py::make_tuple(stage.plan().capacity, f.stage_keys(i), stage.bits(),
                                    stage.hashes(),
                                    ScalableFilter::StageFpr(f.options(), f.stage_level(i)));
            });
          },
          py::arg("i"),
          "(capacity, keys, bits, hashes, its share of the error rate) of stage i, oldest first "
          "(pybloom.py's filters).")
      .def_property_readonly("mode", [](Scalable& self) { return self.filter().options().growth; })
      .def_property_readonly("stages", [](Scalable& self) { return self.filter().stage_count(); })
      .def_property_readonly("full", [](Scalable& self) { return self.filter().full(); })
      .def_property_readonly(
          "layout", [](Scalable& self) { return std::string(LayoutName(self.filter().layout())); },
          "Every stage's layout: 'line512', 'block256', 'word64' or 'partitioned'.")
      .def_property_readonly(
          "probe",
          [](Scalable& self) -> std::string {
            const ScalableFilter& f = self.filter();
            return f.layout() == Layout::kPartitioned ? "none" : std::string(ProbeName(f.probe()));
          },
          "Every blocked stage's probe: 'fields', or 'salted' for a file saved before it ('none' "
          "for partitioned stages).")
      .def_property_readonly(
          "max_memory",
          [](Scalable& self) { return self.filter().options().memory.max_memory_bytes; },
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
                       std::optional<uint64_t> seed, const std::optional<std::string>& integer_hash,
                       bool concurrent, uint64_t max_memory, bool huge_pages,
                       const std::optional<std::string>& layout,
                       const std::optional<std::string>& prefer) {
             AnyOptions options =
                 SharedOptions(error_rate, seed, integer_hash, concurrent, max_memory, huge_pages);
             options.capacity = capacity;
             options.layout = ParseLayoutArg(layout);
             options.layout_choice = ParsePreferArg(prefer, options.layout);
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
             return Wrap(CreateFilter<WindowedFilter>(options));
           }),
           py::arg("capacity"), py::arg("error_rate") = 0.01, py::kw_only(),
           py::arg("window") = 0.0, py::arg("generations") = 4, py::arg("refresh") = "on_insert",
           py::arg("hashes") = 0, py::arg("seed") = py::none(),
           py::arg("integer_hash") = py::none(), py::arg("concurrent") = false,
           py::arg("max_memory") = 0, py::arg("huge_pages") = true, py::arg("layout") = py::none(),
           py::arg("prefer") = py::none(),
           "(capacity, error_rate=0.01, *, window=0, generations=4, refresh='on_insert', "
           "hashes=0, seed=None, integer_hash=None, concurrent=False, max_memory=0, "
           "huge_pages=True, layout=None, prefer=None)\n\n"
           "capacity: keys in one window; error_rate: the FPR over the whole window at capacity. "
           "window=0: the window is the last `capacity` adds; else its length in seconds (a "
           "number or datetime.timedelta, from 1 ns to 9e9 s, rounded to the nanosecond), timed "
           "by the system clock. A key added at t is "
           "present until at least t + W*(G-1)/G and gone from t + W (G = generations). "
           "refresh='on_insert': adding a key again restarts its age; 'keep_first_seen': it "
           "expires W after it was first added. layout: every generation's block, 'line512' (the "
           "default), 'block256', 'word64' or 'auto' by prefer, as BlockedFilter's; kept in the "
           "file. ValueError for options the library refuses.")
      .def(
          "advance", [](Windowed& self) { self.Single([](WindowedFilter& f) { f.Advance(); }); },
          "Duration windows: forgets the generations whose time is over (adds do this "
          "themselves). Key-count windows: nothing.")
      .def_property_readonly("capacity", [](Windowed& self) { return self.filter().capacity(); })
      .def_property_readonly(
          "error_rate", [](Windowed& self) { return self.filter().planned_fpr(); },
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
          "layout", [](Windowed& self) { return std::string(LayoutName(self.filter().layout())); },
          "Every generation's block: 'line512', 'block256' or 'word64'.")
      .def_property_readonly(
          "probe", [](Windowed& self) { return std::string(ProbeName(self.filter().probe())); },
          "Every generation's probe: 'fields', or 'salted' for a file saved before it.")
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
  // bloomery.load and loads: one open and one read of the header, whatever the kind (a kind's own
  // load after info() would open the file twice, and a file replaced between the two opens could
  // be read as a kind its header no longer names). The keywords, defaults and errors of a kind's
  // load() and frombytes() (BindPersistence).
  m.def(
      "_load",
      [](py::handle path, bool concurrent, uint64_t max_bytes, bool verify_checksums,
         bool allow_dirty) {
        return WrapAny(
            LoadFile<AnyFilter>(path, concurrent, max_bytes, verify_checksums, allow_dirty));
      },
      py::arg("path"), py::kw_only(), py::arg("concurrent") = false, py::arg("max_bytes") = 0,
      py::arg("verify_checksums") = true, py::arg("allow_dirty") = false,
      "A filter file of any kind, read once, as its kind's class (bloomery.load).");
  m.def(
      "_loads",
      [](py::bytes data, bool concurrent, uint64_t max_bytes) {
        return WrapAny(FromBytes<AnyFilter>(data, concurrent, max_bytes));
      },
      py::arg("data"), py::kw_only(), py::arg("concurrent") = false, py::arg("max_bytes") = 0,
      "A filter of any kind from the bytes of its file, parsed once (bloomery.loads).");
  m.def(
      "hash_key",
      [](py::handle key, std::optional<uint64_t> seed, const std::string& integer_hash) {
        const KeyHash h = Key(key.ptr()).Hash(
            KeyHasher{seed.value_or(kDefaultSeed), ParseIntegerHash(integer_hash)});
        return py::make_tuple(h.lo, h.hi);
      },
      py::arg("key"), py::arg("seed") = py::none(), py::arg("integer_hash") = "xxh3",
      "The 128-bit hash (lo, hi) a filter computes for `key`: XXH3-128, or for an int key under "
      "integer_hash='mix' or 'seeded-mix' that mix (bloomery/key.h).");
  static PyMethodDef xxh128_digest_def = {
      "_xxh128_digest", &Xxh128Digest, METH_O,
      "_xxh128_digest(data: bytes) -> bytes: XXH3-128 of `data` as python-xxhash's "
      "xxh128(data).digest() (16 bytes, big-endian)."};
  m.add_object("_xxh128_digest", py::reinterpret_steal<py::object>(PyCFunction_NewEx(
                                     &xxh128_digest_def, nullptr, m.attr("__name__").ptr())));
}

}  // namespace
}  // namespace bloomery::python

PYBIND11_MODULE(_native, m) { bloomery::python::BindModule(m); }
