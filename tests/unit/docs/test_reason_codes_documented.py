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
