// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// save_cleanup.h: the temp files of saves in progress, where a signal handler can reach them.
//
// A save writes `.NAME.tmp.PID.*` beside its target and renames it into place. A process killed by
// SIGINT or SIGTERM in between would leave that file behind (a later save removes it, but only a
// later save of the same name). While a save holds a SaveTempSlot, the handlers that
// InstallSaveCleanupOnSignals (file.h) installs unlink its temp path before the process dies.
#ifndef BLOOMERY_LIB_MEMORY_INTERNAL_SAVE_CLEANUP_H_
#define BLOOMERY_LIB_MEMORY_INTERNAL_SAVE_CLEANUP_H_

#include <string>

namespace bloomery::detail {

// Registers `temp` (a file this save created) for the lifetime of the slot. Lock-free and
// allocation-free to read, so an async-signal handler may walk the slots; a save that finds every
// slot taken (more concurrent saves than slots) is simply not covered.
class SaveTempSlot {
 public:
  explicit SaveTempSlot(const std::string& temp) noexcept;
  ~SaveTempSlot();
  SaveTempSlot(const SaveTempSlot&) = delete;
  SaveTempSlot& operator=(const SaveTempSlot&) = delete;

 private:
  int index_ = -1;
};

}  // namespace bloomery::detail

#endif  // BLOOMERY_LIB_MEMORY_INTERNAL_SAVE_CLEANUP_H_
