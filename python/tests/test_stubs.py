# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""The type stubs (python/bloomery/__init__.pyi) against the library: mypy --strict over the docs'
Python examples and over stub_calls.py (one call per public signature, also run here against the
extension), and the stubs compared with the runtime's signatures, so that drift fails the suite.
Needs mypy (Debian's `mypy` package)."""

import ast
import inspect
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import bloomery

HERE = Path(__file__).resolve().parent
PYTHON = HERE.parent  # python/: bloomery/__init__.pyi lives here
ROOT = PYTHON.parent
# BLOOMERY_STUBS names another stub file to check (a test of this test).
STUBS = Path(os.environ.get("BLOOMERY_STUBS", PYTHON / "bloomery" / "__init__.pyi"))


def mypy(*files):
    """Runs mypy --strict over `files` with the stubs as the package bloomery; (status, output)."""
    mypy_cmd = shutil.which("mypy")
    if mypy_cmd is None:
        pytest.fail("mypy is not installed (Debian: apt-get install mypy)")
    with tempfile.TemporaryDirectory() as scratch:
        package = Path(scratch) / "stubs" / "bloomery"
        package.mkdir(parents=True)
        shutil.copy(STUBS, package / "__init__.pyi")
        (package / "py.typed").write_text("")
        env = dict(os.environ, MYPYPATH=str(package.parent))
        run = subprocess.run(
            [mypy_cmd, "--strict", "--no-incremental", "--cache-dir", os.path.join(scratch, "cache"),
             "--follow-imports=silent", *map(str, files)],
            env=env, cwd=scratch, capture_output=True, text=True, timeout=240)
    return run.returncode, run.stdout + run.stderr


def docs_examples():
    """The ```python blocks of README.md and docs/*.md: (where, code)."""
    found = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text()
        for match in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
            line = text.count("\n", 0, match.start()) + 1
            found.append((f"{doc.name}:{line}", match.group(1)))
    return found


def test_docs_python_examples_type_check():
    examples = docs_examples()
    assert len(examples) >= 3  # README.md's and docs/PYTHON.md's
    with tempfile.TemporaryDirectory() as scratch:
        files = []
        for i, (where, code) in enumerate(examples):
            path = Path(scratch) / f"example_{i}.py"
            path.write_text(f"# {where}\n{code}")
            files.append(path)
        status, output = mypy(*files)
    assert status == 0, output


def test_one_call_per_public_signature_type_checks_and_runs(tmp_path):
    status, output = mypy(HERE / "stub_calls.py")
    assert status == 0, output
    # And the library takes every one of those calls.
    sys.path.insert(0, str(HERE))
    try:
        import stub_calls
    finally:
        sys.path.remove(str(HERE))
    stub_calls.main(str(tmp_path))


# ---------------------------------------------------------------------------------------------
# The stubs against the runtime.

def stub_tree():
    return ast.parse(STUBS.read_text())


def stub_classes(tree):
    """{class name: ClassDef} of the stubs."""
    return {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}


def stub_members(classes, name):
    """{member: [FunctionDef or AnnAssign...]} of stub class `name`, its stub bases' included (the
    class's own first)."""
    members = {}
    node = classes[name]
    for item in node.body:
        if isinstance(item, ast.FunctionDef):
            members.setdefault(item.name, []).append(item)
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            members.setdefault(item.target.id, []).append(item)
    for base in node.bases:
        if isinstance(base, ast.Name) and base.id in classes:
            for member, defs in stub_members(classes, base.id).items():
                members.setdefault(member, defs)
    return members


def stub_parameters(defs):
    """The parameter names, without self and cls, of every overload in `defs`; None if `defs` is
    not a method (an attribute, a property)."""
    functions = [d for d in defs if isinstance(d, ast.FunctionDef)]
    if not functions or any(_is_property(f) for f in functions):
        return None
    names = set()
    for function in functions:
        args = function.args
        for arg in args.posonlyargs + args.args + args.kwonlyargs:
            if arg.arg not in ("self", "cls"):
                names.add(arg.arg)
    return names


def _is_property(function):
    return any(isinstance(d, ast.Name) and d.id == "property" for d in function.decorator_list)


def split_top_level(text):
    """`text` split at the commas outside brackets and quotes."""
    parts, depth, quote, current = [], 0, None, ""
    for c in text:
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        current += c
    if current.strip():
        parts.append(current)
    return [p.strip() for p in parts]


def runtime_parameters(function, name):
    """(The parameter names, without self, of a runtime function or method; whether it forwards
    **keywords): pybind11's signature lines in its docstring ("name(self: T, a: int = 0, *, b: ...)
    -> R", one per overload), or inspect.signature for Python code."""
    doc = function.__doc__ or ""
    if not doc.startswith(f"{name}(") and not re.match(rf"^{re.escape(name)}\(", doc):
        try:
            signature = inspect.signature(function)
        except (TypeError, ValueError):
            signature = None
        if signature is not None and not doc.startswith("Overloaded function"):
            params = signature.parameters.values()
            return ({p.name for p in params if p.name not in ("self", "cls")
                     and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)},
                    any(p.kind == p.VAR_KEYWORD for p in params))
    names, matched = set(), False
    for line in doc.splitlines():
        match = re.match(rf"^(?:\d+\. )?{re.escape(name)}\((.*)\) -> ", line)
        if not match:
            continue
        matched = True
        for part in split_top_level(match.group(1)):
            param = part.split(":")[0].split("=")[0].strip()
            if param and param not in ("self", "*", "/", "cls") and not param.startswith("*"):
                names.add(param)
    assert matched, f"no signature for {name}"
    return names, False


def native_base(cls):
    """The class of the extension that Python class `cls` is built on (itself if native)."""
    return next(c for c in cls.__mro__ if c.__module__.startswith("bloomery._native"))


# The dunder methods the stubs must have; their parameters are positional (pybind11 names them
# arg0), so only their number is compared.
OPERATORS = {"__init__", "__contains__", "__len__", "__or__", "__ior__", "__and__", "__iand__"}


def compare(where, actual, forwards, stub, forwarded, problems):
    """Records in `problems` where the runtime's parameter names `actual` and the stubs' `stub`
    differ. A runtime that forwards **keywords to `forwarded`'s parameters may have the stubs name
    those."""
    if forwards:
        ok = actual <= stub and stub <= actual | forwarded
    else:
        ok = actual == stub
    if not ok:
        problems.append(f"{where}: runtime parameters {sorted(actual)}"
                        f"{' + **keywords for ' + str(sorted(forwarded)) if forwards else ''}, "
                        f"stubs {sorted(stub)}")


def public_classes():
    return {name: getattr(bloomery, name) for name in bloomery.__all__
            if inspect.isclass(getattr(bloomery, name))}


def is_attribute(cls, member):
    static = inspect.getattr_static(cls, member, None)
    return isinstance(static, property) or type(static).__name__ == "property" or \
        not callable(getattr(cls, member))


def test_stubs_name_every_runtime_class_function_method_and_parameter():
    tree = stub_tree()
    classes = stub_classes(tree)
    functions = {node.name: [node] for node in tree.body if isinstance(node, ast.FunctionDef)}
    problems = []
    for name in bloomery.__all__:
        value = getattr(bloomery, name)
        if inspect.isclass(value):
            if name not in classes:
                problems.append(f"class {name} is not in the stubs")
                continue
            if issubclass(value, BaseException):
                continue
            members = stub_members(classes, name)
            for member in sorted((set(dir(value)) - set(dir(object))) | {"__init__"}):
                if member.startswith("_") and member not in OPERATORS:
                    continue
                where = f"{name}.{member}"
                if member not in members:
                    problems.append(f"{where} is not in the stubs")
                    continue
                stub = stub_parameters(members[member])
                if is_attribute(value, member):
                    if stub is not None:
                        problems.append(f"{where} is an attribute, the stubs a method")
                    continue
                if stub is None:
                    problems.append(f"{where} is a method, the stubs an attribute")
                    continue
                actual, forwards = runtime_parameters(getattr(value, member), member)
                if member != "__init__" and member in OPERATORS:
                    if len(actual) != len(stub):
                        problems.append(f"{where}: {len(actual)} parameters, stubs {len(stub)}")
                    continue
                forwarded = set()
                if forwards:
                    forwarded, _ = runtime_parameters(getattr(native_base(value), member), member)
                compare(where, actual, forwards, stub, forwarded, problems)
        elif callable(value):
            if name not in functions:
                problems.append(f"function {name} is not in the stubs")
                continue
            actual, forwards = runtime_parameters(value, name)
            # load and loads forward to a kind's load and frombytes.
            forwarded = set()
            if forwards:
                native = {"load": "load", "loads": "frombytes"}[name]
                for kind in (bloomery.BlockedFilter, bloomery.ScalableFilter):
                    forwarded |= runtime_parameters(getattr(kind, native), native)[0]
            compare(name, actual, forwards, stub_parameters(functions[name]), forwarded, problems)
    assert not problems, "\n".join(problems)


def literal_values(node, aliases):
    """The strings of every Literal in annotation `node` (aliases resolved), and whether it takes
    another type besides (str, a class: not a closed set)."""
    values, open_ = set(), False
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        for side in (node.left, node.right):
            v, o = literal_values(side, aliases)
            values |= v
            open_ |= o
    elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and \
            node.value.id in ("Literal", "Optional", "Union"):
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for item in items:
            if node.value.id == "Literal":
                values.add(item.value)
            else:
                v, o = literal_values(item, aliases)
                values |= v
                open_ |= o
    elif isinstance(node, ast.Name) and node.id in aliases:
        return literal_values(aliases[node.id], aliases)
    elif isinstance(node, ast.Constant) and node.value is None:
        pass
    else:
        open_ = True
    return values, open_


def stub_layouts(classes, aliases, name):
    """The layout values the stubs give class `name`'s constructor, and its .layout."""
    members = stub_members(classes, name)
    init = members["__init__"][0]
    args = init.args.args + init.args.kwonlyargs
    taken = next((a for a in args if a.arg == "layout"), None)
    accepted = literal_values(taken.annotation, aliases) if taken else (set(), False)
    prop = members["layout"][0]
    returned = literal_values(prop.returns, aliases)
    return accepted, returned


LAYOUT_MADE = {
    "BlockedFilter": lambda layout: bloomery.BlockedFilter(1000, 0.01, layout=layout),
    "ClassicFilter": lambda layout: bloomery.ClassicFilter(1000, 0.01, layout=layout),
    "BloomFilter": lambda layout: bloomery.BloomFilter(1000, 0.01, layout=layout),
    "ScalableFilter": lambda layout: bloomery.ScalableFilter(100, 0.01, layout=layout),
    "ScalableBloomFilter": lambda layout: bloomery.ScalableBloomFilter(100, 0.01, layout=layout),
    "WindowedFilter": lambda layout: bloomery.WindowedFilter(1000, 0.01, layout=layout),
}


def test_stub_layout_literals_hold_every_layout_the_runtime_takes_and_answers():
    tree = stub_tree()
    classes = stub_classes(tree)
    aliases = {node.targets[0].id: node.value for node in tree.body
               if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)}
    assert set(LAYOUT_MADE) == {name for name, cls in public_classes().items()
                                if hasattr(cls, "layout")}
    problems = []
    for name, make in LAYOUT_MADE.items():
        # The names the runtime may take: those its refusal of an unknown one lists.
        with pytest.raises(ValueError) as refused:
            make("no-such-layout")
        candidates = set(re.findall(r"'([a-z0-9]+)'", str(refused.value))) - {"no"}
        assert {"line512", "block256", "word64"} <= candidates, str(refused.value)
        accepted, returned = stub_layouts(classes, aliases, name)
        assert not accepted[1] and not returned[1], f"{name}: layout is not a closed Literal"
        for layout in sorted(candidates):
            try:
                made = make(layout)
            except ValueError:
                continue  # the runtime refuses it for this kind
            if layout not in accepted[0]:
                problems.append(f"{name}(layout={layout!r}) runs, the stubs refuse it")
            if made.layout not in returned[0]:
                problems.append(f"{name}.layout is {made.layout!r}, not in the stubs' Literal")
        default = make(None).layout
        if default not in returned[0]:
            problems.append(f"{name}.layout is {default!r}, not in the stubs' Literal")
    assert not problems, "\n".join(problems)
