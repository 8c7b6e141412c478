"""Print the module map of src/plangate (one line per module, from each module's docstring).

docs/architecture.md holds this map; tests/unit/docs/test_architecture_map.py checks that every
module is listed there. Run it after adding or moving a module and paste the changed lines.
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


def main() -> int:
    """Print the map."""
    modules = sorted(
        p for p in SRC.rglob("*.py")
        if "resources" not in p.relative_to(SRC).parts and p.name != "__main__.py"
    )
    width = max(len(p.relative_to(SRC).as_posix()) for p in modules)
    for path in modules:
        rel = path.relative_to(SRC).as_posix()
        print(f"{rel:<{width}}  {first_line(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
