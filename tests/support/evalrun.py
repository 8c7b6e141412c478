"""Build a real harness repository (the bundled demo harness) and drive ``eval run``.

The baseline's completion-evidence verifier is extended before the baseline
commit so that it detects a second known mutant (forged evidence): that gives
candidates a baseline detection power they can lose.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from plangate.canonical import sha256_digest
from plangate.cli.demo.harness import materialise, render_plan
from plangate.evaluation.gate.service import actual_diff
from plangate.evaluation.harness.service import build_manifest
from plangate.evaluation.registry.store import register_candidate, register_plan
from plangate.git import Git, scrubbed_env
from plangate.ledger import open_ledger

BASELINE_VERIFIER = '''"""Completion evidence (baseline): catches forged evidence, not missing evidence."""

ENABLED = True
ENFORCE_MISSING = False


def check(fixture):
    if fixture.get("evidence_forged"):
        return "fail"
    if fixture.get("verification_present"):
        return "pass"
    return "unavailable" if ENFORCE_MISSING else "pass"
'''

GOOD_VERIFIER = BASELINE_VERIFIER.replace("ENFORCE_MISSING = False", "ENFORCE_MISSING = True")

# Catches the incident but drops the forged-evidence check: loses a known mutant.
LOSSY_VERIFIER = '''"""Completion evidence (candidate): enforce presence only."""

ENABLED = True


def check(fixture):
    return "pass" if fixture.get("verification_present") else "unavailable"
'''

FORGED_MUTANT = {
    "run": "r-91c2",
    "tests_pass": True,
    "verification_present": True,
    "evidence_forged": True,
}

MUTANT_LINE = "  - {id: mutant-1, role: known_mutant, path: eval/fixtures/mutant-1.json}\n"


def git(repo: Path, *args: str) -> str:
    """git for test setup."""
    proc = subprocess.run(
        ["git", *args], cwd=repo, env=scrubbed_env(), capture_output=True, check=True
    )
    return proc.stdout.decode().strip()


@dataclass
class HarnessRepo:
    """A harness repository with a registered plan."""

    repo: Path
    baseline: str
    plan_digest: str
    plan_text: str
    env: dict[str, str] = field(default_factory=dict)

    def fixture_digest(self, rel: str) -> str:
        """sha256 of a fixture's bytes at the baseline (what the plan pins)."""
        return sha256_digest(Git(self.repo).read_blob(self.baseline, rel, 1_000_000))

    def candidate(
        self,
        name: str,
        files: dict[str, str],
        *,
        targets: list[str] | None = None,
        allowed: list[str] | None = None,
        plan_digest: str | None = None,
        commit: str | None = None,
    ) -> tuple[str, str]:
        """Commit ``files`` on a branch off the baseline (or reuse ``commit``), register
        the candidate. Returns (candidate digest, candidate commit).
        """
        if commit is None:
            git(self.repo, "checkout", "-q", "-B", f"cand-{name}", self.baseline)
            for rel, text in files.items():
                path = self.repo / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
            git(self.repo, "add", "-A", "--", *files)
            git(self.repo, "commit", "-q", "--allow-empty", "-m", f"candidate {name}")
            commit = git(self.repo, "rev-parse", "HEAD")
            git(self.repo, "checkout", "-q", "--detach", self.baseline)
        doc = {
            "schema_version": "1",
            "candidate_id": f"candidate:{name}:v1",
            "hypothesis": f"hypothesis of {name}",
            "operation": "UPDATE",
            "target_components": targets or ["verifier:completion-evidence"],
            "allowed_paths": allowed or ["harness/verifiers/completion_evidence.py"],
            "candidate_commit": commit,
            "changes_evaluation_harness": False,
        }
        if plan_digest is not None:  # otherwise the evaluator selects the plan
            doc["evaluation_plan_digest"] = plan_digest
        with open_ledger(self.repo, self.env) as ledger:
            git_ = Git(self.repo)
            registered = register_candidate(
                git_,
                ledger,
                json.dumps(doc).encode(),
                "candidate.json",
                lambda base, head: actual_diff(git_, base, head),
            )
        return registered.digest, commit

    def register_plan(self, text: str) -> str:
        """Register another plan text; return its digest."""
        with open_ledger(self.repo, self.env) as ledger:
            return register_plan(Git(self.repo), ledger, text.encode(), "plan.yaml").digest

    def review(self, candidate_id: str, commit: str, /, **overrides: object) -> Path:
        """Write an I3 review record (separate model + pinned sealed fixture) to a file."""
        record: dict[str, object] = {
            "schema": "plangate-review/1",
            "candidate_id": candidate_id,
            "reviewed_commit": commit,
            "author": {
                "model": "model-a",
                "context_id": "ctx-1",
                "run_id": "run-1",
                "role": "implementer",
                "human_identity": None,
            },
            "reviewer": {
                "model": "model-b",
                "context_id": "ctx-2",
                "run_id": "run-2",
                "role": "reviewer",
                "human_identity": None,
            },
            "evidence": [
                {
                    "kind": "sealed_fixture",
                    "ref": self.fixture_digest("eval/fixtures/known-bad.json"),
                }
            ],
        }
        record.update(overrides)
        path = self.repo.parent / f"review-{candidate_id.replace(':', '_')}-{len(record)}.json"
        path.write_text(json.dumps(record))
        return path


def plan_text(baseline: str, manifest_ref: str, *, trials: int = 1, extra: str = "") -> str:
    """The demo plan with the forged-evidence mutant added and ``trials`` trials."""
    text = render_plan(baseline, manifest_ref)
    text = text.replace(
        MUTANT_LINE,
        MUTANT_LINE + "  - {id: mutant-2, role: known_mutant, path: eval/fixtures/mutant-2.json}\n",
    )
    text = text.replace("trials: 2\n", f"trials: {trials}\n")
    if trials == 1:
        text += 'trials_reason: "the demo harness is deterministic"\n'
    return text + extra


def build_harness_repo(
    tmp: Path, *, trials: int = 1, env: dict[str, str] | None = None
) -> HarnessRepo:
    """Materialise the demo harness (with the forged mutant), commit, register the plan."""
    repo = tmp / "harness-repo"
    materialise(repo)
    (repo / "harness/verifiers/completion_evidence.py").write_text(BASELINE_VERIFIER)
    (repo / "eval/fixtures/mutant-2.json").write_text(json.dumps(FORGED_MUTANT))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Test")
    git(repo, "config", "user.email", "test@example.invalid")
    git(repo, "config", "commit.gpgsign", "false")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "baseline harness")
    baseline = git(repo, "rev-parse", "HEAD")
    manifest = build_manifest(Git(repo), baseline)
    text = plan_text(baseline, manifest.harness_id, trials=trials)
    with open_ledger(repo, env or {}) as ledger:
        digest = register_plan(Git(repo), ledger, text.encode(), "plan.yaml").digest
    return HarnessRepo(repo, baseline, digest, text, dict(env or {}))
