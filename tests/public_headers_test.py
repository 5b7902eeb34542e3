# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""The public headers (include/bloomery/*.h, not detail/) are contracts, not a notebook.

Each header fails if:
  - 30 % or more of its lines are comments (a line whose first non-blank characters are //);
  - it holds a date (2026-01-31);
  - it tells history ("was once", "used to", "no longer", "older files", "since 0.x",
    "before kFields"...);
  - it quotes a measurement ("measured", "12 ns", "ns/key": figures go to docs/PERFORMANCE.md);
  - it points at a file that is not installed (benchmarks/, lib/, tests/, redis/, tools/);
  - it names an intrinsic (_mm*, __m128/__m256/__m512, immintrin.h): those belong in detail/.

Usage: public_headers_test.py INCLUDE_DIR  (the directory holding bloomery/).
"""

import pathlib
import re
import sys

MAX_COMMENT_RATIO = 0.30

# Each: (what it is, a pattern over one line). History words are matched in the forms that tell
# history, so "before the call returns" or "older than max_age" (contracts) pass.
LINE_CHECKS = [
    ("a date", re.compile(r"\b20\d\d-\d\d\b")),
    ("history", re.compile(
        r"\b(?i:(?:was|were) (?:once|a|an|then|changed|written by|made by))\b"
        r"|\b(?i:used to|no longer|formerly|previously|nowadays|until now)\b"
        r"|\b(?i:older (?:files?|versions?|releases?|builds?|bloomery))\b"
        r"|\b(?i:since) (?:0\.|\d+\.\d|v\d|(?i:version|release|bloomery|the fix|the change))"
        r"|\b(?i:before) (?:k[A-Z]\w*|0\.\d|v\d|(?i:version|release|bloomery|the fix|the change))"
        r"|\b(?i:what (?:every|each|the) \w+ (?:was|did))\b")),
    ("a measurement", re.compile(r"\b[Mm]easured\b|\b\d+(?:\.\d+)? ?ns\b|\bns/(?:key|op)\b")),
    ("a pointer to an uninstalled file",
     re.compile(r"(?<![\w/.])(?:benchmarks|lib|tests|redis|tools)/[\w./*<-]")),
    ("an intrinsic", re.compile(r"\b_mm\d*_\w+|\b__m(?:128|256|512)\w*|immintrin\.h")),
]
COMMENT = re.compile(r"^\s*//")


def check(header: pathlib.Path) -> list[str]:
    lines = header.read_text(encoding="utf-8").splitlines()
    problems = []
    comments = sum(1 for line in lines if COMMENT.match(line))
    if lines and comments / len(lines) >= MAX_COMMENT_RATIO:
        problems.append(f"{comments} of {len(lines)} lines are comments "
                        f"({100 * comments / len(lines):.0f} %, the bound is "
                        f"{100 * MAX_COMMENT_RATIO:.0f} %)")
    for number, line in enumerate(lines, 1):
        for what, pattern in LINE_CHECKS:
            match = pattern.search(line)
            if match:
                problems.append(f"line {number}: {what} ({match.group(0)!r}): {line.strip()}")
    return problems


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    headers = sorted(pathlib.Path(sys.argv[1], "bloomery").glob("*.h"))
    if not headers:
        print(f"no headers under {sys.argv[1]}/bloomery", file=sys.stderr)
        return 2
    failed = 0
    for header in headers:
        problems = check(header)
        if problems:
            failed += 1
            print(f"{header.name}:")
            for problem in problems:
                print(f"  {problem}")
    print(f"{failed} of {len(headers)} public headers fail")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
