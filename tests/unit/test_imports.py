"""The import graph between top-level units of plangate has no cycle: one ordered layer table.

A *unit* is a top-level package of ``src/plangate`` (``plangate.hooks``, ``plangate.ledger``...)
or a top-level module (``plangate.git``, ``plangate.canonical``...); ``plangate`` itself (its
``__init__``) is the unit ``plangate``. Every ``import`` and ``from ... import`` of every module
is read from its syntax tree, at module level **and** inside functions and methods: an import
inside a function runs as soon as the function does, so it ties the units together exactly as
a module-level one does. It may keep the hook process light; it may never hide a cycle.

Imports under ``if TYPE_CHECKING:`` never run (``TYPE_CHECKING`` is false at run time): they
bring no module into a process, so they are left out of the cycle check. They still name a
type of another unit, so the layer order holds for them too: a lower unit does not even
name a higher unit's type. Everything else counts as running code, also an import under
``try:`` or another ``if``. Imports by name at run time (``importlib.import_module``: the
CLI's command table, the hook helper's preload list) are not seen by this scan; the
helper's preload list is checked on its own (the CLI is the top unit: it may name any).

``LAYERS`` orders every unit, lowest first. A unit may import only units listed before it;
a new unit fails the test until it is placed in the table (and in docs/architecture.md).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

import pytest

import plangate

SRC = Path(plangate.__file__).parent

ROOT_UNIT = "plangate"
"""The unit of ``plangate/__init__.py`` (``from plangate import __version__``)."""

LAYERS: tuple[tuple[str, str], ...] = (
    # Foundation modules: each imports only the modules above it in this list.
    (ROOT_UNIT, "the version and the package docstring"),
    ("records", "NamedTuple at low start-up cost"),
    ("shapes", "fixed string shapes"),
    ("layout", "repository paths and size bounds (constants)"),
    ("deadlines", "how long PlanGate may wait (constants)"),
    ("forbidden_keys", "keys that must never be recorded"),
    ("startup", "settings of a short-lived process"),
    ("text", "invisible-text folding"),
    ("githead", "HEAD read from the .git files"),
    ("verdict", "verdict words, reasons, results"),
    ("errors", "error families with reason codes"),
    ("agents", "agent markers: who may run the human-only commands"),
    ("paths", "canonical repository paths and the glob matcher"),
    ("ownfiles", "files PlanGate never blames: its own state, host-local settings"),
    ("canonical", "strict JSON, canonical JSON, digests"),
    ("clock", "the clock and the one timestamp format"),
    ("_spawn", "process mechanics"),
    ("fsutil", "defensive reads, atomic writes, locks"),
    ("sysbin", "system programs found only where the user cannot write"),
    ("git", "the single git adapter"),
    ("snapshot", "the task snapshot"),
    ("surfaces", "protected surfaces"),
    # Packages, lowest first.
    ("authority", "the trust root and signatures"),
    ("ledger", "the tamper-evident decision ledger (its checkpoints are signed)"),
    ("plan", "the Plan Package and the derived LoopSpec"),
    ("isolation", "sandbox policies and backends"),
    ("approval", "the arbiter, the c3-prime record, its acceptor"),
    ("delivery", "merge readiness and ci check"),
    ("evidence", "RunEvidence"),
    ("session", "the active task the ledger lends: task sessions and open exec runs"),
    ("hooks", "where agents meet the gate"),
    ("execution", "plangate exec and task start|stop|show"),
    ("evaluation", "the evaluation trust boundary"),
    ("report", "plangate report"),
    ("cli", "the plangate command"),
    ("__main__", "python -m plangate"),
)
"""Every unit of plangate, lowest first: a unit imports only units listed before it."""

RANK = {unit: index for index, (unit, _why) in enumerate(LAYERS)}


class ImportSite(NamedTuple):
    """One imported name, where it is imported, whether it runs inside a function, and
    whether it only names a type (under ``if TYPE_CHECKING:``, never run)."""

    module: str
    target: str
    line: int
    in_function: bool
    type_only: bool = False


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _absolute(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    """The absolute module a ``from`` import names (relative imports resolved)."""
    if node.level == 0:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def import_sites(source: str, module: str, *, is_package: bool = False) -> list[ImportSite]:
    """Every name ``source`` imports: at module level and inside functions; those under
    ``if TYPE_CHECKING:`` marked ``type_only`` (its ``else:`` branch runs, and counts)."""
    found: list[ImportSite] = []

    def visit(node: ast.AST, in_function: bool, type_only: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, in_function, True)
            for child in node.orelse:
                visit(child, in_function, type_only)
            return
        if isinstance(node, ast.Import):
            found.extend(
                ImportSite(module, a.name, node.lineno, in_function, type_only)
                for a in node.names
            )
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, node, is_package)
            found.extend(
                ImportSite(module, f"{base}.{a.name}", node.lineno, in_function, type_only)
                for a in node.names
            )
        inner = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            visit(child, inner, type_only)

    visit(ast.parse(source), False, False)
    return found


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> Iterable[tuple[str, str, bool]]:
    for path in sorted(SRC.rglob("*.py")):
        if "resources" in path.relative_to(SRC).parts:
            continue
        yield _module_name(path), path.read_text(encoding="utf-8"), path.name == "__init__.py"


def units() -> set[str]:
    """Every top-level unit: the packages and modules directly under ``src/plangate``."""
    found = {ROOT_UNIT}
    for path in SRC.iterdir():
        if path.is_dir() and (path / "__init__.py").exists() and path.name != "resources":
            found.add(path.name)
        elif path.suffix == ".py" and path.name != "__init__.py":
            found.add(path.stem)
    return found


def unit_of(name: str, known: set[str]) -> str | None:
    """The unit a dotted name belongs to; ``None`` outside plangate."""
    parts = name.split(".")
    if parts[0] != "plangate":
        return None
    if len(parts) > 1 and parts[1] in known:
        return parts[1]
    return ROOT_UNIT  # ``import plangate`` or ``from plangate import __version__``


Graph = Mapping[tuple[str, str], list[ImportSite]]


def import_graph(sources: Iterable[tuple[str, str, bool]]) -> dict[tuple[str, str], list[ImportSite]]:
    """Edges between different units, each with the import sites that make it."""
    known = units()
    edges: dict[tuple[str, str], list[ImportSite]] = defaultdict(list)
    for module, source, is_package in sources:
        here = unit_of(module, known)
        for site in import_sites(source, module, is_package=is_package):
            there = unit_of(site.target, known)
            if here is not None and there is not None and there != here:
                edges[(here, there)].append(site)
    return dict(edges)


def cycles(graph: Graph) -> list[list[str]]:
    """The groups of units that import each other in a circle (strongly connected, size > 1),
    through imports that run (``type_only`` sites are left out)."""
    successors: dict[str, set[str]] = defaultdict(set)
    for (source, target), sites in graph.items():
        if any(not site.type_only for site in sites):
            successors[source].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def connect(unit: str) -> None:
        index[unit] = low[unit] = len(index)
        stack.append(unit)
        on_stack.add(unit)
        for nxt in sorted(successors[unit]):
            if nxt not in index:
                connect(nxt)
                low[unit] = min(low[unit], low[nxt])
            elif nxt in on_stack:
                low[unit] = min(low[unit], index[nxt])
        if low[unit] == index[unit]:
            group: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == unit:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for unit in sorted(successors):
        if unit not in index:
            connect(unit)
    return sorted(groups)


def _describe(graph: Graph, group: list[str]) -> str:
    lines = []
    for (source, target), sites in sorted(graph.items()):
        if source in group and target in group:
            for site in sites:
                if site.type_only:
                    continue
                where = "in a function" if site.in_function else "at module level"
                lines.append(f"{site.module}:{site.line} imports {site.target} ({where})")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def graph() -> dict[tuple[str, str], list[ImportSite]]:
    return import_graph(_sources())


def test_every_unit_has_one_place_in_the_layer_table() -> None:
    listed = [unit for unit, _why in LAYERS]
    assert len(listed) == len(set(listed)), "a unit is listed twice"
    assert sorted(units() - set(listed)) == [], "place these units in LAYERS (and the docs)"
    assert sorted(set(listed) - units()) == [], "these listed units no longer exist"


def test_no_cycle_between_top_level_units(graph: dict[tuple[str, str], list[ImportSite]]) -> None:
    found = cycles(graph)
    assert found == [], "\n\n".join(f"{group}:\n{_describe(graph, group)}" for group in found)


def test_every_import_points_down_the_layer_table_type_only_ones_too(
    graph: dict[tuple[str, str], list[ImportSite]],
) -> None:
    upward = [
        f"{site.module}:{site.line} imports {site.target} ({source} is below {target})"
        for (source, target), sites in sorted(graph.items())
        if source in RANK and target in RANK and RANK[target] > RANK[source]
        for site in sites
    ]
    assert upward == []


# -- the scan itself can fail -------------------------------------------------------------


SAMPLE = '''
from typing import TYPE_CHECKING
import plangate.git
try:
    import plangate.text
except ImportError:
    pass
from plangate.canonical import sha256_hex
if TYPE_CHECKING:
    from plangate.hooks.decision import TaskFacts
else:
    from plangate.verdict import Result
def later():
    from plangate.ledger import open_ledger
    return open_ledger
class Kind:
    def method(self):
        import plangate.session.openrun
'''


def test_the_scan_counts_function_imports_and_marks_type_checking_blocks() -> None:
    sites = import_sites(SAMPLE, "plangate.sample")
    seen = {(s.target, s.in_function, s.type_only) for s in sites if s.target.startswith("plangate")}
    assert seen == {
        ("plangate.git", False, False),
        ("plangate.text", False, False),
        ("plangate.canonical.sha256_hex", False, False),
        ("plangate.hooks.decision.TaskFacts", False, True),
        ("plangate.verdict.Result", False, False),
        ("plangate.ledger.open_ledger", True, False),
        ("plangate.session.openrun", True, False),
    }


def test_a_circle_through_a_type_only_import_is_no_import_cycle() -> None:
    # A type named under TYPE_CHECKING never runs: no cycle (the order test still sees it).
    back = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from plangate.hooks import x\n"
    graph = import_graph([*_sources(), ("plangate.ledger.sample", back, False)])
    assert cycles(graph) == []
    assert ("ledger", "hooks") in graph


def test_the_scan_resolves_relative_imports() -> None:
    sites = import_sites("from ..git import Git\nfrom . import rows\n", "plangate.ledger.base")
    assert [s.target for s in sites] == ["plangate.git.Git", "plangate.ledger.rows"]
    package = import_sites("from .chain import x\n", "plangate.ledger", is_package=True)
    assert [s.target for s in package] == ["plangate.ledger.chain.x"]


def test_a_function_level_import_that_closes_a_circle_is_found() -> None:
    # The ledger importing a hook inside a function: ledger -> hooks -> ledger.
    back = "def f():\n    from plangate.hooks.service import evaluate\n"
    graph = import_graph([*_sources(), ("plangate.ledger.sample", back, False)])
    found = cycles(graph)
    assert any({"ledger", "hooks"} <= set(group) for group in found)
    assert "plangate.ledger.sample:2 imports plangate.hooks.service.evaluate (in a function)" in (
        _describe(graph, next(g for g in found if "ledger" in g))
    )


def test_an_upward_import_without_a_circle_breaks_the_order() -> None:
    # The clock importing the CLI closes no circle today, but the table forbids it.
    graph = import_graph([("plangate.clock", "def f():\n    import plangate.cli\n", False)])
    assert [(s, t) for (s, t) in graph if RANK[t] > RANK[s]] == [("clock", "cli")]


def test_the_hook_helpers_preload_names_modules_below_the_hooks() -> None:
    # Imported by name at run time (the scan above cannot see it): each name must exist,
    # and none may pull a unit above the hooks into the helper.
    import importlib.util

    from plangate.hooks.hookd import WARM_MODULES

    known = units()
    missing = [name for name in WARM_MODULES if importlib.util.find_spec(name) is None]
    assert missing == []
    above = [n for n in WARM_MODULES if RANK[unit_of(n, known) or ROOT_UNIT] > RANK["hooks"]]
    assert above == []


def test_docs_architecture_lists_the_same_layers_in_the_same_order() -> None:
    doc = (SRC.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Layers"):]
    block = section[section.index("```\n") + 4 : section.index("\n```", section.index("```\n") + 4)]
    listed: list[str] = []
    in_foundation = False
    for line in block.splitlines():
        first = line.split()[0] if line.strip() else ""
        if first.endswith("/"):
            in_foundation = False
            listed.append(first.rstrip("/"))
            continue
        in_foundation = in_foundation or first == "foundation"
        if in_foundation:
            names = line.replace("foundation", "", 1) if first == "foundation" else line
            listed += [name.strip() for name in names.split(",") if name.strip()]
    assert listed == [unit for unit, _why in LAYERS if unit != "__main__"]
