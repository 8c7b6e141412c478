"""Print the module map of src/plangate (one line per module, from each module's docstring).

docs/architecture.md holds this map; tests/unit/docs/test_architecture_map.py checks that every
module is listed there. Run it with ``--write`` after adding or moving a module.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "plangate"


def first_line(path: Path) -> str:
    """The first sentence of a module's docstring (or a placeholder)."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "(no docstring)"
    line = doc.strip().splitlines()[0].strip()
    return line.rstrip(".")


def module_map() -> str:
    """The map's text, one line per module."""
    modules = sorted(
        p for p in SRC.rglob("*.py")
        if "resources" not in p.relative_to(SRC).parts and p.name != "__main__.py"
    )
    width = max(len(p.relative_to(SRC).as_posix()) for p in modules)
    return "".join(
        f"{path.relative_to(SRC).as_posix():<{width}}  {first_line(path)}\n" for path in modules
    )


def main() -> int:
    """Print the map, or with ``--write`` replace the map block of docs/architecture.md."""
    text = module_map()
    if sys.argv[1:] != ["--write"]:
        print(text, end="")
        return 0
    doc = SRC.parents[1] / "docs" / "architecture.md"
    page = doc.read_text(encoding="utf-8")
    section = page.index("## Module map")
    start = page.index("```\n", section) + 4
    end = page.index("```\n", start)
    doc.write_text(page[:start] + text + page[end:], encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
