"""The evaluation package as a whole: one module runs trial processes.

Which evaluation module is a rule module and which does IO is listed, with every
other module, in tests/unit/test_purity.py.
"""

from __future__ import annotations

import ast
from pathlib import Path

import plangate.evaluation

PACKAGE = Path(plangate.evaluation.__file__).parent
PROCESS_MODULES = frozenset({"subprocess", "os", "signal", "multiprocessing", "pty"})


def _top_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_only_the_trials_module_runs_processes() -> None:
    spawning = sorted(
        p.relative_to(PACKAGE).as_posix()
        for p in PACKAGE.rglob("*.py")
        if _top_imports(p) & PROCESS_MODULES
    )
    assert spawning == ["run/trials.py"]


def test_the_scan_sees_a_process_import(tmp_path: Path) -> None:
    for line in ("import subprocess", "from os import kill", "import signal as s"):
        planted = tmp_path / "planted.py"
        planted.write_text(line + "\n")
        assert _top_imports(planted) & PROCESS_MODULES, line
