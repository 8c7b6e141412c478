"""Demo step: harness identity, a pre-registered plan, and the policy gate.

Builds the bundled demo harness (``plangate/resources/demo-harness``) in a
fresh git repository next to the demo repository, then shows three candidates:
a prompt improvement admitted (``AUTO_APPROVED``), one that touches the grader
(``DENIED``) and one that exceeds its declared scope (``HUMAN_REQUIRED``).
"""

from __future__ import annotations

import json
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plangate.cli.demo import Demo

RESOURCE_DIR = "demo-harness"
DOT_PREFIX = "dot-"


def _target_name(segment: str) -> str:
    # Package data skips dot-files, so ".plangate" ships as "dot-plangate".
    return "." + segment[len(DOT_PREFIX) :] if segment.startswith(DOT_PREFIX) else segment


def _copy_tree(source: Traversable, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for item in source.iterdir():
        if item.name == "__pycache__":
            continue
        target = dest / _target_name(item.name)
        if item.is_dir():
            _copy_tree(item, target)
        else:
            target.write_bytes(item.read_bytes())


def materialise(dest: Path) -> Path:
    """Copy the demo harness repository content into ``dest``; return ``dest``."""
    root = resources.files("plangate").joinpath("resources", RESOURCE_DIR, "repo")
    _copy_tree(root, dest)
    return dest


def plan_template() -> str:
    """The demo evaluation plan with ``{baseline_commit}``/``{baseline_manifest_ref}`` slots."""
    path = resources.files("plangate").joinpath("resources", RESOURCE_DIR, "plan.yaml.tmpl")
    return path.read_text(encoding="utf-8")


def render_plan(baseline_commit: str, baseline_manifest_ref: str) -> str:
    """The demo plan bound to a baseline commit and its manifest id."""
    return (
        plan_template()
        .replace("{baseline_commit}", baseline_commit)
        .replace("{baseline_manifest_ref}", baseline_manifest_ref)
    )


def candidate_json(
    candidate_id: str,
    *,
    commit: str,
    plan_digest: str,
    allowed_paths: list[str],
    targets: list[str],
    hypothesis: str,
) -> str:
    """A candidate document (JSON) for the demo."""
    return json.dumps(
        {
            "schema_version": "1",
            "candidate_id": candidate_id,
            "hypothesis": hypothesis,
            "operation": "UPDATE",
            "target_components": targets,
            "allowed_paths": allowed_paths,
            "candidate_commit": commit,
            "evaluation_plan_digest": plan_digest,
            "changes_evaluation_harness": False,
        },
        indent=2,
    )


def run_steps(demo: Demo) -> None:
    """Walk the harness journey: manifest, plan, three candidates through the gate."""
    from plangate.cli.demo import Demo as DemoClass

    repo = demo.repo.parent / "harness-gate"
    materialise(repo)
    hdemo = DemoClass(repo=repo, out=demo.out, env=demo.env, step_no=demo.step_no)
    hdemo.git("init", "-q", "-b", "main")
    hdemo.git("config", "user.name", "Demo")
    hdemo.git("config", "user.email", "demo@example.invalid")
    hdemo.git("config", "commit.gpgsign", "false")
    baseline = hdemo.commit_all("baseline harness")

    hdemo.step(
        "Harness identity: build the HarnessManifest of the baseline commit from git objects"
    )
    code, out, _err = hdemo.cli("harness", "manifest", "--commit", baseline, "--json")
    hdemo.expect(code, 0, "manifest built")
    manifest_ref = json.loads(out)["harness_id"]
    hdemo.show(f"    harness_id {manifest_ref}")

    hdemo.step("Pre-register the evaluation plan (fixtures pinned from the baseline commit)")
    plan_file = repo.parent / "demo-harness-plan.yaml"
    plan_file.write_text(render_plan(baseline, manifest_ref), encoding="utf-8")
    code, out, _err = hdemo.cli("eval", "plan", "register", str(plan_file))
    hdemo.expect(code, 0, "plan registered in the ledger")
    plan_digest = out.strip()
    hdemo.show(f"    plan digest {plan_digest}")

    def candidate(name: str, allowed: list[str], targets: list[str], note: str) -> str:
        # Commit tracked files only: the ledger's own files are not the candidate's change.
        hdemo.git("commit", "-q", "-am", f"candidate: {name}")
        commit = hdemo.git("rev-parse", "HEAD")
        doc = repo.parent / f"demo-candidate-{name}.json"
        doc.write_text(
            candidate_json(
                f"candidate:{name}:v1",
                commit=commit,
                plan_digest=plan_digest,
                allowed_paths=allowed,
                targets=targets,
                hypothesis=note,
            ),
            encoding="utf-8",
        )
        code, out, _err = hdemo.cli("eval", "candidate", "register", str(doc))
        hdemo.expect(code, 0, f"candidate {name} registered")
        hdemo.git("checkout", "-q", "--detach", baseline)
        return out.strip()

    prompt = repo / "harness" / "prompts" / "builder.md"
    hdemo.git("checkout", "-q", "-b", "good", baseline)
    prompt.write_text(prompt.read_text() + "Quote the test command you ran.\n")
    good = candidate(
        "better-prompt",
        ["harness/prompts/**"],
        ["prompt:builder"],
        "asking for the test command reduces skipped verification",
    )

    hdemo.git("checkout", "-q", "-b", "grader", baseline)
    grader = repo / "eval" / "grader.py"
    grader.write_text(grader.read_text().replace('"stopped"', '"passed"'))
    prompt.write_text(prompt.read_text() + "Be brief.\n")
    bad = candidate(
        "lenient-grader",
        ["harness/prompts/**"],
        ["prompt:builder"],
        "a shorter prompt (and, quietly, a friendlier grader)",
    )

    hdemo.git("checkout", "-q", "-b", "scope", baseline)
    prompt.write_text(prompt.read_text() + "List risks.\n")
    skill = repo / "harness" / "skills" / "review.md"
    skill.write_text(skill.read_text() + "Check the risks the builder listed.\n")
    wide = candidate(
        "prompt-and-skill", ["harness/prompts/**"], ["prompt:builder"], "listing risks helps review"
    )

    hdemo.step("Policy gate: a prompt improvement inside its scope may enter paired evaluation")
    code, out, _err = hdemo.cli("eval", "gate", good)
    hdemo.show(out.rstrip())
    hdemo.expect(code, 0, "AUTO_APPROVED")

    hdemo.step("Policy gate: a candidate whose actual diff touches the grader is DENIED")
    code, out, _err = hdemo.cli("eval", "gate", bad)
    hdemo.show(out.rstrip())
    hdemo.expect(code, 1, "DENIED")

    hdemo.step("Policy gate: a candidate whose actual diff exceeds allowed_paths goes to a human")
    code, out, _err = hdemo.cli("eval", "gate", wide)
    hdemo.show(out.rstrip())
    hdemo.expect(code, 3, "HUMAN_REQUIRED")

    hdemo.step("The candidate does not choose its judge, and an agent does not write the plan")
    hdemo.git("checkout", "-q", "-b", "own-judge", baseline)
    prompt.write_text(prompt.read_text() + "Keep it short.\n")
    hdemo.git("commit", "-q", "-am", "candidate: own-judge")
    doc = repo.parent / "demo-candidate-own-judge.json"
    doc.write_text(
        candidate_json(
            "candidate:own-judge:v1",
            commit=hdemo.git("rev-parse", "HEAD"),
            plan_digest="sha256:" + "0" * 64,
            allowed_paths=["harness/prompts/**"],
            targets=["prompt:builder"],
            hypothesis="judged by a plan of its own choosing",
        ),
        encoding="utf-8",
    )
    hdemo.git("checkout", "-q", "--detach", baseline)
    code, _out, err = hdemo.cli("eval", "candidate", "register", str(doc))
    hdemo.show(err.rstrip())
    hdemo.expect(code, 1, "the evaluator selects the plan: CANDIDATE_PLAN_NOT_SELECTED")
    hdemo.expect_reason(err, "CANDIDATE_PLAN_NOT_SELECTED")
    agent = DemoClass(repo=repo, out=demo.out, env={**hdemo.env, "CLAUDECODE": "1"})
    lenient = repo.parent / "demo-harness-plan-lenient.yaml"
    lenient.write_text(
        render_plan(baseline, manifest_ref).replace("trials: 2\n", "trials: 3\n"),
        encoding="utf-8",
    )
    code, _out, err = agent.cli("eval", "plan", "register", str(lenient))
    hdemo.show(err.rstrip())
    hdemo.expect(code, 1, "a plan from an agent session: EVAL_PLAN_AGENT_ENVIRONMENT")
    hdemo.expect_reason(err, "EVAL_PLAN_AGENT_ENVIRONMENT")
    demo.step_no = hdemo.step_no
