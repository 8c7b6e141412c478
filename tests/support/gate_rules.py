"""Literal facts for the pure policy gate (plangate.evaluation.gate.rules): a harness
definition, protected surfaces, a registered plan and the gate facts built from them."""

from __future__ import annotations

from typing import Any

from plangate.evaluation.gate.rules import GateFacts
from plangate.evaluation.harness.definition import HarnessDefinition, parse_definition
from plangate.surfaces import load_surfaces_bytes

DEFINITION = """
schema_version = "1"
[[components]]
id = "prompt:builder"
type = "prompt"
paths = ["harness/prompts/**"]
[[components]]
id = "verifier:tests"
type = "verifier"
paths = ["harness/verifiers/tests.py"]
[[components]]
id = "verifier:extra"
type = "verifier"
paths = ["harness/verifiers/extra.py"]
[[components]]
id = "gate:stop"
type = "gate"
paths = ["harness/gates/stop.py"]
[[components]]
id = "eval:meta"
type = "eval"
paths = ["meta/**"]
[verifier_set]
[[verifier_set.stages]]
component = "verifier:tests"
blocking = "block"
[[verifier_set.stages]]
component = "gate:stop"
blocking = "block"
on_unavailable = "block"
applies_to = ["src/**", "lib/**"]
"""

SURFACES = b"""version = 1
[[surface]]
pattern = "eval/**"
class = "evaluator"
reason = "the evaluator"
[[surface]]
pattern = "CLAUDE.md"
class = "human-owned"
reason = "human-owned"
"""

PLAN: dict[str, Any] = {
    "baseline_commit": "a" * 40,
    "baseline_manifest_ref": "sha256:" + "b" * 64,
    "harness_definition": ".plangate/harness.toml",
    "fixtures": [
        {
            "id": "kb",
            "role": "known_bad",
            "path": "fixtures/kb.json",
            "digest": "sha256:" + "c" * 64,
        }
    ],
    "verifier_set": ["verifier:tests", "gate:stop"],
    "runner": {
        "argv": ["python3", "run.py"],
        "files": [{"path": "run.py", "digest": "sha256:" + "d" * 64}],
        "timeout_seconds": 5,
    },
    "grader": {
        "argv": ["python3", "grade.py"],
        "files": [{"path": "grade.py", "digest": "sha256:" + "e" * 64}],
        "timeout_seconds": 5,
    },
}


def definition(text: str = DEFINITION) -> HarnessDefinition:
    """The harness definition ``text`` parsed."""
    return parse_definition(text.encode(), "test")


def facts(diff: list[str], allowed: Any = None, **kw: Any) -> GateFacts:
    """Gate facts for the observed ``diff`` (``allowed``: the candidate's allowed paths)."""
    candidate = {
        "candidate_id": "c1",
        "candidate_commit": "f" * 40,
        "allowed_paths": ["harness/prompts/**"] if allowed is None else allowed,
        "changes_evaluation_harness": kw.pop("changes_evaluation_harness", False),
    }
    base: dict[str, Any] = {
        "candidate": candidate,
        "candidate_digest": "sha256:" + "1" * 64,
        "plan_digest": "sha256:" + "2" * 64,
        "plan": kw.pop("plan", PLAN),
        "baseline_manifest": {"verifier_set": ["verifier:tests", "gate:stop"]},
        "baseline_definition": definition(),
        "candidate_definition": kw.pop("candidate_definition", definition()),
        "surfaces": load_surfaces_bytes(SURFACES, "downstream", "base:surfaces"),
        "surfaces_source": "base:surfaces",
        "observed_diff": tuple(diff),
        "diff_method": "git-diff-no-renames-v1",
    }
    base.update(kw)
    return GateFacts(**base)
