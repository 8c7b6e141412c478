#!/usr/bin/env python3
"""Mutation testing for PlanGate's decision modules.

    python3 scripts/mutation.py [MODULE ...] [--jobs N] [--list] [--json FILE]

MODULE is a path from scripts/mutation_modules.toml (``src/plangate/paths.py``)
or any unique suffix of one (``paths.py``, ``arbiter``). With no MODULE every
configured module runs. The module list, the test files that guard each module
and the mutants judged equivalent are data in that TOML file, not code here.

How it works: the module's source is parsed with :mod:`ast`; every mutation
below is applied as a small text edit of the original file, so a mutant has
real line numbers and a readable diff. Each mutant is written into a scratch
copy of ``src/`` and the module's test files are run against it with pytest
(``-x``). A mutant is *killed* when the tests fail (or time out) and *survives*
when they pass.

Operators:

- compare: negate a comparison (``==``/``!=``, ``<``/``>=``, ``in``/``not in``,
  ``is``/``is not``) and move an ordering boundary (``<``/``<=``);
- boolean: swap ``and``/``or``; drop a ``not``;
- constant: swap ``True``/``False``; an integer ``n`` to ``n+1`` and ``n-1``;
  a string token (no whitespace) to ``""`` and ``""`` to ``"x"``. Prose strings
  (messages and hints, which contain spaces), docstrings, f-strings and type
  annotations are not mutated;
- arithmetic: swap ``+``/``-``;
- statement: replace a ``return`` or ``raise`` by ``pass``; remove a whole rule
  row (an ``if`` without ``else`` whose body ends in ``return``/``raise``);
  remove a call statement (``out.append(x)``);
- table: drop one element of a list, tuple, set or dict literal, at module level
  too (rule tables, allow lists, severity maps).

Only the standard library and pytest are needed (pytest is in the ``test``
extra: ``pip install -e '.[dev]'``). This is deliberately not part of
``.ci/run``: one module takes minutes.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CONFIG = ROOT / "scripts" / "mutation_modules.toml"
# The hypothesis plugin is not loaded: importing it costs more CPU than a typical test
# file's whole run, and the configured tests are deterministic (no property tests).
PYTEST_ARGS = ("-x", "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest",
               "-m", "not postgres")

_NEGATE: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
_BOUNDARY: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
}
# Parents in which a replaced expression needs parentheses to keep its meaning.
_TIGHT_PARENTS = (
    ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Attribute, ast.Subscript,
    ast.Starred, ast.Await, ast.IfExp,
)


# --------------------------------------------------------------------------- mutants


@dataclass(frozen=True)
class Mutant:
    ident: str
    operator: str
    description: str
    line: int
    start: int  # character offsets into the original source
    end: int
    replacement: str

    def apply(self, source: str) -> str:
        return source[: self.start] + self.replacement + source[self.end :]


@dataclass
class _Ctx:
    qualname: str = "<module>"


class _Positions:
    """Convert ast (line, UTF-8 byte column) positions into string offsets."""

    def __init__(self, source: str) -> None:
        self.lines = source.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, lineno: int, col_bytes: int) -> int:
        line = self.lines[lineno - 1]
        return self.starts[lineno - 1] + len(line.encode("utf-8")[:col_bytes].decode("utf-8"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return start, end


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


class _Collector:
    def __init__(self, source: str) -> None:
        self.source = source
        self.pos = _Positions(source)
        self.mutants: list[Mutant] = []
        self._seen: dict[str, int] = {}

    # -- recording
    def _add(self, ctx: _Ctx, operator: str, description: str, node: ast.AST, *,
             replacement: str, span: tuple[int, int] | None = None) -> None:
        start, end = span if span is not None else self.pos.span(node)
        original = self.source[start:end]
        key = f"{ctx.qualname}|{operator}|{original}|{replacement}"
        occurrence = self._seen.get(key, 0)
        self._seen[key] = occurrence + 1
        digest = hashlib.sha256(f"{key}|{occurrence}".encode()).hexdigest()[:8]
        ident = f"{ctx.qualname}:{operator}:{digest}"
        line = self.source.count("\n", 0, start) + 1
        self.mutants.append(Mutant(ident, operator, description, line, start, end, replacement))

    def _expr(self, parent: ast.AST | None, text: str) -> str:
        return f"({text})" if isinstance(parent, _TIGHT_PARENTS) else text

    # -- traversal
    def visit_body(self, body: list[ast.stmt], ctx: _Ctx, *, in_function: bool) -> None:
        for index, stmt in enumerate(body):
            if index == 0 and _is_docstring(stmt):
                continue
            last = index == len(body) - 1
            self.visit_stmt(stmt, ctx, in_function=in_function, last_in_function=last)

    def visit_stmt(self, stmt: ast.stmt, ctx: _Ctx, *, in_function: bool,
                   last_in_function: bool = False) -> None:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            return
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner = _Ctx(stmt.name if ctx.qualname == "<module>" else f"{ctx.qualname}.{stmt.name}")
            for default in [*stmt.args.defaults, *stmt.args.kw_defaults]:
                if default is not None:
                    self.visit_expr(default, None, inner)
            self.visit_body(stmt.body, inner, in_function=True)
            return
        if isinstance(stmt, ast.ClassDef):
            inner = _Ctx(stmt.name if ctx.qualname == "<module>" else f"{ctx.qualname}.{stmt.name}")
            self.visit_body(stmt.body, inner, in_function=False)
            return
        if isinstance(stmt, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets):
                return
            self.visit_expr(stmt.value, stmt, ctx)
            return
        if isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self.visit_expr(stmt.value, stmt, ctx)
            return
        if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Name) and (
            stmt.test.id == "TYPE_CHECKING"
        ):
            return
        if isinstance(stmt, ast.Return) and in_function:
            value = stmt.value
            trivial = value is None or (isinstance(value, ast.Constant) and value.value is None)
            if not (trivial and last_in_function):
                self._add(ctx, "statement", "return replaced by pass", stmt, replacement="pass")
        if isinstance(stmt, ast.Raise) and in_function:
            self._add(ctx, "statement", "raise replaced by pass", stmt, replacement="pass")
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and in_function:
            self._add(ctx, "statement", "call statement removed", stmt, replacement="pass")
        if (
            isinstance(stmt, ast.If)
            and in_function
            and not stmt.orelse
            and len(stmt.body) > 1  # a one-statement body is covered by the statement mutant
            and isinstance(stmt.body[-1], (ast.Return, ast.Raise))
            and self.source.startswith("if", self.pos.offset(stmt.lineno, stmt.col_offset))
        ):
            desc = "whole 'if ...: return/raise' rule removed"
            self._add(ctx, "rule-row", desc, stmt, replacement="pass")
        # Recurse into the statement's own expressions and nested bodies.
        for name, value in ast.iter_fields(stmt):
            if name in ("body", "orelse", "finalbody", "handlers") and isinstance(value, list):
                for child in value:
                    if isinstance(child, ast.ExceptHandler):
                        self.visit_body(child.body, ctx, in_function=in_function)
                    elif isinstance(child, ast.stmt):
                        self.visit_stmt(child, ctx, in_function=in_function)
            elif name in ("cases",) and isinstance(value, list):
                for case in value:
                    self.visit_body(case.body, ctx, in_function=in_function)
            elif isinstance(value, ast.expr):
                if name in {"target", "annotation"}:
                    continue
                self.visit_expr(value, stmt, ctx)
            elif isinstance(value, list):
                for child in value:
                    if isinstance(child, ast.expr) and name != "targets":
                        self.visit_expr(child, stmt, ctx)
                    elif isinstance(child, ast.withitem):
                        self.visit_expr(child.context_expr, stmt, ctx)

    def visit_expr(self, node: ast.expr, parent: ast.AST | None, ctx: _Ctx) -> None:
        if isinstance(node, ast.JoinedStr):
            return
        if isinstance(node, (ast.Lambda,)):
            self.visit_expr(node.body, node, ctx)
            return
        self._mutate_expr(node, parent, ctx)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.visit_expr(child, node, ctx)
            elif isinstance(child, ast.comprehension):
                self.visit_expr(child.iter, node, ctx)
                for cond in child.ifs:
                    self.visit_expr(cond, node, ctx)
            elif isinstance(child, ast.keyword):
                self.visit_expr(child.value, node, ctx)

    def _mutate_expr(self, node: ast.expr, parent: ast.AST | None, ctx: _Ctx) -> None:
        if isinstance(node, ast.Compare):
            for index, op in enumerate(node.ops):
                for table, operator in ((_NEGATE, "compare"), (_BOUNDARY, "boundary")):
                    new_op = table.get(type(op))
                    if new_op is None:
                        continue
                    ops = list(node.ops)
                    ops[index] = new_op()
                    mutated = ast.Compare(left=node.left, ops=ops, comparators=node.comparators)
                    text = self._expr(parent, ast.unparse(mutated))
                    desc = f"{_op_text(op)} -> {_op_text(new_op())}"
                    self._add(ctx, operator, desc, node, replacement=text)
        elif isinstance(node, ast.BoolOp):
            new_bool: ast.boolop = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            text = self._expr(parent, ast.unparse(ast.BoolOp(op=new_bool, values=node.values)))
            desc = "and -> or" if isinstance(node.op, ast.And) else "or -> and"
            self._add(ctx, "boolean", desc, node, replacement=text)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            start, end = self.pos.span(node.operand)
            text = self._expr(parent, f"({self.source[start:end]})")
            self._add(ctx, "boolean", "'not' removed", node, replacement=text)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            stringy = any(
                isinstance(side, ast.JoinedStr)
                or (isinstance(side, ast.Constant) and isinstance(side.value, (str, bytes)))
                for side in (node.left, node.right)
            )
            if not stringy:
                new_bin: ast.operator = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
                mutated_bin = ast.BinOp(left=node.left, op=new_bin, right=node.right)
                text = self._expr(parent, ast.unparse(mutated_bin))
                desc = "+ -> -" if isinstance(node.op, ast.Add) else "- -> +"
                self._add(ctx, "arithmetic", desc, node, replacement=text)
        elif isinstance(node, ast.Constant):
            self._mutate_constant(node, ctx)
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
            self._drop_elements(node, ctx)

    def _mutate_constant(self, node: ast.Constant, ctx: _Ctx) -> None:
        value = node.value
        if isinstance(value, bool):
            self._add(ctx, "constant", f"{value} -> {not value}", node, replacement=repr(not value))
        elif isinstance(value, int):
            for new in (value + 1, value - 1):
                self._add(ctx, "constant", f"{value} -> {new}", node, replacement=repr(new))
        elif isinstance(value, (str, bytes)):
            text = value.decode("latin-1") if isinstance(value, bytes) else value
            if any(ch.isspace() for ch in text) and text.strip():
                return  # prose: a message or hint, not a decision token
            new_value: str | bytes
            if isinstance(value, bytes):
                new_value = b"" if value else b"x"
            else:
                new_value = "" if value else "x"
            desc = f"{value!r} -> {new_value!r}"
            self._add(ctx, "constant", desc, node, replacement=repr(new_value))

    def _drop_elements(self, node: ast.List | ast.Tuple | ast.Set | ast.Dict, ctx: _Ctx) -> None:
        if isinstance(node, (ast.List, ast.Tuple)) and not isinstance(node.ctx, ast.Load):
            return
        start, end = self.pos.span(node)
        whole = self.source[start:end]
        if isinstance(node, ast.Tuple) and not whole.startswith("("):
            return  # bare tuple (``return a, b``): not a table
        items: list[tuple[int, int]] = []
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if key is None:
                    return
                items.append((self.pos.span(key)[0], self.pos.span(value)[1]))
        else:
            for element in node.elts:
                if isinstance(element, ast.Starred):
                    return
                items.append(self.pos.span(element))
        kind = type(node).__name__.lower()
        for index, (item_start, item_end) in enumerate(items):
            if index + 1 < len(items):
                cut_start, cut_end = item_start, items[index + 1][0]
            else:
                cut_start, cut_end = item_start, item_end
                rest = self.source[cut_end:end]
                stripped = rest.lstrip(" \t")
                if stripped.startswith(","):
                    cut_end += len(rest) - len(stripped) + 1
            text = self.source[start:cut_start] + self.source[cut_end:end]
            if isinstance(node, ast.Tuple) and len(items) == 2:
                try:
                    parsed = ast.parse(text, mode="eval").body
                except SyntaxError:
                    parsed = None
                if not isinstance(parsed, ast.Tuple):
                    text = text[:-1].rstrip() + ",)"
            element_line = self.source.count("\n", 0, item_start) + 1
            desc = f"{kind} element {index + 1} of {len(items)} (line {element_line}) dropped"
            self._add(ctx, "table", desc, node, replacement=text, span=(start, end))


def _op_text(op: ast.cmpop) -> str:
    return {
        ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
        ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in",
    }[type(op)]


def generate_mutants(source: str) -> tuple[list[Mutant], int]:
    """Every mutant of ``source`` that compiles, without duplicates; and how many did not."""
    tree = ast.parse(source)
    collector = _Collector(source)
    collector.visit_body(tree.body, _Ctx(), in_function=False)
    seen: set[str] = set()
    valid: list[Mutant] = []
    invalid = 0
    for mutant in collector.mutants:
        mutated = mutant.apply(source)
        if mutated in seen or mutated == source:
            continue
        try:
            compile(mutated, "<mutant>", "exec")
        except SyntaxError:
            invalid += 1
            continue
        seen.add(mutated)
        valid.append(mutant)
    return valid, invalid


def mutant_diff(source: str, mutant: Mutant) -> str:
    before = source.splitlines()
    after = mutant.apply(source).splitlines()
    lines: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after).get_opcodes():
        if tag == "equal":
            continue
        lines.extend(f"    {i + 1:>4} - {before[i].strip()}" for i in range(i1, i2))
        lines.extend(f"    {j + 1:>4} + {after[j].strip()}" for j in range(j1, j2))
    return "\n".join(lines)


# --------------------------------------------------------------------------- running


@dataclass
class ModuleConfig:
    path: str
    tests: list[str]
    equivalent: dict[str, str] = field(default_factory=dict)


@dataclass
class Outcome:
    mutant: Mutant
    status: str  # killed | timeout | survived
    seconds: float


def load_config(config_path: Path) -> list[ModuleConfig]:
    data = tomllib.loads(config_path.read_text(encoding="utf-8"))
    modules = []
    for entry in data.get("module", []):
        equivalent = {item["id"]: item["reason"] for item in entry.get("equivalent", [])}
        modules.append(ModuleConfig(entry["path"], list(entry["tests"]), equivalent))
    return modules


def select_modules(modules: list[ModuleConfig], wanted: list[str]) -> list[ModuleConfig]:
    if not wanted:
        return modules
    chosen = []
    for name in wanted:
        matches = [m for m in modules if m.path == name]
        if not matches:
            stem = name.removesuffix(".py")
            matches = [
                m for m in modules
                if m.path.removesuffix(".py").endswith("/" + stem) or m.path.endswith("/" + name)
            ]
        if len(matches) != 1:
            known = ", ".join(m.path for m in modules)
            raise SystemExit(
                f"mutation: {name!r} names {len(matches)} configured modules ({known})"
            )
        chosen.append(matches[0])
    return chosen


class Workspace:
    """A scratch copy of src/ in which one mutant at a time is written."""

    def __init__(self, base: Path, index: int, module_rel: str) -> None:
        self.root = base / f"worker{index}"
        shutil.copytree(ROOT / "src", self.root / "src",
                        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        self.target = self.root / module_rel
        self.original = (ROOT / module_rel).read_text(encoding="utf-8")

    def write(self, text: str) -> None:
        self.target.write_text(text, encoding="utf-8")
        for stale in (self.target.parent / "__pycache__").glob(self.target.stem + ".*.pyc"):
            stale.unlink()

    def run(self, tests: list[str], timeout: float) -> tuple[str, float]:
        began = time.monotonic()
        code = _run_pytest(str(self.root / "src"), [*PYTEST_ARGS, *tests], timeout)
        elapsed = time.monotonic() - began
        if code is None:
            return "timeout", elapsed
        if code == 0:
            return "survived", elapsed
        if code == 5:
            raise SystemExit(f"mutation: no tests collected from {tests}")
        return "killed", elapsed


# Each test run is a fresh process forked from a server that has imported pytest and
# nothing of plangate: the module under test (and every module that imports it) is
# imported anew from the scratch copy in every run, while the interpreter start and
# pytest's own import are paid once. Where there is no fork server, a new interpreter
# runs pytest.
_PRELOAD = ["pytest", "_pytest.python", "_pytest.fixtures", "_pytest.runner", "_pytest.main",
            "_pytest.tmpdir", "_pytest.monkeypatch", "_pytest.assertion.rewrite"]
_FORKSERVER: dict[str, Any] = {}


def _pytest_child(src: str, args: list[str]) -> None:
    os.chdir(ROOT)
    for key in [k for k in os.environ if k.startswith("PYTEST_")]:
        del os.environ[key]
    os.environ["PYTHONPATH"] = src
    sys.path.insert(0, src)
    if any(name == "plangate" or name.startswith("plangate.") for name in sys.modules):
        os._exit(70)  # never run tests against modules imported before the mutant was written
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    import pytest

    code = pytest.main(args)
    sys.stdout.flush()
    os._exit(int(code))


def _run_pytest(src: str, args: list[str], timeout: float) -> int | None:
    """pytest's exit code for ``args`` with ``src`` first on the path; None on timeout."""
    if "context" not in _FORKSERVER:
        import multiprocessing

        context = None
        if "forkserver" in multiprocessing.get_all_start_methods():
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(_PRELOAD)
        _FORKSERVER["context"] = context
    context = _FORKSERVER["context"]
    if context is not None:
        process = context.Process(target=_pytest_child, args=(src, args))
        process.start()
        process.join(timeout)
        if process.is_alive():
            process.kill()
            process.join()
            return None
        return int(process.exitcode) if process.exitcode is not None else None
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = src
    try:
        proc = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None
    return proc.returncode


def run_module(module: ModuleConfig, jobs: int, *, list_only: bool,
               only: set[str] | None = None,
               timeout_override: float | None = None) -> dict[str, object]:
    source = (ROOT / module.path).read_text(encoding="utf-8")
    mutants, invalid = generate_mutants(source)
    if only is not None:
        mutants = [m for m in mutants if m.ident in only]
    print(f"\n=== {module.path}: {len(mutants)} mutants ({invalid} did not compile, skipped)")
    print(f"    tests: {' '.join(module.tests)}")
    if list_only:
        for mutant in mutants:
            print(f"  line {mutant.line} [{mutant.ident}] {mutant.description}")
            print(mutant_diff(source, mutant))
        return {"module": module.path, "total": len(mutants)}
    for test in module.tests:
        if not (ROOT / test).exists():
            raise SystemExit(f"mutation: test file {test} (for {module.path}) does not exist")

    base = Path(tempfile.mkdtemp(prefix="plangate-mutation-"))
    try:
        workers = [Workspace(base, i, module.path) for i in range(max(1, jobs))]
        status, baseline = workers[0].run(module.tests, timeout=600)
        if status != "survived":
            raise SystemExit(
                f"mutation: the tests fail on the unmutated {module.path}; fix them first"
            )
        workers[0].write(source + "\nraise RuntimeError('mutation probe')\n")
        probe, _ = workers[0].run(module.tests, timeout=600)
        workers[0].write(source)
        if probe == "survived":
            raise SystemExit(
                f"mutation: the tests still pass when {module.path} cannot be imported: "
                "they do not exercise the scratch copy of the module"
            )
        timeout = max(10.0, 3 * baseline + 5)
        if timeout_override is not None:
            # A mutant that loops forever costs the whole timeout; a shorter one
            # still counts it killed (by timeout), it only ends it sooner.
            timeout = max(timeout_override, baseline * 1.5)
        print(f"    baseline {baseline:.1f}s, per-mutant timeout {timeout:.0f}s, "
              f"{len(workers)} job(s)")

        free = list(workers)
        lock = threading.Lock()
        done = [0]

        def one(mutant: Mutant) -> Outcome:
            with lock:
                worker = free.pop()
            status, seconds = "", 0.0
            try:
                worker.write(mutant.apply(source))
                status, seconds = worker.run(module.tests, timeout)
            finally:
                worker.write(source)
                with lock:
                    free.append(worker)
                    done[0] += 1
                    if status == "survived" and mutant.ident not in module.equivalent:
                        # Named at once, so a long run that is cut short still says something.
                        print(f"    survivor: {mutant.ident} (line {mutant.line})", flush=True)
                    elif status == "timeout":
                        # Counted as killed; on a loaded machine a slow survivor can land here.
                        print(f"    timeout: {mutant.ident} (line {mutant.line})", flush=True)
                    if done[0] % 25 == 0:
                        print(f"    ... {done[0]}/{len(mutants)}", flush=True)
            return Outcome(mutant, status, seconds)

        with ThreadPoolExecutor(max_workers=len(workers)) as pool:
            outcomes = list(pool.map(one, mutants))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return report_module(module, source, outcomes)


def report_module(module: ModuleConfig, source: str, outcomes: list[Outcome]) -> dict[str, object]:
    killed = [o for o in outcomes if o.status in ("killed", "timeout")]
    survivors = [o for o in outcomes if o.status == "survived"]
    equivalent = [o for o in survivors if o.mutant.ident in module.equivalent]
    open_survivors = [o for o in survivors if o.mutant.ident not in module.equivalent]
    total = len(outcomes)
    raw = 100.0 * len(killed) / total if total else 100.0
    judged_total = total - len(equivalent)
    score = 100.0 * len(killed) / judged_total if judged_total else 100.0
    for outcome in open_survivors:
        m = outcome.mutant
        print(f"  SURVIVED line {m.line} [{m.ident}] {m.operator}: {m.description}")
        print(mutant_diff(source, m))
    for outcome in equivalent:
        m = outcome.mutant
        print(f"  equivalent line {m.line} [{m.ident}]: {module.equivalent[m.ident]}")
    stale = sorted(set(module.equivalent) - {o.mutant.ident for o in equivalent})
    for ident in stale:
        print(f"  note: equivalent entry {ident} no longer survives or no longer exists")
    timeouts = sum(1 for o in outcomes if o.status == "timeout")
    print(
        f"  {module.path}: killed {len(killed)}/{total} ({raw:.1f}%), "
        f"{len(equivalent)} judged equivalent, score {score:.1f}% "
        f"({timeouts} by timeout)"
    )
    return {
        "module": module.path,
        "total": total,
        "killed": len(killed),
        "equivalent": len(equivalent),
        "survived": len(open_survivors),
        "raw_score": round(raw, 1),
        "score": round(score, 1),
        "timeouts": [o.mutant.ident for o in outcomes if o.status == "timeout"],
        "survivors": [
            {"id": o.mutant.ident, "line": o.mutant.line, "operator": o.mutant.operator,
             "description": o.mutant.description, "diff": mutant_diff(source, o.mutant)}
            for o in open_survivors
        ],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", metavar="MODULE")
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG)
    parser.add_argument("--jobs", "-j", type=int, default=1,
                        help="mutants tested in parallel (default 1)")
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument("--only", action="append", metavar="ID",
                        help="run only these mutant ids (repeatable; e.g. last run's survivors)")
    parser.add_argument("--timeout", type=float, metavar="SECONDS",
                        help="per-mutant timeout (default max(10, 3 x baseline + 5)); "
                             "never below 1.5 x the baseline, so a slow pass is not "
                             "counted a kill")
    parser.add_argument("--min-score", type=float, default=90.0,
                        help="exit 1 when a module scores below this (default 90)")
    args = parser.parse_args(argv)

    modules = select_modules(load_config(args.config), args.modules)
    only = set(args.only) if args.only else None
    results = [run_module(m, args.jobs, list_only=args.list, only=only,
                          timeout_override=args.timeout) for m in modules]
    if args.list:
        return 0
    print("\nmodule                                       killed/total   raw    score")
    failed = False
    for r in results:
        print(f"{r['module']:<44} {r['killed']:>4}/{r['total']:<4}  {r['raw_score']:>5}%  "
              f"{r['score']:>5}%")
        failed = failed or float(str(r["score"])) < args.min_score
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
