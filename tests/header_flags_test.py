#!/usr/bin/env python3
# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""Every public header but the AVX2 opt-in reads the same whatever the includer's target flags.

An inline function whose body depends on -march (through __AVX2__ and the like) has different
definitions in files built with different flags: an ODR violation. This preprocesses each header
with the default target and with x86-64-v3 and v4, keeps the lines that come from bloomery's own
headers (the linemarkers say which file a line is from; Abseil's and the standard library's own
flag-dependent code is theirs), and fails on any difference.

Usage: header_flags_test.py INCLUDE_DIR COMPILER... -- HEADER...
"""
import concurrent.futures
import os
import subprocess
import sys

FLAG_SETS = [[], ["-march=x86-64-v3"], ["-march=x86-64-v4"]]


def own_lines(compiler, include_dir, header, flags):
    out = subprocess.run(
        compiler + ["-std=c++20", "-E", "-x", "c++", "-I", include_dir, *flags, "-"],
        input=f'#include "bloomery/{header}"\n', capture_output=True, text=True, check=True
    ).stdout
    own_dir = os.path.join(os.path.realpath(include_dir), "bloomery") + os.sep
    lines, current = [], ""
    for line in out.splitlines():
        if line.startswith("# "):  # linemarker: # LINE "FILE" FLAGS
            parts = line.split('"')
            if len(parts) >= 2:
                current = os.path.realpath(parts[1]) if parts[1][:1] not in ("<", "") else ""
            continue
        if current.startswith(own_dir) and line.strip():
            lines.append((os.path.basename(current), line))
    return lines


def main():
    args = sys.argv[1:]
    split = args.index("--")
    include_dir, compiler, headers = args[0], args[1:split], args[split + 1:]
    # 3 preprocessor runs a header, each a second or so of Abseil and the standard library: two at
    # a time (meson runs other tests beside this one on CI's 2 cores).
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        runs = {(header, i): pool.submit(own_lines, compiler, include_dir, header, flags)
                for header in headers for i, flags in enumerate(FLAG_SETS)}
        lines = {key: run.result() for key, run in runs.items()}
    failures = 0
    for header in headers:
        base = lines[(header, 0)]
        if not base:
            print(f"{header}: no lines of bloomery's headers found (linemarkers changed?)")
            failures += 1
            continue
        for i, flags in enumerate(FLAG_SETS[1:], start=1):
            other = lines[(header, i)]
            if other != base:
                diff = next(((a, b) for a, b in zip(base, other) if a != b), None)
                print(f"{header}: differs under {' '.join(flags)} ({len(base)} vs {len(other)} "
                      f"lines; first difference: {diff})")
                failures += 1
    print(f"{len(headers)} headers, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
