#!/usr/bin/env python3
# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""The filters' single-key calls leave no code of their own for another file to link.

BlockedFilter's Insert and MayContain probe inline in AVX2 whatever the includer's flags
(bloomery/detail/stored_layouts.h). That is safe only if a file built with wider flags (x86-64-v3, v4)
exports nothing another file may call instead of its own copy: an out-of-line inline function
(a weak symbol) compiled there would run AVX-512 code on a CPU without it. So this compiles one
file calling every kind's single-key forms (integer, string and KeyHash keys; Insert and
MayContain) for the default target, x86-64-v3 and x86-64-v4, and fails on any symbol of namespace
bloomery that the object defines with external linkage. Built for AVX2 (v3, v4), the probe must
also be inlined into the caller's loop (no local copy of the probe's entries is left): that is
what makes the ordinary call as fast as the opt-in avx2::Prober (docs/PERFORMANCE.md, "The call
a user writes").

Usage: inline_probe_test.py COMPILER... -- INCLUDE_DIR...
"""
import os
import re
import subprocess
import sys
import tempfile

FLAG_SETS = [[], ["-march=x86-64-v3"], ["-march=x86-64-v4"]]

SOURCE = r'''
#include <cstdint>
#include <span>
#include <string_view>

#include "bloomery/bloomery.h"

template <class Filter>
size_t Loops(Filter& f, std::span<const uint64_t> ints, std::span<const std::string_view> strs) {
  size_t n = 0;
  for (uint64_t k : ints) n += static_cast<size_t>(f.Insert(k));
  for (std::string_view k : strs) n += static_cast<size_t>(f.Insert(k));
  for (uint64_t k : ints) n += static_cast<size_t>(f.Insert(f.hasher()(k)));
  const Filter& c = f;
  for (uint64_t k : ints) n += c.MayContain(k);
  for (std::string_view k : strs) n += c.MayContain(k);
  for (uint64_t k : ints) n += c.MayContain(c.hasher()(k));
  return n;
}

#define CALLS(Kind)                                                         \
  size_t Calls##Kind(bloomery::Kind& f, std::span<const uint64_t> ints,     \
                     std::span<const std::string_view> strs) {              \
    return Loops(f, ints, strs);                                            \
  }
CALLS(BlockedFilter)
CALLS(ClassicFilter)
CALLS(CountingFilter)
CALLS(ScalableFilter)
'''


# A mangled name of namespace bloomery's own: a function, a static or guard variable in one.
OWN = re.compile(r"^_Z[A-Z]*Z?NK?8bloomery")


def symbols(obj):
    """(type, mangled name, demangled name) of each symbol `obj` defines."""
    rows = []
    for demangle in ([], ["-C"]):
        out = subprocess.run(["nm", *demangle, "--defined-only", obj], capture_output=True,
                             text=True, check=True).stdout
        rows.append([line.split(" ", 2) for line in out.splitlines() if line.count(" ") >= 2])
    return [(m[1], m[2], d[2]) for m, d in zip(*rows)]


def main():
    args = sys.argv[1:]
    split = args.index("--")
    compiler, include_dirs = args[:split], args[split + 1:]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "calls.cc")
        with open(src, "w") as f:
            f.write(SOURCE)
        for flags in FLAG_SETS:
            name = " ".join(flags) or "default target"
            obj = os.path.join(tmp, "calls.o")
            subprocess.run(compiler + ["-std=c++20", "-O2", *flags, "-c", src, "-o", obj] +
                           [f"-I{d}" for d in include_dirs], check=True)
            rows = symbols(obj)
            exported = [d for t, m, d in rows if t.isupper() and OWN.match(m)]
            # The probe's entries are templates: nm prints their return type first.
            probes = [d for t, m, d in rows if "bloomery::detail::" in d]
            for s in exported:
                print(f"{name}: exports {s}")
            failures += len(exported)
            if flags and probes:
                print(f"{name}: the probe was not inlined: {probes}")
                failures += 1
            if not flags and not probes:
                # The baseline file calls its own (local) copy; none means the calls never reached
                # the inline probe, and this test would check nothing.
                print(f"{name}: no local copy of the probe: does MayContain still reach it?")
                failures += 1
            print(f"{name}: {len(rows)} symbols defined, {len(exported)} of bloomery's exported; "
                  f"{len(probes)} local probe entries")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
