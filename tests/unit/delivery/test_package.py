"""The delivery package as a whole: which modules are pure rules and which do IO, nothing
merges, every reason code is documented."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import plangate.delivery

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = Path(plangate.delivery.__file__).parent

DOC_MODULES = ("__init__.py",)
"""The package docstring; imports nothing."""
RULE_MODULES = ("ci.py", "ci_report.py", "machine.py", "pr_event.py", "pr_policy.py", "pr_snapshot.py")
"""Pure: decisions and validation over facts handed to them."""
IO_MODULES = ("ci_service.py", "log.py", "service.py")
"""The IO edge: the record file and its lock; the acceptor, git, the ledger; a pull
request's facts for ``ci check``."""

IO_MODULES_IMPORTED = (
    "subprocess",
    "os",
    "io",
    "pathlib",
    "shutil",
    "socket",
    "tempfile",
    "datetime",
    "time",
    "plangate.git",
    "plangate.fsutil",
    "plangate.snapshot",
    "plangate.ledger",
    "plangate.approval.service",
    "plangate.approval.holds",
    "plangate.delivery.log",
    "plangate.delivery.service",
    "plangate.delivery.ci_service",
)
"""Modules that do IO (or reach the file system, git, the clock or the ledger)."""
CONSTANTS_FROM_IO_MODULES: frozenset[str] = frozenset()
"""Plain constants a rule module may take from an IO module (no IO comes with them)."""


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _calls_open(path: Path) -> bool:
    return any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open"
        for node in ast.walk(ast.parse(path.read_text()))
    )


def test_every_module_is_listed_as_rule_or_io():
    listed = DOC_MODULES + RULE_MODULES + IO_MODULES
    assert sorted(p.name for p in PACKAGE.glob("*.py")) == sorted(listed)
    for name in DOC_MODULES:
        assert "import" not in (PACKAGE / name).read_text()


def test_rule_modules_do_no_io():
    for name in RULE_MODULES:
        imported = _imports(PACKAGE / name)
        bad = sorted(
            m for m in imported - CONSTANTS_FROM_IO_MODULES
            if any(m == io or m.startswith(io + ".") for io in IO_MODULES_IMPORTED)
        )
        assert bad == [], f"{name} imports {bad}"
        assert not _calls_open(PACKAGE / name), name


def test_the_io_check_sees_an_io_import():
    assert "plangate.git.Git" in _imports(PACKAGE / "service.py")


def test_delivery_package_never_merges():
    forbidden = (
        "gh pr merge",
        "merge_pull_request",
        'MERGED"',
        "import socket",
        "urllib",
        "http.client",
        "requests",
    )
    for path in PACKAGE.glob("*.py"):
        text = path.read_text()
        for token in forbidden:
            assert token not in text, f"{token!r} in {path.name}"


def test_every_reason_code_is_documented():
    import plangate.evidence

    doc = (ROOT / "docs" / "reason-codes.md").read_text()
    sources = [*PACKAGE.glob("*.py"), *Path(plangate.evidence.__file__).parent.glob("*.py")]
    sources += [
        ROOT / "src" / "plangate" / "cli" / n
        for n in ("delivery_cmd.py", "evidence_cmd.py", "ci_cmd.py")
    ]
    codes = set()
    for path in sources:
        codes |= set(re.findall(r'"((?:DELIVERY|EVIDENCE|CI)_[A-Z_]+)"', path.read_text()))
    assert len(codes) > 45
    assert {"CI_NO_TASK", "CI_SOURCE_NOT_ANCESTOR", "CI_PROTECTED_SURFACE"} <= codes
    missing = sorted(c for c in codes if f"`{c}`" not in doc)
    assert missing == []
