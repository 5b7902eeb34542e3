// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// InstallSaveCleanupOnSignals (file.h) and the slots of memory/internal/save_cleanup.h.
#include "memory/internal/save_cleanup.h"

#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "bloomery/file.h"

namespace bloomery {
namespace detail {
namespace {

// kFree -> kWriting (one saver owns it) -> kArmed (the handler may read `path`) -> kFree.
enum SlotState : int { kFree = 0, kWriting = 1, kArmed = 2 };

struct Slot {
  std::atomic<int> state{kFree};
  char path[PATH_MAX] = {};
};

// More than the saves one process runs at once in practice; lock-free atomics are what a signal
// handler may touch.
constexpr int kSlots = 16;
Slot g_slots[kSlots];
static_assert(std::atomic<int>::is_always_lock_free);

}  // namespace

SaveTempSlot::SaveTempSlot(const std::string& temp) noexcept {
  if (temp.size() >= PATH_MAX) return;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kWriting, std::memory_order_acquire)) {
      continue;
    }
    std::memcpy(g_slots[i].path, temp.c_str(), temp.size() + 1);
    g_slots[i].state.store(kArmed, std::memory_order_release);
    index_ = i;
    return;
  }
}

SaveTempSlot::~SaveTempSlot() {
  if (index_ >= 0) g_slots[index_].state.store(kFree, std::memory_order_release);
}

namespace {

struct sigaction g_previous[NSIG];

// Async-signal-safe throughout: atomics, unlink, signal, raise.
void OnSignal(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  for (Slot& slot : g_slots) {
    if (slot.state.load(std::memory_order_acquire) == kArmed) unlink(slot.path);
  }
  errno = saved_errno;
  const struct sigaction& previous = g_previous[sig];
  // The program had its own handler: it decides what the signal means.
  if ((previous.sa_flags & SA_SIGINFO) != 0) {
    previous.sa_sigaction(sig, info, context);
    return;
  }
  if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(sig);
    return;
  }
  // Die of the signal as if no handler had been installed, so the parent sees "killed by SIGTERM"
  // (the signal stays blocked until this handler returns, then the default action runs).
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace
}  // namespace detail

absl::Status InstallSaveCleanupOnSignals() {
  for (const int sig : {SIGINT, SIGTERM}) {
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) != 0) {
      return absl::InternalError(absl::StrCat("sigaction: ", std::strerror(errno)));
    }
    const bool siginfo = (current.sa_flags & SA_SIGINFO) != 0;
    if (siginfo && current.sa_sigaction == detail::OnSignal) continue;  // installed already
    // An ignored signal stays ignored: a background job of a non-interactive shell, or nohup,
    // must not start dying of it.
    if (!siginfo && current.sa_handler == SIG_IGN) continue;
    detail::g_previous[sig] = current;
    struct sigaction action {};
    action.sa_sigaction = detail::OnSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    if (sigaction(sig, &action, nullptr) != 0) {
      return absl::InternalError(absl::StrCat("sigaction: ", std::strerror(errno)));
    }
  }
  return absl::OkStatus();
}

}  // namespace bloomery
