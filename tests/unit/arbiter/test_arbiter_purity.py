"""The decision table is pure: no file, git, clock or ledger access (ARCHITECTURE)."""

from __future__ import annotations

import ast
from pathlib import Path

import plangate.approval.arbiter as arbiter_module
import plangate.plan.loopspec as loopspec_module

FORBIDDEN_MODULES = {
    "os",
    "subprocess",
    "datetime",
    "time",
    "pathlib",
    "shutil",
    "socket",
    "plangate.git",
    "plangate.fsutil",
    "plangate.ledger",
    "plangate.snapshot",
}
FORBIDDEN_CALLS = {"open", "read_regular_file", "sha256_of_file"}


def imported_and_called(path: Path) -> tuple[set[str], set[str]]:
    tree = ast.parse(path.read_text())
    imported: set[str] = set()
    called: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
        elif isinstance(node, ast.Call):
            func = node.func
            called.add(
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
    return imported, called


def test_arbiter_decision_module_does_no_io() -> None:
    imported, called = imported_and_called(Path(arbiter_module.__file__))
    assert not imported & FORBIDDEN_MODULES
    assert not called & FORBIDDEN_CALLS


def test_loopspec_derivation_does_no_io() -> None:
    imported, called = imported_and_called(Path(loopspec_module.__file__))
    assert not imported & FORBIDDEN_MODULES - {"plangate.snapshot"}  # check_task_id only
    assert not called & FORBIDDEN_CALLS
