"""An agent runner that cannot run as registered is stopped before any trial, with a code
and a hint, and the INCONCLUSIVE is not final (fix it and run again): a missing or
unpinned host, a credential not set, an endpoint not on the baseline's allowlist."""

from __future__ import annotations

import json
import os
from pathlib import Path

from support.agent_eval import (
    BETTER_RULES,
    KEY_ENV,
    build_agent_repo,
    eval_cli,
    eval_env,
    rules_candidate,
)

ENDPOINT = "http://127.0.0.1:9"


def _fake_host(tmp: Path, version: str) -> Path:
    """A ``claude`` on PATH that prints ``version`` (never started as an agent here)."""
    bin_dir = tmp / f"bin-{version}"
    bin_dir.mkdir()
    program = bin_dir / "claude"
    program.write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n")
    program.chmod(0o755)
    return bin_dir


def _preflight(repo: Path, env: dict[str, str], candidate: str) -> dict[str, object]:
    run = eval_cli(repo, env, "run", candidate, "--json")
    assert run.returncode == 4, run.stdout + run.stderr
    report: dict[str, object] = json.loads(run.stdout)
    facts = report["facts"]
    assert isinstance(facts, dict) and facts.get("preflight"), report
    return report


def _codes(report: dict[str, object]) -> set[str]:
    reasons = report["reasons"]
    assert isinstance(reasons, list)
    return {str(r["code"]) for r in reasons}


def test_a_missing_host_and_a_missing_key_stop_before_any_trial(tmp_path: Path) -> None:
    harness = build_agent_repo(tmp_path, ENDPOINT)
    candidate, _ = rules_candidate(harness, "hints", BETTER_RULES)
    env = eval_env(None)
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep)
                                  if not (Path(p) / "claude").exists())
    del env[KEY_ENV]
    codes = _codes(_preflight(harness.repo, env, candidate))
    assert {"EVAL_AGENT_HOST_MISSING", "EVAL_AGENT_CREDENTIAL_MISSING"} <= codes, codes
    # Not final: the same plan is judged again once the shortfall is fixed.
    again = _codes(_preflight(harness.repo, eval_env(_fake_host(tmp_path, "2.1.198")),
                              candidate))
    assert again == {"EVAL_AGENT_HOST_UNPINNED"}, again


def test_a_host_of_an_unpinned_version_is_refused(tmp_path: Path) -> None:
    harness = build_agent_repo(tmp_path, ENDPOINT)
    candidate, _ = rules_candidate(harness, "hints", BETTER_RULES)
    codes = _codes(_preflight(harness.repo, eval_env(_fake_host(tmp_path, "2.1.198")),
                              candidate))
    assert "EVAL_AGENT_HOST_UNPINNED" in codes, codes


def test_an_endpoint_not_on_the_baseline_allowlist_is_refused(tmp_path: Path) -> None:
    harness = build_agent_repo(tmp_path, ENDPOINT, egress="127.0.0.1:10")
    candidate, _ = rules_candidate(harness, "hints", BETTER_RULES)
    codes = _codes(_preflight(harness.repo, eval_env(_fake_host(tmp_path, "2.1.197")),
                              candidate))
    assert codes == {"EVAL_AGENT_ENDPOINT_NOT_ALLOWED"}, codes
