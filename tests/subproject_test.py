#!/usr/bin/env python3
# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""bloomery as a parent project's Meson subproject builds the library and nothing else.

A parent project is written in a scratch directory, with subprojects/bloomery a symlink to this
source tree (offline: no wrap is fetched), and an executable of its own that uses
dependency('bloomery') and is its only test. Checked:
- configured as is, bloomery adds no target but its libraries (no tests, benchmarks, fuzzers,
  tools, Python or Redis parts) and no test to the parent's `meson test --list`; the parent builds
  and its test runs;
- -Dbloomery:default_library=static -Dbloomery:install_library=false leaves one static library,
  not installed;
- -Dbloomery:tests=true turns bloomery's tests back on.
The number of build steps is printed (`ninja -n`).

usage: subproject_test.py SOURCE_ROOT MESON -- CXX...
"""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

PARENT_MESON = """\
project('parent', 'cpp', default_options : ['cpp_std=c++20'])
app = executable('app', 'app.cc', dependencies : dependency('bloomery'))
test('app', app)
"""

PARENT_APP = """\
#include <bloomery/bloomery.h>

#include <cstdint>

int main() {
  auto filter = bloomery::BlockedFilter::Create({.capacity = 1000, .fpr = 0.01});
  if (!filter.ok()) return 1;
  (void)filter->Insert(uint64_t{42});
  return filter->MayContain(uint64_t{42}) ? 0 : 1;
}
"""

LIBRARY_TYPES = {"shared library", "static library"}


def run(cmd, **kwargs):
    print("$", " ".join(map(str, cmd)), flush=True)
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=1200, **kwargs)
    if result.returncode != 0:
        sys.stderr.write(result.stdout + result.stderr)
        raise SystemExit(f"FAIL: exit status {result.returncode}")
    return result.stdout


def build_steps(meson, build):
    """The steps `ninja` would run to build everything, from its dry run's last line."""
    out = run([meson, "compile", "-C", build, "--ninja-args=-n"])
    counts = re.findall(r"\[(\d+)/(\d+)\]", out)
    return int(counts[-1][1]) if counts else 0


def main():
    sep = sys.argv.index("--")
    source, meson = sys.argv[1:sep]
    env = dict(os.environ, CXX=" ".join(sys.argv[sep + 1 :]))
    failures = []
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="bloomery-subproject-"))
    try:
        (scratch / "meson.build").write_text(PARENT_MESON)
        (scratch / "app.cc").write_text(PARENT_APP)
        (scratch / "subprojects").mkdir()
        (scratch / "subprojects" / "bloomery").symlink_to(pathlib.Path(source).resolve())

        # As is: the library only.
        build = scratch / "build"
        run([meson, "setup", build], cwd=scratch, env=env)
        targets = json.loads(run([meson, "introspect", build, "--targets"]))
        extra = sorted(f"{t['name']} ({t['type']})" for t in targets
                       if t.get("subproject") == "bloomery" and t["type"] not in LIBRARY_TYPES)
        if extra:
            failures.append(f"bloomery as a subproject builds more than its library: {extra}")
        if not any(t.get("subproject") == "bloomery" for t in targets):
            failures.append("no target of the subproject: was bloomery configured at all?")
        tests = json.loads(run([meson, "introspect", build, "--tests"]))
        names = sorted(t["name"] for t in tests)
        if names != ["app"]:
            failures.append(f"the parent's tests should be its own 'app' alone, not {names}")
        steps = build_steps(meson, build)
        print(f"build steps of the parent with bloomery as a subproject: {steps}")
        run([meson, "compile", "-C", build], env=env)
        run([meson, "test", "-C", build, "--print-errorlogs"], env=env)

        # Linked statically and installed with nothing of bloomery's (docs/INSTALL.md).
        build_static = scratch / "build-static"
        run([meson, "setup", build_static, "-Dbloomery:default_library=static",
             "-Dbloomery:install_library=false"], cwd=scratch, env=env)
        ours = sorted((t["name"], t["type"], t["installed"])
                      for t in json.loads(run([meson, "introspect", build_static, "--targets"]))
                      if t.get("subproject") == "bloomery")
        if ours != [("bloomery", "static library", False)]:
            failures.append(f"static and not installed, the subproject's targets are {ours}")

        # A part turned back on by the parent.
        build_tests = scratch / "build-tests"
        run([meson, "setup", build_tests, "-Dbloomery:tests=true"], cwd=scratch, env=env)
        tests = json.loads(run([meson, "introspect", build_tests, "--tests"]))
        ours = [t["name"] for t in tests if t["name"] != "app"]
        if not ours:
            failures.append("-Dbloomery:tests=true registered no test of bloomery's")
        print(f"with -Dbloomery:tests=true: {len(ours)} tests of bloomery's, "
              f"{build_steps(meson, build_tests)} build steps")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for failure in failures:
        sys.stderr.write(f"FAIL: {failure}\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
