"""The evaluation package as a whole: which modules are pure rules and which do IO, and the
one module that runs trial processes."""

from __future__ import annotations

import ast
from pathlib import Path

import plangate.evaluation

PACKAGE = Path(plangate.evaluation.__file__).parent

DOC_MODULES = (
    "__init__.py",
    "harness/__init__.py",
    "registry/__init__.py",
    "gate/__init__.py",
    "run/__init__.py",
)
"""Package docstrings; they import nothing."""
RULE_MODULES = (
    "independence.py",
    "harness/definition.py",
    "harness/manifest.py",
    "registry/plan.py",
    "registry/candidate.py",
    "gate/links.py",
    "gate/rules.py",
    "run/protocol.py",
    "run/mutants.py",
    "run/decision.py",
)
"""Pure: decisions and validation over bytes and facts handed to them."""
IO_MODULES = (
    "harness/service.py",
    "registry/store.py",
    "registry/service.py",
    "gate/service.py",
    "run/trials.py",
    "run/service.py",
)
"""The IO edge of each step: git, the ledger, files, processes."""

IO_IMPORTS = (
    "subprocess",
    "os",
    "io",
    "pathlib",
    "shutil",
    "socket",
    "tempfile",
    "sqlite3",
    "datetime",
    "time",
    "concurrent",
    "signal",
    "plangate.git",
    "plangate.fsutil",
    "plangate.snapshot",
    "plangate.ledger",
    "plangate.clock",
    *(f"plangate.evaluation.{m.removesuffix('.py').replace('/', '.')}" for m in IO_MODULES),
)
"""Modules that reach the file system, git, the ledger, the clock or processes."""
CONSTANTS_FROM_IO_MODULES = frozenset({"plangate.git.FULL_SHA_RE", "plangate.git.TreeEntry"})
"""Plain constants and types a rule module may take from an IO module (no IO comes with them)."""

IO_CALLS = frozenset({"open", "exec", "eval", "__import__"})


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _io_imports(path: Path) -> list[str]:
    return sorted(
        m
        for m in _imports(path) - CONSTANTS_FROM_IO_MODULES
        if any(m == io or m.startswith(io + ".") for io in IO_IMPORTS)
    )


def _calls(path: Path) -> set[str]:
    return {
        node.func.id
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }


def test_every_module_is_listed_as_doc_rule_or_io() -> None:
    found = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py"))
    assert found == sorted(DOC_MODULES + RULE_MODULES + IO_MODULES)
    for name in DOC_MODULES:
        assert "import" not in (PACKAGE / name).read_text(), name


def test_rule_modules_do_no_io() -> None:
    for name in RULE_MODULES:
        assert _io_imports(PACKAGE / name) == [], name
        assert not _calls(PACKAGE / name) & IO_CALLS, name


def test_the_io_check_sees_io_imports_and_calls(tmp_path: Path) -> None:
    assert "plangate.git.Git" in _io_imports(PACKAGE / "gate" / "service.py")
    planted = tmp_path / "planted.py"
    for line in (
        "import subprocess",
        "from plangate.fsutil import read_regular_file",
        "from plangate.evaluation.run.trials import execute_trial",
        "import sqlite3",
        "from time import monotonic",
    ):
        planted.write_text(line + "\n")
        assert _io_imports(planted), line
    planted.write_text("data = open('x').read()\n")
    assert _calls(planted) & IO_CALLS


def test_only_the_trials_module_runs_processes() -> None:
    spawning = sorted(
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if {"subprocess", "os", "signal"} & {m.split(".")[0] for m in _imports(p)}
    )
    assert spawning == ["run/trials.py"]
