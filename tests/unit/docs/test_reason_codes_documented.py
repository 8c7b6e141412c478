"""Every reason code raised or returned by the source is documented in docs/.

A code is any UPPER_SNAKE string literal passed as the first argument of
``Reason``/``_r``/``_reason`` or of an error class (``...Error``,
``...Rejected``, ``...Failure``, ``...Required``, ``...Inconclusive``,
``...Refused``). A new code without documentation turns this test red.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CODE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
CALLERS = ("Reason", "_r", "_reason")
SUFFIXES = ("Error", "Rejected", "Failure", "Required", "Inconclusive", "Refused")


def _codes_in_source() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in (ROOT / "src" / "plangate").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            first = node.args[0]
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                continue
            if not CODE.fullmatch(first.value):
                continue
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", "")
            if name in CALLERS or name.endswith(SUFFIXES):
                found.setdefault(first.value, set()).add(str(path.relative_to(ROOT)))
    return found


def test_the_scan_finds_codes() -> None:
    codes = _codes_in_source()
    assert "C3_RECORD_MALFORMED" in codes
    assert len(codes) > 100


def test_every_reason_code_is_documented() -> None:
    docs = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md"))
    missing = {code: sorted(paths) for code, paths in _codes_in_source().items() if code not in docs}
    assert not missing, f"undocumented reason codes: {missing}"


NOT_REASON_CODES = frozenset({
    # environment variables PlanGate sets, passes or clears for the programs it runs
    "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_NAME",
    "GIT_OPTIONAL_LOCKS", "GIT_TERMINAL_PROMPT", "LC_ALL", "PLANGATE_DEMO",
    "HTTPS_PROXY", "HTTP_PROXY",
    # names of constants and operating-system attributes read by name
    "GENESIS_PREV_HASH", "LEDGER_KIND_GATE", "O_CLOEXEC", "RLIMIT_NPROC", "RUN_LOG_NAME",
})
"""UPPER_SNAKE literals in the source that are not reason codes (each one named on purpose)."""


def _every_code_like_literal() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in (ROOT / "src" / "plangate").rglob("*.py"):
        if "resources" in path.relative_to(ROOT).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and CODE.fullmatch(node.value)):
                found.setdefault(node.value, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_code_like_literal_is_documented_whatever_carries_it() -> None:
    # Codes also travel through tables, rows and small helpers (a rule row's code, a
    # file-state table, an ``add(code, ...)`` closure): every UPPER_SNAKE literal in the
    # source is documented in docs/ or named above as not a reason code.
    docs = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md"))
    missing = {code: sorted(paths) for code, paths in _every_code_like_literal().items()
               if code not in docs and code not in NOT_REASON_CODES}
    assert not missing, f"undocumented code-like literals: {missing}"


def test_the_wide_scan_sees_codes_passed_through_tables() -> None:
    literals = _every_code_like_literal()
    assert "SCOPE_VIOLATION" in literals  # a row of the arbiter's table
    assert "ARTIFACT_MISSING" in literals  # a file-state table entry
    assert not NOT_REASON_CODES - set(literals), "an exception names no literal any more"
