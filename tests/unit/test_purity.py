"""Which module is a pure rule module and which does IO: one list, checked by import scan.

Every module under ``src/plangate`` is named here exactly once. A rule module may
import no module that does IO (the file system, processes, the clock, git, the
ledger, a service); it may take plain data types and constants from such a module
(listed in ``DATA_FROM_IO_MODULES``: importing them brings no IO with it). A new
module fails the test until it is classified.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import plangate

SRC = Path(plangate.__file__).parent

RULE_MODULES = frozenset({
    "__init__.py", "__main__.py", "canonical.py", "errors.py", "forbidden_keys.py",
    "layout.py", "paths.py", "records.py", "shapes.py", "text.py", "verdict.py", "deadlines.py",
    "approval/__init__.py", "approval/acceptor.py", "approval/arbiter.py",
    "approval/contract.py", "approval/legacy.py", "approval/loopspec_binding.py",
    "approval/record.py", "approval/parts.py", "ownfiles.py",
    "authority/__init__.py", "authority/root.py", "authority/signers.py", "authority/sshsig.py",
    "authority/statement.py", "authority/trustfile.py", "authority/trustpaths.py",
    "authority/verify.py",
    "authority/wording.py", "authority/continuation.py", "authority/optout.py", "agents.py", "session/__init__.py",
    "delivery/__init__.py", "delivery/ci.py", "delivery/ci_report.py", "delivery/machine.py",
    "delivery/pr_event.py",
    "delivery/pr_policy.py",
    "delivery/pr_snapshot.py",
    "evaluation/__init__.py", "evaluation/independence.py", "evaluation/words.py",
    "evaluation/gate/__init__.py", "evaluation/gate/links.py", "evaluation/gate/rules.py",
    "evaluation/harness/__init__.py", "evaluation/harness/definition.py",
    "evaluation/harness/manifest.py",
    "evaluation/registry/__init__.py", "evaluation/registry/candidate.py",
    "evaluation/registry/plan.py", "evaluation/registry/authority.py",
    "evaluation/registry/selection.py",
    "evaluation/run/__init__.py", "evaluation/run/decision.py", "evaluation/run/mutants.py",
    "evaluation/run/protocol.py", "evaluation/run/agents.py",
    "evidence/__init__.py", "evidence/contract.py", "evidence/privacy.py",
    "evidence/producer.py", "evidence/verifier.py",
    "execution/__init__.py", "execution/preflight.py", "execution/salvage.py",
    "hooks/__init__.py", "hooks/ci_preview.py", "hooks/decision.py", "hooks/hosts/__init__.py", "hooks/hosts/tools.py",
    "hooks/hosts/patch.py",
    "hooks/sandbox_settings.py",
    "hooks/shell/__init__.py", "hooks/shell/classify.py", "hooks/shell/find.py",
    "hooks/shell/git.py", "hooks/shell/options.py", "hooks/shell/order.py",
    "hooks/shell/parse.py", "hooks/shell/programs.py", "hooks/shell/sed.py",
    "hooks/shell/state.py",
    "isolation/__init__.py", "isolation/bwrap.py", "isolation/policy.py",
    "isolation/seatbelt.py",
    "ledger/rows.py", "ledger/chain.py", "ledger/credentials.py", "ledger/existence.py",
    "ledger/checkpoint.py",
    "plan/__init__.py", "plan/files_section.py", "plan/lint.py", "plan/loopspec.py",
    "plan/markers.py", "plan/package.py", "plan/plain_markdown.py", "plan/scope.py",
    "report/__init__.py", "report/build.py", "report/charts.py", "report/evaluations.py",
    "report/ledger_view.py", "report/model.py", "report/render_html.py",
    "report/render_markdown.py", "report/tasks.py",
})
"""Pure: decisions, validation and rendering over bytes and facts handed to them."""

IO_MODULES = frozenset({
    "_spawn.py", "clock.py", "fsutil.py", "sysbin.py", "git.py", "githead.py", "snapshot.py", "startup.py", "surfaces.py",
    "approval/arbiter_input.py", "approval/arbiter_service.py", "approval/holds.py",
    "approval/service.py", "approval/status.py", "approval/parts_service.py",
    "authority/approval.py", "authority/consumer.py", "authority/service.py",
    "authority/signing.py", "authority/source.py", "authority/sshkeygen.py",
    "delivery/ci_service.py", "delivery/log.py", "delivery/service.py",
    "evaluation/gate/service.py", "evaluation/harness/service.py",
    "evaluation/registry/service.py", "evaluation/registry/store.py", "evaluation/run/service.py", "evaluation/run/trials.py", "evaluation/run/distributed.py",
    "evidence/service.py",
    "execution/apply.py", "execution/command.py", "execution/isolated.py",
    "execution/runlog.py", "execution/service.py", "execution/session.py",
    "execution/workspace.py", "execution/runs.py",
    "hooks/__main__.py", "hooks/ci_preview_service.py", "hooks/confinement.py", "hooks/doctor.py", "hooks/entry.py",
    "hooks/hookd.py", "hooks/hookd_cache.py", "hooks/hookd_client.py", "hooks/hookd_launch.py",
    "hooks/hosts/claude.py", "hooks/hosts/codex.py",
    "hooks/hosts/cursor.py", "hooks/hosts/git.py", "hooks/hosts/protocol.py",
    "hooks/hosts/tool_policy.py", "hooks/hosts/requests.py", "hooks/hosts/claude_protocol.py",
    "hooks/hosts/table.py",
    "hooks/doctor_versions.py", "hooks/doctor_settings.py", "hooks/setup.py", "hooks/precommit.py",
    "hooks/install.py", "hooks/native_build.py", "hooks/override.py", "hooks/host_sandbox.py",
    "hooks/codex_trust.py",
    "hooks/override_service.py", "hooks/paths.py", "hooks/service.py",
    "isolation/backend.py", "isolation/runner.py", "isolation/trees.py", "isolation/views.py",
    "isolation/config.py", "isolation/contract.py", "isolation/home.py", "isolation/proxy.py",
    "ledger/__init__.py", "ledger/base.py", "ledger/config.py", "ledger/postgres.py",
    "ledger/sqlite.py", "ledger/traces.py", "ledger/witness.py", "ledger/initialise.py", "ledger/checkpoint_store.py",
    "session/openrun.py", "session/state.py", "session/baseline.py",
    "execution/boxledger.py", "ledger/foreign.py",
    "plan/lint_service.py", "plan/service.py",
    "report/service.py",
})
"""The IO edge: one module per step that reads, writes, runs or asks the clock."""

CLI_PACKAGE = "cli/"
"""Command modules (argparse and output) and the demo: IO by nature, not listed one by one."""

IO_IMPORTS = (
    "os", "io", "subprocess", "socket", "shutil", "tempfile", "sqlite3", "psycopg", "time",
    "select", "threading", "signal", "_signal", "fcntl", "urllib", "http",
    "plangate._spawn", "plangate.git", "plangate.fsutil", "plangate.snapshot",
    "plangate.ledger", "plangate.clock.utc_now", "plangate.surfaces.surfaces_at_commit",
)
"""Modules (and names) whose import brings IO: the file system, processes, the clock, git."""

DATA_FROM_IO_MODULES = frozenset({
    "plangate.snapshot.ARTIFACTS",
    "plangate.snapshot.TaskSnapshot",
    "plangate.snapshot.check_task_id",
    "plangate.fsutil.FileRead",
    "plangate.fsutil.FileState",
    "plangate.git.TreeEntry",
    "plangate.ledger.rows.StoredRow",
    "plangate.ledger.chain.LedgerEntry",
    "plangate.ledger.credentials.redact_credentials",
})
"""Plain data types, constants and pure checks a rule module may take from an IO module."""


def _modules() -> list[str]:
    return sorted(
        p.relative_to(SRC).as_posix()
        for p in SRC.rglob("*.py")
        if "resources" not in p.relative_to(SRC).parts
    )


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _io_imports(path: Path) -> list[str]:
    def is_io(name: str) -> bool:
        if name in DATA_FROM_IO_MODULES:
            return False
        if any(name == m or name.startswith(m + ".") for m in IO_IMPORTS):
            return True
        parts = name.split(".")
        return name.startswith("plangate.") and any(p in ("service", "store") for p in parts)

    return sorted(n for n in _imports(path) if is_io(n))


def _calls_open(path: Path) -> bool:
    return any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open"
        for node in ast.walk(ast.parse(path.read_text()))
    )


def test_every_module_is_classified_exactly_once() -> None:
    assert not RULE_MODULES & IO_MODULES
    unlisted = [m for m in _modules()
                if not m.startswith(CLI_PACKAGE) and m not in RULE_MODULES | IO_MODULES]
    assert unlisted == [], "classify these modules in tests/unit/test_purity.py"
    gone = sorted((RULE_MODULES | IO_MODULES) - set(_modules()))
    assert gone == [], "these listed modules no longer exist"


@pytest.mark.parametrize("module", sorted(RULE_MODULES))
def test_rule_modules_do_no_io(module: str) -> None:
    path = SRC / module
    assert _io_imports(path) == []
    assert not _calls_open(path)


def test_the_scan_sees_io_in_an_io_module() -> None:
    # The check above can fail: known IO modules are seen as IO.
    assert "plangate.git.Git" in _imports(SRC / "delivery" / "service.py")
    assert _io_imports(SRC / "git.py")
    assert _io_imports(SRC / "approval" / "service.py")
    assert _calls_open(SRC / "fsutil.py") or _io_imports(SRC / "fsutil.py")
