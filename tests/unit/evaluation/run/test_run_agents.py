"""Agent hosts as trial runners: the plan sections, the agent task, the judgement and the
result PlanGate writes for an agent trial (plangate.evaluation.run.agents, pure)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from plangate.canonical import sha256_digest
from plangate.evaluation.registry.plan import PlanRejected, validate_plan_object
from plangate.evaluation.run.agents import (
    AGENT_HOSTS,
    RUNNER_KINDS,
    AgentRunRejected,
    agent_host,
    agent_result,
    endpoint_address,
    harness_components,
    judgement_for,
    parse_task,
    validate_section,
)
from plangate.evaluation.run.protocol import parse_result

AGENT = {"kind": "claude", "endpoint": "https://api.anthropic.com",
         "api_key_env": "ANTHROPIC_API_KEY", "timeout_seconds": 300}


def _task(**overrides: Any) -> bytes:
    doc: dict[str, Any] = {
        "schema": "plangate-agent-task/1",
        "prompt": "Add a function add(a, b) to calc.py that returns a + b.",
        "files": {"calc.py": ""},
        "checks": {"files": {"check.py": "raise SystemExit(0)\n"},
                   "commands": [["python3", "check.py"]]},
    }
    doc.update(overrides)
    return json.dumps(doc).encode()


def test_every_agent_host_is_a_runner_kind() -> None:
    assert RUNNER_KINDS == ("command", "claude", "codex")
    assert [h.kind for h in AGENT_HOSTS] == ["claude", "codex"]
    assert agent_host("claude") is AGENT_HOSTS[0] and agent_host("command") is None


def test_an_agent_section_pins_no_file_and_runs_no_argv() -> None:
    section = validate_section("runner", AGENT)
    assert section == {**AGENT, "argv": [], "files": [], "prompt_files": []}
    assert validate_section("runner", section) == section  # the registered form re-validates


def test_a_credential_the_host_is_not_granted_is_refused() -> None:
    with pytest.raises(AgentRunRejected) as refused:
        validate_section("runner", {**AGENT, "api_key_env": "AWS_SECRET_ACCESS_KEY"})
    assert refused.value.code == "EVAL_AGENT_CREDENTIAL_NOT_GRANTED"
    with pytest.raises(AgentRunRejected) as codex_key:
        validate_section("runner", {**AGENT, "api_key_env": "OPENAI_API_KEY"})
    assert codex_key.value.code == "EVAL_AGENT_CREDENTIAL_NOT_GRANTED"


@pytest.mark.parametrize(
    "endpoint", ["ftp://api.anthropic.com", "https://user:pw@api.anthropic.com",
                 "api.anthropic.com", "https://api.anthropic.com?x=1", ""],
)
def test_an_endpoint_that_is_not_an_http_url_is_refused(endpoint: str) -> None:
    with pytest.raises(AgentRunRejected) as refused:
        validate_section("runner", {**AGENT, "endpoint": endpoint})
    assert refused.value.code == "EVAL_AGENT_ENDPOINT_INVALID"


def test_endpoint_addresses() -> None:
    assert endpoint_address("https://api.anthropic.com") == ("api.anthropic.com", 443)
    assert endpoint_address("http://127.0.0.1:8080/v1") == ("127.0.0.1", 8080)
    assert endpoint_address("http://model.internal") == ("model.internal", 80)
    assert endpoint_address("https://x:99999") is None


def test_unknown_keys_and_kinds_are_refused() -> None:
    with pytest.raises(AgentRunRejected) as unknown:
        validate_section("runner", {**AGENT, "argv": ["claude", "--dangerous"]})
    assert unknown.value.code == "EVAL_PLAN_UNKNOWN_KEY"
    with pytest.raises(AgentRunRejected) as grader:
        validate_section("grader", {**AGENT})
    assert grader.value.code == "EVAL_PLAN_INVALID"
    with pytest.raises(AgentRunRejected) as model:
        validate_section("runner", {**AGENT, "model": "x y; rm -rf /"})
    assert model.value.code == "EVAL_PLAN_INVALID"
    with pytest.raises(AgentRunRejected) as missing:
        validate_section("runner", {"kind": "claude", "timeout_seconds": 5})
    assert missing.value.code == "EVAL_PLAN_ITEM_MISSING"


def test_a_plan_names_an_agent_runner_and_the_checks_grader() -> None:
    from support.agent_eval import PLAN

    text = PLAN.format(baseline="a" * 40, manifest="sha256:" + "0" * 64, kind="claude",
                       endpoint="https://api.anthropic.com", key_env="ANTHROPIC_API_KEY",
                       model_line="  model: claude-sonnet-4-5\n", prompt_line="")
    from plangate.evaluation.registry.plan import load_document

    plan = validate_plan_object(load_document(text.encode(), "plan"), registered=False)
    assert plan["runner"]["kind"] == "claude" and plan["runner"]["files"] == []
    assert plan["runner"]["model"] == "claude-sonnet-4-5"
    assert plan["grader"] == {"kind": "fixture-checks", "argv": [], "files": [],
                              "timeout_seconds": 60}
    bad = text.replace("api_key_env: ANTHROPIC_API_KEY", "api_key_env: GITHUB_TOKEN")
    with pytest.raises(PlanRejected) as refused:
        validate_plan_object(load_document(bad.encode(), "plan"), registered=False)
    assert refused.value.code == "EVAL_AGENT_CREDENTIAL_NOT_GRANTED"


def test_an_agent_task_is_read_strictly() -> None:
    task = parse_task(_task())
    assert task.files == (("calc.py", b""),)
    assert task.check_commands == (("python3", "check.py"),)
    for bad in (_task(schema="plangate-agent-task/2"), _task(prompt=" "),
                _task(files={"../escape.py": "x"}), _task(files={"/etc/passwd": "x"}),
                _task(checks={"files": {}, "commands": []}), _task(extra=1), b"[]"):
        with pytest.raises(AgentRunRejected) as refused:
            parse_task(bad)
        assert refused.value.code == "EVAL_AGENT_TASK_INVALID"


def test_meeting_the_bar_stops_an_incident_and_passes_a_control() -> None:
    for role in ("known_bad", "sealed_negative", "known_mutant"):
        assert judgement_for(role, True) == "stopped"
        assert judgement_for(role, False) == "passed"
    for role in ("negative_control", "sealed_positive", "regression"):
        assert judgement_for(role, True) == "passed"
        assert judgement_for(role, False) == "stopped"


ANSWERED = b'{"type":"system"}\n{"type":"assistant","message":{}}\n{"type":"result"}\n'


def test_the_result_claims_fired_only_with_a_model_answer() -> None:
    fired = agent_result("t1", exit_code=0, transcript=ANSWERED, components=["context:claude-md"])
    report = parse_result(json.dumps(fired).encode(), trial_id="t1", side="candidate",
                          fixture_id="f", role="known_bad", trial=1)
    activation = report.activation["context:claude-md"]
    assert activation.level == "fired"
    assert activation.evidence_refs == (f"transcript:{sha256_digest(ANSWERED)}",)
    silent = agent_result("t1", exit_code=0, transcript=b'{"type":"system"}\n',
                          components=["context:claude-md"])
    assert silent["activation"]["context:claude-md"]["level"] == "selected"
    failed = agent_result("t1", exit_code=1, transcript=ANSWERED, components=[])
    assert failed["outcome"] == "BLOCKED" and failed["stop_reasons"] == ["NO_PROGRESS"]


def test_components_are_those_whose_files_the_host_was_given() -> None:
    components = [("context:claude-md", ("CLAUDE.md",)), ("skill:review", (".claude/skills/**",)),
                  ("prompt:builder", ("harness/prompts/builder.md",))]
    placed = ["CLAUDE.md", ".claude/skills/review/SKILL.md"]
    assert harness_components(components, placed) == ["context:claude-md", "skill:review"]
