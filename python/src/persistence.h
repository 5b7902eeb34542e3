// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// persistence.h: a filter's life outside the process: save/load, bytes, files, map/flush, copies
// and pickling (all through the file format, so every copy's bytes are validated).
#ifndef BLOOMERY_PYTHON_SRC_PERSISTENCE_H_
#define BLOOMERY_PYTHON_SRC_PERSISTENCE_H_

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "common.h"
#include "py_filter.h"

namespace bloomery::python {

// save()'s hold on the file it replaces: the update lock the CLI takes (LockForUpdate, file.h),
// failing fast. A read-write mapping holds that lock shared for its whole life, in this process
// or another (an flock belongs to an open file description, so this process's own mappings
// conflict too), and a save's rename over it would leave the mapping writing to a file no path
// names. Only an existing regular file is locked: a new file has no mapping (LockForUpdate
// would lock its directory, failing saves of other new files beside it), and Save refuses
// what is not a regular file with its own message.
inline std::optional<FileLock> LockForSave(const std::string& path) {
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

// The LoadOptions of load()'s, frombytes()'s and map()'s keyword arguments.
inline LoadOptions MakeLoadOptions(bool concurrent, uint64_t max_bytes, bool verify_checksums,
                                   bool allow_dirty) {
  return LoadOptions{.max_bytes = max_bytes,
                     .verify_checksums = verify_checksums,
                     .allow_dirty = allow_dirty,
                     .concurrent = concurrent};
}

// Is the filter kind's C++ type able to do X? (compile-time rows of the binding)
template <typename F>
concept HasMap = requires(const std::string& p) {
  F::Map(p, MapMode::kReadOnly, LoadOptions{});
};
template <typename F>
concept IsScalable = std::is_same_v<F, ScalableFilter>;

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
// frombytes()'s work with its keywords: Filter::LoadFromBytes (a kind's, or AnyFilter's for
// bloomery.loads), checksums verified.
template <typename Filter>
Filter FromBytes(const py::bytes& data, bool concurrent, uint64_t max_bytes) {
  return FromBytes<Filter>(std::string_view(data),
                           MakeLoadOptions(concurrent, max_bytes, true, false));
}

// load()'s work with its keywords: Loaded::Load (a kind's, or AnyFilter's for bloomery.load) of
// the file `path` names, errors as a read's.
template <typename Loaded>
Loaded LoadFile(py::handle path, bool concurrent, uint64_t max_bytes, bool verify_checksums,
                bool allow_dirty) {
  const std::string file = FsPath(path);
  const LoadOptions options = MakeLoadOptions(concurrent, max_bytes, verify_checksums, allow_dirty);
  return OrThrow(WithoutGil([&] { return Loaded::Load(file, options); }), /*reading=*/true);
}

// A filter of any kind (AnyFilter::Load's, LoadFromBytes') as its kind's class, the one that
// kind's own load() and frombytes() return: bloomery.load's and loads' one read of the file.
// A kind of the library's list that module.cc binds no class for is a TypeError naming it.
inline py::object WrapAny(AnyFilter filter) {
  return filter.Visit([]<typename F>(F& f) {
    if (py::detail::get_type_info(typeid(PyFilter<F>)) == nullptr) {
      throw py::type_error("bloomery: this build binds no Python class for a " +
                           std::string(FilterKindName(kKindOf<F>)) + " filter");
    }
    return py::cast(Wrap(std::move(f)));
  });
}

// What a copy (copy(), copy.copy, pickle, union) keeps that the file format does not carry, as
// the options it is loaded with: the mode, and a scalable filter's memory cap and huge-page
// choice, which its later stages are created under (the fixed-size kinds use theirs only at
// creation).
template <typename Filter>
LoadOptions CopyOptions(const Filter& filter) {
  LoadOptions options = MakeLoadOptions(filter.concurrent(), 0, true, false);
  if constexpr (IsScalable<Filter>) {
    options.max_bytes = filter.options().memory.max_memory_bytes;
    options.huge_pages = filter.options().memory.huge_pages;
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

// save, tobytes, tofile, copy, load, frombytes, fromfile, pickling, and map/flush where the kind
// maps files: BindCommon's part of the class (filter_class.h).
template <typename Filter>
void BindPersistence(py::class_<PyFilter<Filter>>& cls) {
  using W = PyFilter<Filter>;
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
      .def_static(
          "load",
          [](py::handle path, bool concurrent, uint64_t max_bytes, bool verify_checksums,
             bool allow_dirty) {
            return Wrap(
                LoadFile<Filter>(path, concurrent, max_bytes, verify_checksums, allow_dirty));
          },
          py::arg("path"), py::kw_only(), py::arg("concurrent") = false, py::arg("max_bytes") = 0,
          py::arg("verify_checksums") = true, py::arg("allow_dirty") = false,
          "Reads a filter file into memory, validating it. FileNotFoundError, PermissionError, "
          "bloomery.FormatError for a file that is not a valid filter of this kind, MemoryError "
          "above max_bytes.")
      .def_static(
          "frombytes",
          [](py::bytes data, bool concurrent, uint64_t max_bytes) {
            return Wrap(FromBytes<Filter>(data, concurrent, max_bytes));
          },
          py::arg("data"), py::kw_only(), py::arg("concurrent") = false, py::arg("max_bytes") = 0,
          "A filter from the bytes of its file (tobytes()).")
      .def_static(
          "fromfile",
          [](py::object file, py::ssize_t n) {
            py::bytes data = n < 0 ? file.attr("read")() : file.attr("read")(n);
            return Wrap(FromBytes<Filter>(data, false, 0));
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
}

}  // namespace bloomery::python

#endif  // BLOOMERY_PYTHON_SRC_PERSISTENCE_H_
