"""A prompt change judged by running the agent it is for: ``plangate eval run`` with
Claude Code as the trial runner, in boxes, against the scripted model through the
box's egress proxy; the fixture's own checks grade the work.

The scripted model follows the CLAUDE.md it is given (``harness_worker``): a
CLAUDE.md that asks for type hints gets type hints, so the paired evaluation sees
the better prompt stop the incident, and a cosmetic change fail to.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.agent_eval import (
    BETTER_RULES,
    CODEX,
    COSMETIC_RULES,
    KEY_ENV,
    KEY_VALUE,
    PROMPT_FILE,
    build_agent_repo,
    eval_cli,
    eval_env,
    last_experiment,
    rules_candidate,
)
from support.model_server import (
    RULE_TYPE_HINTS,
    ModelServer,
    ToolCall,
    Turn,
    harness_worker,
    obeyed_rules,
    say,
    tool_results,
)


def _trials(repo: Path) -> list[dict[str, Any]]:
    trials = last_experiment(repo)["trials"]
    assert isinstance(trials, list)
    return trials


def _describe(report: dict[str, Any], trials: list[dict[str, Any]]) -> str:
    lines = [f"{r['code']}: {r['message']}" for r in report["decision"]["reasons"]]
    lines += [f"{t['side']} {t['fixture_id']} {t['status']} {t.get('judgement')} "
              f"{t.get('error_code', '')} {t.get('detail', '')}" for t in trials]
    return "\n".join(lines)


def test_a_better_claude_md_passes_and_a_cosmetic_one_fails(
    tmp_path: Path, hosts_bin: Path
) -> None:
    with ModelServer(then=harness_worker) as model:
        harness = build_agent_repo(tmp_path, model.base_url)
        env = eval_env(hosts_bin)
        better, _ = rules_candidate(harness, "type-hints", BETTER_RULES)
        run = eval_cli(harness.repo, env, "run", better, "--json")
        report = json.loads(run.stdout)
        trials = _trials(harness.repo)
        assert report["decision"]["decision"] == "PASS", _describe(report, trials)
        assert len(trials) == 12 and all(t["status"] == "completed" for t in trials), trials
        known_bad = {t["side"]: t for t in trials if t["fixture_id"] == "known-bad-1"}
        assert known_bad["baseline"]["judgement"] == "passed"  # the incident reproduces
        assert known_bad["candidate"]["judgement"] == "stopped"  # the better prompt stops it
        agent = known_bad["candidate"]["agent"]
        assert agent["host"] == "claude" and agent["version"] == "2.1.197", agent
        assert str(agent["transcript_digest"]).startswith("sha256:")
        assert agent["egress"]["refused"] == [], agent
        assert [d["port"] for d in agent["egress"]["contacted"]] == [
            int(model.base_url.rsplit(":", 1)[1])
        ]
        # The model was told the candidate's rule only in the candidate's trials.
        told = [obeyed_rules(r.body) for r in model.requests if r.turn is not None]
        assert any(RULE_TYPE_HINTS in rules for rules in told)
        assert any(RULE_TYPE_HINTS not in rules for rules in told)

        cosmetic, _ = rules_candidate(harness, "cosmetic", COSMETIC_RULES)
        run = eval_cli(harness.repo, env, "run", cosmetic, "--json")
        report = json.loads(run.stdout)
        assert run.returncode == 1, run.stdout + run.stderr
        codes = {r["code"] for r in report["decision"]["reasons"]}
        assert "KNOWN_BAD_NOT_STOPPED" in codes, codes


def test_a_prompt_file_is_judged_as_appended_instructions(
    tmp_path: Path, hosts_bin: Path
) -> None:
    """A plan's prompt file reaches the model as the host's appended system prompt, per
    side: the candidate's version of it asks for type hints, the baseline's does not."""
    with ModelServer(then=harness_worker) as model:
        harness = build_agent_repo(tmp_path, model.base_url, prompt_files=True)
        digest, commit = harness.candidate(
            "prompt", {PROMPT_FILE: "Always add type hints.\n"}, targets=["prompt:builder"],
            allowed=[PROMPT_FILE],
        )
        review = harness.review("candidate:prompt:v1", commit)
        eval_cli(harness.repo, {}, "review", "add", digest, str(review))
        run = eval_cli(harness.repo, eval_env(hosts_bin), "run", digest, "--json")
        report = json.loads(run.stdout)
        trials = _trials(harness.repo)
        assert report["decision"]["decision"] == "PASS", _describe(report, trials)
        systems = [json.dumps(r.body.get("system")) for r in model.requests if r.turn is not None]
    assert any("Always add type hints." in text for text in systems)
    assert any("Work carefully." in text for text in systems)


def test_codex_judged_by_its_agents_md(tmp_path: Path, hosts_bin: Path) -> None:
    """The same evaluation with Codex as the runner: AGENTS.md is its harness file."""
    with ModelServer(then=harness_worker) as model:
        harness = build_agent_repo(tmp_path, model.base_url, host=CODEX)
        better, _ = rules_candidate(harness, "type-hints", BETTER_RULES, "AGENTS.md")
        run = eval_cli(harness.repo, eval_env(hosts_bin), "run", better, "--json")
        report = json.loads(run.stdout)
        trials = _trials(harness.repo)
        assert report["decision"]["decision"] == "PASS", _describe(report, trials)
    agent = next(t["agent"] for t in trials if t["side"] == "candidate")
    assert agent["host"] == "codex" and agent["version"] == "0.171.0", agent
    assert {(d["host"], d["port"]) for d in agent["egress"]["contacted"]} == {
        ("127.0.0.1", int(model.base_url.rsplit(":", 1)[1]))
    }


def test_the_key_is_passed_by_name_and_never_recorded(tmp_path: Path, hosts_bin: Path) -> None:
    with ModelServer(then=harness_worker) as model:
        harness = build_agent_repo(tmp_path, model.base_url)
        better, _ = rules_candidate(harness, "type-hints", BETTER_RULES)
        run = eval_cli(harness.repo, eval_env(hosts_bin), "run", better, "--json")
        assert run.returncode == 0, run.stdout + run.stderr
        keys = {r.api_key for r in model.requests if r.turn is not None}
    assert keys == {KEY_VALUE}, keys  # the host sent the key it was given by name
    ledger_bytes = b"".join(p.read_bytes() for p in (harness.repo / ".plangate").rglob("*")
                            if p.is_file())
    assert KEY_VALUE.encode() not in ledger_bytes
    assert KEY_ENV.encode() in harness.plan_text.encode()


def test_an_agent_reaches_only_the_model_endpoint(tmp_path: Path, hosts_bin: Path) -> None:
    """The box's egress proxy allows the plan's endpoint alone: a destination the agent
    tries besides it is refused and named in the trial's record."""
    probe = ("python3 -c \"import urllib.request\ntry:\n urllib.request.urlopen("
             "'http://updates.example.invalid:81/x', timeout=5)\nexcept Exception as e:\n"
             " print('refused', e)\"")

    def wanders_off(body: dict[str, Any]) -> Turn:
        if any(True for _ in tool_results(body)):
            return say("done")
        return Turn((ToolCall("Bash", {"command": probe, "description": "fetch"}),))

    with ModelServer(then=wanders_off) as model:
        harness = build_agent_repo(tmp_path, model.base_url)
        better, _ = rules_candidate(harness, "type-hints", BETTER_RULES)
        eval_cli(harness.repo, eval_env(hosts_bin), "run", better, "--json")
    trials = _trials(harness.repo)
    assert len(trials) == 12
    for trial in trials:
        egress = trial["agent"]["egress"]
        assert [(d["host"], d["port"]) for d in egress["refused"]] == [
            ("updates.example.invalid", 81)
        ], trial
        assert [d["host"] for d in egress["contacted"]] == ["127.0.0.1"], trial
