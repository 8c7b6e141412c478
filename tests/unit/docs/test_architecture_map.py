"""docs/architecture.md lists every module of src/plangate once, and nothing that does not exist."""

from __future__ import annotations

import re
from pathlib import Path

import plangate

SRC = Path(plangate.__file__).parent
DOC = Path(__file__).resolve().parents[3] / "docs" / "architecture.md"


def _map_block() -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Module map"):]
    return section[section.index("```\n") + 4: section.index("\n```", section.index("```\n") + 4)]


def test_every_module_is_in_the_map_and_every_line_names_a_module() -> None:
    listed = [m.group(1) for m in re.finditer(r"^(\S+\.py)\s", _map_block(), flags=re.MULTILINE)]
    modules = sorted(
        p.relative_to(SRC).as_posix() for p in SRC.rglob("*.py")
        if "resources" not in p.relative_to(SRC).parts and p.name != "__main__.py"
    )
    assert len(listed) == len(set(listed)), "a module is listed twice"
    assert sorted(listed) == modules
