"""Codex hook trust as PlanGate's install step records it, with the real Codex.

Codex runs a project hook only when its configuration holds the hook's current hash
under a key naming the clone's ``.codex/hooks.json``; otherwise it skips the hook
without a word. ``plangate setup --codex`` records that trust through Codex's own
app-server. These sessions run ``codex exec`` directly (not the harness's own trust
step), so what they show is what PlanGate's step did.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from support.journey import Journey, Session
from support.model_server import ModelServer, Step, call, say

OUT_OF_SCOPE = "notes.md"


def _codex(journey: Journey, script: Sequence[Step]) -> Session:
    """``codex exec`` against the scripted model; the trust records are left as they are."""
    with ModelServer(script) as model:
        journey.write_codex_config(model.base_url)  # keeps the [hooks.state...] tables
        env = journey.env | {"CODEX_HOME": str(journey.codex_home)}
        args = ["codex", "exec", "--json", "Work on the task."]
        return journey._run("codex", args, env, model)


def _trust_records(journey: Journey) -> dict[str, str]:
    text = (journey.codex_home / "config.toml").read_text()
    return dict(re.findall(r'\[hooks\.state\."([^"]+)"\]\ntrusted_hash = "([^"]+)"', text))


def _forget_trust(journey: Journey) -> None:
    """Another clone or machine: no trust record for this path."""
    config = journey.codex_home / "config.toml"
    text = config.read_text()
    config.write_text(text[: text.index("[hooks.state.")] if "[hooks.state." in text else text)


def _write_attempt(journey: Journey) -> Session:
    return _codex(journey, [call("exec_command", cmd=f"echo x > {OUT_OF_SCOPE}"), say("ok")])


def test_setup_trusts_the_hooks_and_the_hook_denies_in_codex(switched_on: Journey) -> None:
    journey = switched_on
    hooks_file = f"{journey.repo}/.codex/hooks.json"
    records = _trust_records(journey)
    assert sorted(records) == [f"{hooks_file}:{event}:0:0"
                               for event in ("post_tool_use", "pre_tool_use", "stop")]
    assert all(value.startswith("sha256:") for value in records.values())
    journey.approve()
    journey.start()
    session = _write_attempt(journey)
    assert session.returncode == 0, session.describe()
    assert not (journey.repo / OUT_OF_SCOPE).exists(), session.describe()
    text = session.result_text(0)
    assert "PreToolUse hook" in text and "HOOK_OUTSIDE_SCOPE" in text, session.describe()


def test_without_trust_codex_skips_the_hook_and_doctor_says_so(switched_on: Journey) -> None:
    # The person's terminal has no CODEX_HOME (an agent marker): Codex's configuration
    # is ~/.codex/config.toml, the same file the sessions use.
    journey = switched_on
    assert journey.codex_home == journey.home / ".codex"
    _forget_trust(journey)
    doctor = journey.plangate("doctor", "--json", ok=False)
    assert doctor.returncode != 0, doctor.stdout
    reasons = {r["code"]: r for r in json.loads(doctor.stdout)["reasons"]}
    assert "CODEX_HOOKS_UNTRUSTED" in reasons, doctor.stdout
    assert "plangate hooks trust --codex" in reasons["CODEX_HOOKS_UNTRUSTED"]["hint"]
    journey.approve()
    journey.start()
    # The hook does not run: the out-of-scope write goes through. This is the gap.
    session = _write_attempt(journey)
    assert (journey.repo / OUT_OF_SCOPE).exists(), session.describe()
    (journey.repo / OUT_OF_SCOPE).unlink()
    # The fix doctor names, then the same call is denied.
    journey.plangate("hooks", "trust", "--codex")
    doctor = journey.plangate("doctor", "--json", ok=False)
    codes = [r["code"] for r in json.loads(doctor.stdout)["reasons"]]
    assert "CODEX_HOOKS_UNTRUSTED" not in codes, doctor.stdout
    session = _write_attempt(journey)
    assert not (journey.repo / OUT_OF_SCOPE).exists(), session.describe()
    assert "HOOK_OUTSIDE_SCOPE" in session.result_text(0), session.describe()


def test_trust_for_another_command_is_not_trust(switched_on: Journey) -> None:
    """A record whose hash is for another command (a reinstall that changed it) counts
    for nothing: doctor asks Codex, not the file."""
    journey = switched_on
    config = journey.codex_home / "config.toml"
    text = config.read_text()
    config.write_text(re.sub(r'sha256:[0-9a-f]{64}', "sha256:" + "0" * 64, text))
    doctor = journey.plangate("doctor", "--json", ok=False)
    codes = [r["code"] for r in json.loads(doctor.stdout)["reasons"]]
    assert "CODEX_HOOKS_UNTRUSTED" in codes, doctor.stdout
    journey.plangate("hooks", "trust", "--codex")
    assert set(_trust_records(journey).values()) != {"sha256:" + "0" * 64}
    assert Path(config).read_text().startswith('model = "journey-scripted-model"')
