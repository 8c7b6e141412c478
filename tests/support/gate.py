"""Helpers for the policy-gate integration tests: a real git repository holding the
bundled demo harness, a real SQLite ledger, and the CLI driven in-process."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from plangate.agents import AGENT_MARKER_PREFIXES, AGENT_MARKERS
from plangate.cli.demo.harness import materialise, render_plan
from plangate.git import scrubbed_env
from support.cli import CliResult, RunCli
from support.repo import git


def commit_tracked(repo: Path, message: str, *paths: str) -> str:
    """Stage ``paths`` (or every tracked change) and commit; return HEAD."""
    if paths:
        git(repo, "add", "-A", "--", *paths)
    git(repo, "commit", "-q", "--allow-empty", "-am", message)
    return git(repo, "rev-parse", "HEAD")


def git_env_run(repo: Path, *args: str, stdin: bytes = b"") -> str:
    """git with input on stdin (test setup only)."""
    proc = subprocess.run(
        ["git", *args], cwd=repo, env=scrubbed_env(), input=stdin, capture_output=True, check=True
    )
    return proc.stdout.decode().strip()


@dataclass
class HarnessRepo:
    """A demo-harness repository with a registered plan."""

    repo: Path
    run_cli: RunCli
    baseline: str = ""
    manifest_ref: str = ""
    plan_digest: str = ""
    env: dict[str, str] = field(default_factory=dict)

    def cli(self, *argv: str) -> CliResult:
        """Run plangate in the repository with an isolated environment."""
        return self.run_cli(self.repo, *argv, env=self.env or dict(os.environ))

    def manifest(self, commit: str) -> dict[str, Any]:
        """The manifest of ``commit`` via the CLI."""
        res = self.cli("harness", "manifest", "--commit", commit)
        assert res.code == 0, res.err
        return dict(json.loads(res.out))

    def register_plan(self, text: str | None = None) -> CliResult:
        """Register the demo plan (or ``text``) and remember its digest."""
        plan_file = self.repo.parent / "plan.yaml"
        plan_file.write_text(text or render_plan(self.baseline, self.manifest_ref))
        res = self.cli("eval", "plan", "register", str(plan_file))
        if res.code == 0:
            self.plan_digest = res.out.strip()
        return res

    def start_candidate(self, branch: str) -> None:
        """Check out a new branch at the baseline."""
        git(self.repo, "checkout", "-q", "-B", branch, self.baseline)

    def candidate_doc(self, commit: str, allowed: list[str], **extra: Any) -> dict[str, Any]:
        """A candidate document for ``commit``."""
        doc: dict[str, Any] = {
            "schema_version": "1",
            "candidate_id": f"candidate:{commit[:8]}",
            "hypothesis": "test hypothesis",
            "operation": "UPDATE",
            "target_components": ["prompt:builder"],
            "allowed_paths": allowed,
            "candidate_commit": commit,
            "evaluation_plan_digest": self.plan_digest,
            "changes_evaluation_harness": False,
        }
        doc.update(extra)
        return doc

    def register_candidate(self, doc: dict[str, Any]) -> CliResult:
        """Register a candidate document."""
        path = self.repo.parent / f"candidate-{doc['candidate_commit'][:8]}.json"
        path.write_text(json.dumps(doc))
        return self.cli("eval", "candidate", "register", str(path))

    def gate(self, commit: str, allowed: list[str], **extra: Any) -> tuple[int, dict[str, Any]]:
        """Register a candidate for ``commit`` and run the gate with --json."""
        reg = self.register_candidate(self.candidate_doc(commit, allowed, **extra))
        assert reg.code == 0, reg.err
        res = self.cli("eval", "gate", reg.out.strip(), "--json")
        assert res.out, res.err
        return res.code, dict(json.loads(res.out))


def make_harness_repo(
    repo: Path,
    run_cli: RunCli,
    *,
    register: bool = True,
    prepare: Callable[[Path], None] | None = None,
) -> HarnessRepo:
    """Materialise the demo harness into ``repo`` (a git repo), let ``prepare`` adjust it,
    commit the baseline, build its manifest and (optionally) register the demo plan."""
    materialise(repo)
    if prepare is not None:
        prepare(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "baseline harness")
    hr = HarnessRepo(repo=repo, run_cli=run_cli, env=_without_agent_markers(dict(os.environ)))
    hr.baseline = git(repo, "rev-parse", "HEAD")
    hr.manifest_ref = hr.manifest(hr.baseline)["harness_id"]
    if register:
        res = hr.register_plan()
        assert res.code == 0, res.err
    return hr


def codes(verdict: dict[str, Any]) -> list[str]:
    """Reason codes of a --json verdict."""
    return [r["code"] for r in verdict["reasons"]]


def _without_agent_markers(env: dict[str, str]) -> dict[str, str]:
    """``env`` without agent or automation markers (CI sets ``CI=true``): the evaluator
    registers plans in their own terminal, and a session-scoped fixture runs before the
    per-test environment is cleaned."""
    return {
        k: v for k, v in env.items()
        if k not in AGENT_MARKERS and not k.startswith(AGENT_MARKER_PREFIXES)
    }


def _clean_env() -> dict[str, str]:
    prefixes = ("PLANGATE_", "GIT_", "CLAUDE", "CODEX", "CURSOR")
    return _without_agent_markers(
        {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    )


def _inprocess_cli(
    cwd: Path, *argv: str, stdin: bytes = b"", env: dict[str, str] | None = None
) -> CliResult:
    import io

    from plangate.cli.context import Context
    from plangate.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    ctx = Context(
        cwd=Path(cwd),
        stdout=out,
        stderr=err,
        stdin=io.BytesIO(stdin),
        env=_clean_env() if env is None else env,
    )
    code = main(list(argv), ctx)
    return CliResult(code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="session")
def harness_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built once per session: the demo harness repository with its plan registered.
    Tests get a private copy through :func:`copy_template` (much faster than rebuilding)."""
    base = tmp_path_factory.mktemp("harness-template")
    repo = base / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Test Author")
    git(repo, "config", "user.email", "author@example.invalid")
    git(repo, "config", "commit.gpgsign", "false")
    hr = make_harness_repo(repo, _inprocess_cli)
    hr.env = _clean_env()
    (base / "state.json").write_text(
        json.dumps(
            {
                "baseline": hr.baseline,
                "manifest_ref": hr.manifest_ref,
                "plan_digest": hr.plan_digest,
            }
        )
    )
    return base


def copy_template(template: Path, dest: Path, run_cli: RunCli) -> HarnessRepo:
    """A private copy of the session template (git objects and ledger included)."""
    import shutil

    shutil.copytree(template / "repo", dest / "repo", symlinks=True)
    state = json.loads((template / "state.json").read_text())
    return HarnessRepo(repo=dest / "repo", run_cli=run_cli, env=dict(os.environ), **state)
