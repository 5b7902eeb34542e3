// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// py_filter.h: PyFilter<Filter>, a filter with its Python-side thread guard (the class every
// bound method takes), and the pybind11 caster that refuses an instance whose __init__ never ran.
#ifndef BLOOMERY_PYTHON_SRC_PY_FILTER_H_
#define BLOOMERY_PYTHON_SRC_PY_FILTER_H_

#include <sys/types.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <typeinfo>
#include <utility>

#include "common.h"

namespace bloomery::python {

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

template <typename Filter>
std::unique_ptr<PyFilter<Filter>> Wrap(Filter filter) {
  return std::make_unique<PyFilter<Filter>>(std::move(filter));
}

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

#endif  // BLOOMERY_PYTHON_SRC_PY_FILTER_H_
