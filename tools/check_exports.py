#!/usr/bin/env python3
# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""Lists the dynamic symbols a shared library defines and fails on any outside namespace bloomery.

    tools/check_exports.py build/lib/libbloomery.so [--list]

libbloomery.so is built with -fvisibility=hidden and exports what BLOOMERY_EXPORT marks
(include/bloomery/export.h). A symbol of Abseil, the standard library, Highway or xxHash in its
dynamic table is an accident: a template instantiated in our code and exported by default, which
a program could bind to instead of its own copy, and which ties our ABI to theirs. The test reads
mangled names (not demangled text, where a template's return type comes first): an entity of
namespace bloomery is `_ZN` [CV/ref qualifiers] `8bloomery`, after an optional special prefix
(vtable, typeinfo, guard variable...). Exit 0 and a count, or 1 and the symbols that do not belong.
"""
import re
import subprocess
import sys

# _Z, then an optional special name (TV vtable, TI/TS typeinfo, TT VTT, Th/Tv thunks with their
# offsets, GV guard variable, TH/TW thread-local init/wrapper), then a nested name in bloomery.
OURS = re.compile(r"^_Z(?:T[VISTHW]|GV|T[hv][n_0-9]*_)?N[rVKRO]*8bloomery")


def defined_dynamic_symbols(path):
    out = subprocess.run(["nm", "-D", "--defined-only", path], check=True, capture_output=True,
                         text=True).stdout
    return [line.split()[-1] for line in out.splitlines() if line.strip()]


def demangle(names):
    if not names:
        return []
    return subprocess.run(["c++filt"], input="\n".join(names), check=True, capture_output=True,
                          text=True).stdout.splitlines()


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    symbols = defined_dynamic_symbols(argv[1])
    foreign = [s for s in symbols if not OURS.match(s)]
    if "--list" in argv:
        for name in sorted(demangle(symbols)):
            print(name)
    if foreign:
        print(f"{argv[1]}: {len(foreign)} of {len(symbols)} exported symbols are not bloomery's:")
        for mangled, name in zip(foreign, demangle(foreign)):
            print(f"  {name}  ({mangled})")
        return 1
    print(f"{argv[1]}: {len(symbols)} exported symbols, all in namespace bloomery")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
