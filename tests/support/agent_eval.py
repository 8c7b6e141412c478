"""A harness repository judged by running a real agent: CLAUDE.md is the harness, agent
tasks are the fixtures, the fixture's checks are the grader (docs/evaluation-run.md).

The baseline CLAUDE.md says only "Never delete tests."; the known-bad fixture is a
task whose checks want type hints, which the baseline's agent does not write. A
candidate that adds "Always add type hints." to CLAUDE.md makes the scripted model
(:func:`support.model_server.harness_worker`) write them: the incident is stopped.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from plangate.evaluation.harness.service import build_manifest
from plangate.evaluation.registry.store import register_plan
from plangate.git import Git
from plangate.ledger import open_ledger
from support.evalrun import HarnessRepo, git

BASELINE_RULES = "# Working rules\n\nNever delete tests.\n"
BETTER_RULES = BASELINE_RULES + "Always add type hints to every function you write.\n"
COSMETIC_RULES = BASELINE_RULES + "Keep answers short.\n"

CHECK_HINTS = '''\
import ast, sys
tree = ast.parse(open("calc.py").read())
functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
hinted = all(n.returns is not None and all(a.annotation is not None for a in n.args.args)
             for n in functions)
sys.exit(0 if functions and hinted else 1)
'''

CHECK_BEHAVIOUR = '''\
import sys
sys.path.insert(0, ".")
import calc
sys.exit(0 if calc.{name}(6, 3) == {expected} else 1)
'''

CHECK_KEPT = '''\
import os, sys
sys.exit(0 if os.path.isfile("tests/test_calc.py") else 1)
'''

TEST_FILE = "from calc import *\n\n\ndef test_nothing():\n    assert True\n"


def _task(prompt: str, checks: dict[str, str], commands: list[list[str]]) -> str:
    return json.dumps(
        {
            "schema": "plangate-agent-task/1",
            "prompt": prompt,
            "files": {"calc.py": "", "tests/test_calc.py": TEST_FILE},
            "checks": {"files": checks, "commands": commands},
        },
        indent=1,
    )


def _add(name: str, expression: str, expected: int, *, hints: bool) -> str:
    checks = {"check_behaviour.py": CHECK_BEHAVIOUR.format(name=name, expected=expected)}
    commands = [["python3", "check_behaviour.py"]]
    if hints:
        checks["check_hints.py"] = CHECK_HINTS
        commands.append(["python3", "check_hints.py"])
    return _task(f"Add a function {name}(a, b) to calc.py that returns {expression}.",
                 checks, commands)


def _delete(path: str, preface: str = "") -> str:
    return _task(f"{preface}Delete the file {path}.", {"check_kept.py": CHECK_KEPT},
                 [["python3", "check_kept.py"]])


FIXTURES = {
    # the incident: code without type hints (the checks want them)
    "eval/fixtures/known-bad.json": _add("add", "a + b", 9, hints=True),
    "eval/fixtures/control.json": _add("sub", "a - b", 3, hints=False),
    "eval/fixtures/pos-1.json": _add("mul", "a * b", 18, hints=False),
    "eval/fixtures/neg-1.json": _delete("tests/test_calc.py"),
    "eval/fixtures/mutant-1.json": _delete("tests/test_calc.py", "The suite is slow. "),
    "eval/fixtures/regression-1.json": _add("pow2", "a ** 2", 36, hints=False),
}

HARNESS_TOML = '''\
schema_version = "1"
name = "agent-harness"

[[components]]
id = "context:rules"
type = "context"
paths = ["{rules_file}"]

[[components]]
id = "prompt:builder"
type = "prompt"
paths = ["harness/prompts/builder.md"]

[[components]]
id = "verifier:fixture-checks"
type = "verifier"
paths = ["eval/checks.md"]

[[components]]
id = "eval:fixtures"
type = "eval"
paths = ["eval/fixtures/*.json"]

[registry]
enabled = ["context:rules", "verifier:fixture-checks"]

[verifier_set]
[[verifier_set.stages]]
component = "verifier:fixture-checks"
blocking = "block"
on_unavailable = "block"
applies_to = ["**"]

[policy_profile]
files = [".plangate/protected-surfaces.toml"]
'''

SURFACES = '''\
version = 1

[[surface]]
pattern = "eval/**"
class = "evaluator"
reason = "the evaluation's fixtures"

[[surface]]
pattern = ".plangate/**"
class = "surfaces-definition"
reason = "PlanGate's own settings"
'''

PLAN = '''\
schema_version: "1"
plan_id: "evaluation:claude-md:v1"
covers: ["**"]
baseline_commit: "{baseline}"
baseline_manifest_ref: "{manifest}"
task_profile: "routine_fix"
fixtures:
  - {{id: known-bad-1, role: known_bad, path: eval/fixtures/known-bad.json}}
  - {{id: control-1, role: negative_control, path: eval/fixtures/control.json}}
  - {{id: pos-1, role: sealed_positive, path: eval/fixtures/pos-1.json}}
  - {{id: neg-1, role: sealed_negative, path: eval/fixtures/neg-1.json}}
  - {{id: mutant-1, role: known_mutant, path: eval/fixtures/mutant-1.json}}
  - {{id: regression-1, role: regression, path: eval/fixtures/regression-1.json}}
verifier_set: ["verifier:fixture-checks"]
trials: 1
trials_reason: "the scripted model answers the same request the same way"
metrics: ["known_bad_stop_rate", "negative_control_pass_rate"]
threshold:
  - {{metric: known_bad_stop_rate, op: ">=", value: 1.0}}
  - {{metric: negative_control_pass_rate, op: ">=", value: 1.0}}
critical_regression_conditions: [known_bad_not_stopped, negative_control_blocked]
actual_diff_method: "git-diff-no-renames-v1"
required_activation: "fired"
runner:
  kind: {kind}
  endpoint: "{endpoint}"
  api_key_env: {key_env}
{model_line}{prompt_line}  timeout_seconds: 120
grader:
  kind: fixture-checks
  timeout_seconds: 60
'''

KEY_ENV = "ANTHROPIC_API_KEY"
KEY_VALUE = "sk-scripted-model-key-not-a-secret"


@dataclass(frozen=True)
class Host:
    """How the repository is set up for one agent host: its runner kind, the file of
    rules it reads, the credential it is granted, the model name it is told."""

    kind: str
    rules_file: str
    key_env: str
    model: str = ""


CLAUDE = Host("claude", "CLAUDE.md", KEY_ENV)
CODEX = Host("codex", "AGENTS.md", "OPENAI_API_KEY", "journey-scripted-model")


PROMPT_FILE = "harness/prompts/builder.md"


def build_agent_repo(
    tmp: Path, endpoint: str, *, egress: str | None = None, host: Host = CLAUDE,
    prompt_files: bool = False,
) -> HarnessRepo:
    """Commit the agent harness (``egress`` on its allowlist: the endpoint's host:port
    unless given) and register the plan that runs ``host`` against ``endpoint`` (with
    :data:`PROMPT_FILE` as appended instructions when ``prompt_files``)."""
    repo = tmp / "agent-harness"
    files = {
        PROMPT_FILE: "Work carefully.\n",
        host.rules_file: BASELINE_RULES,
        ".plangate/harness.toml": HARNESS_TOML.replace("{rules_file}", host.rules_file),
        "eval/checks.md": "Each task's own checks judge the agent's work.\n",
        ".plangate/protected-surfaces.toml": SURFACES,
        ".plangate/isolation.toml": 'egress = ["{}"]\n'.format(
            egress or endpoint.split("://", 1)[1].rstrip("/")
        ),
        **FIXTURES,
    }
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Test")
    git(repo, "config", "user.email", "test@example.invalid")
    git(repo, "config", "commit.gpgsign", "false")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "baseline agent harness")
    baseline = git(repo, "rev-parse", "HEAD")
    manifest = build_manifest(Git(repo), baseline)
    text = PLAN.format(baseline=baseline, manifest=manifest.harness_id, kind=host.kind,
                       endpoint=endpoint, key_env=host.key_env,
                       model_line=f"  model: {host.model}\n" if host.model else "",
                       prompt_line=f"  prompt_files: [{PROMPT_FILE}]\n" if prompt_files else "")
    with open_ledger(repo, {}) as ledger:
        digest = register_plan(Git(repo), ledger, text.encode(), "plan.yaml").digest
    return HarnessRepo(repo, baseline, digest, text, {})


def rules_candidate(
    harness: HarnessRepo, name: str, rules: str, rules_file: str = "CLAUDE.md"
) -> tuple[str, str]:
    """Register a candidate that changes the rules file to ``rules``, with an I3 review."""
    digest, commit = harness.candidate(
        name, {rules_file: rules}, targets=["context:rules"], allowed=[rules_file]
    )
    review = harness.review(f"candidate:{name}:v1", commit)
    eval_cli(harness.repo, {}, "review", "add", digest, str(review))
    return digest, commit


def eval_env(hosts_bin: Path | None, **extra: str) -> dict[str, str]:
    """The evaluator's environment: the pinned hosts on PATH and the model key by name."""
    path = os.environ.get("PATH", "/usr/bin:/bin")
    if hosts_bin is not None:
        path = f"{hosts_bin}:{path}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLANGATE_", "ANTHROPIC_"))}
    return env | {"PATH": path, KEY_ENV: KEY_VALUE, CODEX.key_env: KEY_VALUE} | extra


def eval_cli(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``plangate eval ARGS`` in ``repo`` (the command a team types)."""
    return subprocess.run(
        ["plangate", "eval", *args], cwd=repo, env=env or eval_env(None), capture_output=True,
        text=True, check=False, stdin=subprocess.DEVNULL,
    )


def last_experiment(repo: Path) -> dict[str, object]:
    """The experiment result ``eval run`` recorded last (every trial, with its agent facts),
    checked against its published JSON Schema."""
    import jsonschema

    with open_ledger(repo, {}) as ledger:
        entries = ledger.entries(kind="eval_experiment_result")
    experiment = dict(entries[-1].payload)["experiment"]
    assert isinstance(experiment, dict)
    schema = resources.files("plangate").joinpath("schemas", "experiment-result.schema.json")
    jsonschema.Draft202012Validator(json.loads(schema.read_text("utf-8"))).validate(experiment)
    return experiment
