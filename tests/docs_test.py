#!/usr/bin/env python3
# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""Every code block of README.md and docs/*.md still works, so that none can rot.

- ```cpp blocks compile (-std=c++20 -Wall -Wextra -Werror as the project builds, against the built library's headers; a block
  that includes an *_avx2.h header with -march=x86-64-v3); one that defines main() is linked
  against the built libbloomery.so and run in a scratch directory, and must exit 0.
- A ```cmake block builds the ```cpp block before it (its main.cc) against the CMake package that
  `meson install --destdir` writes, and runs it: the README's first program, as a user builds it.
  Skipped, and said so, where cmake or the package is missing.
- ```python blocks run under the Python that built the extension, in a scratch directory, with the
  build tree's package on the path (PYTHONPATH=python:BUILD/python). Skipped where Python is off.
- ```yaml blocks are Prometheus alert rules: `promtool check rules` passes them (skipped, and said
  so, where promtool is missing).
- ```sh blocks parse (bash -n): they install packages and start servers, so are not run here; the
  README's two quick-start commands are the ones CI runs (.ci/run).
Untagged blocks are text (a file layout, a table) and are left alone.

usage: docs_test.py SOURCE_ROOT BUILD_ROOT LIBBLOOMERY_SO PYTHON MESON -- CXX...
(PYTHON and MESON may be empty.)
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```(\w*)\s*$")


def blocks(path):
    """(language, first line number, text) of every fenced block of `path`."""
    out = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start = i + 1
        j = start
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        if j == len(lines):
            raise SystemExit(f"{path}:{i + 1}: a code block that never closes")
        out.append((m.group(1), start + 1, "\n".join(lines[start:j]) + "\n"))
        i = j + 1
    return out


def run(cmd, what, **kwargs):
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kwargs)
    if result.returncode != 0:
        sys.stderr.write(f"FAIL {what}\n$ {' '.join(map(str, cmd))}\n{result.stdout}{result.stderr}\n")
        return False
    return True


def main():
    sep = sys.argv.index("--")
    source, build, library, python, meson = map(str, sys.argv[1:sep])
    cxx = sys.argv[sep + 1 :]
    source, build = pathlib.Path(source), pathlib.Path(build)
    files = [source / "README.md"] + sorted((source / "docs").glob("*.md"))
    absl_libs = subprocess.run(
        ["pkg-config", "--libs", "absl_status", "absl_statusor", "absl_strings"],
        capture_output=True, text=True, check=True).stdout.split()
    includes = [f"-I{source / 'include'}", f"-I{build / 'include'}"]
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="bloomery-docs-"))
    failures = 0
    checked = {"cpp": 0, "cmake": 0, "python": 0, "sh": 0, "yaml": 0}
    skipped = []
    installed = None  # the destdir `meson install` wrote, once
    try:
        for path in files:
            previous_cpp = None
            for number, (language, line, text) in enumerate(blocks(path)):
                where = f"{path.relative_to(source)}:{line}"
                work = scratch / f"{path.stem}_{number}"
                work.mkdir()
                if language == "cpp":
                    src = work / "main.cc"
                    src.write_text(text)
                    # The project's own warnings (designated initializers leave fields to their defaults).
                    flags = ["-std=c++20", "-Wall", "-Wextra", "-Wno-missing-field-initializers",
                             "-Werror"] + includes
                    if "_avx2.h" in text:
                        flags.append("-march=x86-64-v3")
                    if "int main(" in text:
                        exe = work / "program"
                        ok = run(cxx + flags + [str(src), "-o", str(exe), library] + absl_libs +
                                 [f"-Wl,-rpath,{pathlib.Path(library).parent}"], f"{where}: build")
                        ok = ok and run([str(exe)], f"{where}: run", cwd=work)
                    else:
                        ok = run(cxx + flags + ["-c", str(src), "-o", str(work / "main.o")],
                                 f"{where}: compile")
                    failures += not ok
                    checked["cpp"] += 1
                    previous_cpp = text
                elif language == "cmake":
                    cmake = shutil.which("cmake")
                    if previous_cpp is None or "int main(" not in previous_cpp:
                        sys.stderr.write(f"FAIL {where}: a cmake block needs a program before it\n")
                        failures += 1
                        continue
                    if cmake is None or not meson:
                        skipped.append(f"{where} (no cmake or meson)")
                        continue
                    if installed is None:
                        installed = scratch / "destdir"
                        if not run([meson, "install", "-C", str(build), "--destdir", str(installed),
                                    "--no-rebuild", "--quiet"], f"{where}: meson install"):
                            failures += 1
                            continue
                    configs = list(installed.rglob("bloomeryConfig.cmake"))
                    if not configs:
                        skipped.append(f"{where} (meson wrote no CMake package: cmake was "
                                       "missing when the build was set up)")
                        continue
                    (work / "main.cc").write_text(previous_cpp)
                    (work / "CMakeLists.txt").write_text(text)
                    ok = run([cmake, "-S", str(work), "-B", str(work / "out"),
                              f"-Dbloomery_DIR={configs[0].parent}"], f"{where}: cmake configure")
                    ok = ok and run([cmake, "--build", str(work / "out")], f"{where}: cmake build")
                    programs = [p for p in (work / "out").iterdir()
                                if p.is_file() and os.access(p, os.X_OK)]
                    ok = ok and len(programs) == 1 and run([str(programs[0])], f"{where}: run",
                                                           cwd=work)
                    failures += not ok
                    checked["cmake"] += 1
                elif language == "python":
                    if not python:
                        skipped.append(f"{where} (the Python package is not built)")
                        continue
                    script = work / "block.py"
                    script.write_text(text)
                    env = dict(os.environ,
                               PYTHONPATH=f"{source / 'python'}{os.pathsep}{build / 'python'}")
                    failures += not run([python, str(script)], f"{where}: run", cwd=work, env=env)
                    checked["python"] += 1
                elif language in ("sh", "bash"):
                    script = work / "block.sh"
                    script.write_text(text)
                    failures += not run(["bash", "-n", str(script)], f"{where}: bash -n")
                    checked["sh"] += 1
                elif language == "yaml":
                    promtool = shutil.which("promtool")
                    if not promtool:
                        skipped.append(f"{where} (promtool is missing)")
                        continue
                    rules = work / "rules.yml"
                    rules.write_text(text)
                    failures += not run([promtool, "check", "rules", str(rules)],
                                        f"{where}: promtool check rules")
                    checked["yaml"] += 1
                elif language:
                    sys.stderr.write(f"FAIL {where}: no check for ```{language} blocks\n")
                    failures += 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("checked: " + ", ".join(f"{n} {lang}" for lang, n in checked.items()))
    for s in skipped:
        print(f"skipped {s}")
    if checked["cpp"] == 0 or checked["sh"] == 0:
        sys.stderr.write("FAIL: found no cpp or sh block: is the extraction broken?\n")
        failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
