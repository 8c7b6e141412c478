"""Demo step: a full harness improvement round, from manifests to the Promotion Decision.

On the bundled demo harness, whose baseline completion-evidence verifier lets a
"verification skipped" run reach MERGE_READY (and catches forged evidence):

1. a candidate that enforces evidence: the incident is stopped, nothing is lost -> PASS;
2. a candidate that enforces presence only: it catches the incident but loses the
   forged-evidence known mutant the baseline detects -> FAIL;
3. a candidate whose verifier crashes on one fixture: fewer completed trials than
   the plan registered -> INCONCLUSIVE.

Each candidate gets an independent review (separate model plus a sealed fixture
as machine evidence: I3, the minimum for verifier changes).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from plangate.canonical import sha256_digest

if TYPE_CHECKING:
    from plangate.cli.demo import Demo

VERIFIER_PATH = "harness/verifiers/completion_evidence.py"

BASELINE_VERIFIER = '''"""Completion evidence (baseline): catches forged, not missing evidence."""

ENABLED = True
ENFORCE_MISSING = False


def check(fixture):
    if fixture.get("evidence_forged"):
        return "fail"
    if fixture.get("verification_present"):
        return "pass"
    return "unavailable" if ENFORCE_MISSING else "pass"
'''

ENFORCING_VERIFIER = BASELINE_VERIFIER.replace(
    "ENFORCE_MISSING = False", "ENFORCE_MISSING = True"
).replace("(baseline)", "(candidate)")

PRESENCE_ONLY_VERIFIER = '''"""Completion evidence (candidate): enforce presence only."""

ENABLED = True


def check(fixture):
    return "pass" if fixture.get("verification_present") else "unavailable"
'''

FLAKY_VERIFIER = ENFORCING_VERIFIER.replace(
    "def check(fixture):\n",
    "def check(fixture):\n"
    "    if fixture.get('tests_pass') is False:\n"
    "        raise RuntimeError('cannot read the test log')\n",
)

FORGED_MUTANT = {
    "run": "r-91c2",
    "tests_pass": True,
    "verification_present": True,
    "evidence_forged": True,
}

_MUTANT_LINE = "  - {id: mutant-1, role: known_mutant, path: eval/fixtures/mutant-1.json}\n"
_FORGED_LINE = "  - {id: mutant-2, role: known_mutant, path: eval/fixtures/mutant-2.json}\n"


def improvement_plan(baseline: str, manifest_ref: str) -> str:
    """The demo plan plus the forged-evidence known mutant, one trial per side.

    One trial is enough because the demo harness is deterministic; the plan says
    so in ``trials_reason`` (a single trial needs a written reason).
    """
    from plangate.cli.demo.harness import render_plan

    text = render_plan(baseline, manifest_ref).replace(
        _MUTANT_LINE,
        _MUTANT_LINE + _FORGED_LINE,
    )
    text = re.sub(r"(?m)^trials: \d+$", "trials: 1", text)
    return text + 'trials_reason: "the demo harness is deterministic: one trial per side"\n'



def review_record(candidate_id: str, commit: str, sealed_ref: str) -> str:
    """An I3 review: a separate model, its own context/run/role, a sealed fixture as evidence."""
    return json.dumps(
        {
            "schema": "plangate-review/1",
            "candidate_id": candidate_id,
            "reviewed_commit": commit,
            "author": {"model": "model-a", "context_id": "builder-ctx", "run_id": "run-17",
                       "role": "implementer", "human_identity": None},
            "reviewer": {"model": "model-b", "context_id": "review-ctx", "run_id": "run-18",
                         "role": "reviewer", "human_identity": None},
            "evidence": [{"kind": "sealed_fixture", "ref": sealed_ref}],
        },
        indent=2,
    )


def run_steps(demo: Demo) -> None:
    """Walk one improvement round: PASS, FAIL (lost mutant), INCONCLUSIVE (too few trials)."""
    from plangate.cli.demo import Demo as DemoClass
    from plangate.cli.demo.harness import materialise

    repo = demo.repo.parent / "harness-improve"
    materialise(repo)
    (repo / VERIFIER_PATH).write_text(BASELINE_VERIFIER, encoding="utf-8")
    (repo / "eval" / "fixtures" / "mutant-2.json").write_text(
        json.dumps(FORGED_MUTANT), encoding="utf-8"
    )
    idemo = DemoClass(repo=repo, out=demo.out, env=demo.env, step_no=demo.step_no)
    idemo.git("init", "-q", "-b", "main")
    idemo.git("config", "user.name", "Demo")
    idemo.git("config", "user.email", "demo@example.invalid")
    idemo.git("config", "commit.gpgsign", "false")
    baseline = idemo.commit_all("baseline harness: verification-skipped slips through")

    idemo.step("Improvement round: pre-register the plan (two known mutants, fixtures pinned)")
    code, out, _err = idemo.cli("harness", "manifest", "--commit", baseline, "--json")
    idemo.expect(code, 0, "baseline manifest")
    manifest_ref = json.loads(out)["harness_id"]
    plan_file = repo.parent / "improvement-plan.yaml"
    plan_file.write_text(improvement_plan(baseline, manifest_ref), encoding="utf-8")
    code, out, _err = idemo.cli("eval", "plan", "register", str(plan_file))
    idemo.expect(code, 0, "plan registered")
    plan_digest = out.strip()
    sealed_ref = sha256_digest((repo / "eval" / "fixtures" / "known-bad.json").read_bytes())

    def candidate(name: str, verifier: str, hypothesis: str) -> str:
        idemo.git("checkout", "-q", "-b", f"improve-{name}", baseline)
        (repo / VERIFIER_PATH).write_text(verifier, encoding="utf-8")
        idemo.git("commit", "-q", "-am", f"candidate: {name}")
        commit = idemo.git("rev-parse", "HEAD")
        idemo.git("checkout", "-q", "--detach", baseline)
        cid = f"candidate:{name}:v1"
        doc = repo.parent / f"improvement-{name}.json"
        doc.write_text(
            json.dumps(
                {
                    "schema_version": "1",
                    "candidate_id": cid,
                    "hypothesis": hypothesis,
                    "operation": "UPDATE",
                    "target_components": ["verifier:completion-evidence"],
                    "allowed_paths": [VERIFIER_PATH],
                    "candidate_commit": commit,
                    "evaluation_plan_digest": plan_digest,
                    "changes_evaluation_harness": False,
                },
                indent=2,
            ),
            encoding="utf-8",
        )
        code, out, _err = idemo.cli("eval", "candidate", "register", str(doc))
        idemo.expect(code, 0, f"candidate {name} registered")
        digest = out.strip()
        review = repo.parent / f"improvement-{name}-review.json"
        review.write_text(review_record(cid, commit, sealed_ref), encoding="utf-8")
        code, out, _err = idemo.cli("eval", "review", "add", digest, str(review))
        idemo.expect(code, 0, "independent review attached (I3: separate model + sealed fixture)")
        return digest

    def evaluate(digest: str, expected: int, what: str) -> None:
        code, out, _err = idemo.cli("eval", "run", digest, "--jobs", "2")
        idemo.show("\n".join("    " + line for line in out.rstrip().splitlines()))
        idemo.expect(code, expected, what)

    enforce = candidate("enforce-evidence", ENFORCING_VERIFIER,
                        "enforcing completion evidence stops runs that skipped verification")
    idemo.step("Paired evaluation: the candidate stops the incident and keeps every mutant")
    evaluate(enforce, 0, "PASS (production_promotion_executed: false)")

    presence = candidate("presence-only", PRESENCE_ONLY_VERIFIER,
                         "a simpler presence check is enough")
    idemo.step("Paired evaluation: catches the incident but loses the forged-evidence mutant")
    evaluate(presence, 1, "FAIL (detection below baseline)")

    flaky = candidate("flaky-verifier", FLAKY_VERIFIER, "also read the test log")
    idemo.step("Paired evaluation: trials crash, fewer complete than registered")
    evaluate(flaky, 4, "INCONCLUSIVE (never a PASS, final for this plan)")
    demo.step_no = idemo.step_no


__all__ = ["improvement_plan", "review_record", "run_steps"]

