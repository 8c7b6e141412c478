"""``plangate doctor``: prove that the installed hooks really deny, and really allow.

A configuration file that mentions a hook proves nothing (a wrong path, a
missing interpreter, a host that rejects the file, exit 1 instead of 2...).
Doctor therefore runs every installed PlanGate hook command exactly as the
host would (the command line through ``/bin/sh``, in the repository root,
with a canary payload on stdin) and judges what comes back in the host's own
terms. Canaries:

- ``guarded-write``: a write to ``.plangate/doctor-canary`` (guarded by
  construction, so it must be denied in every repository state);
- ``shell-write``: the shell command ``echo canary > .plangate/doctor-canary``;
- ``malformed``: a payload that is not JSON (a crash path must deny too);
- ``allowed-write``: a write the current state allows (a path inside the active
  task's scope, or with no active task a planning file of an unused task): it
  must be **allowed**, or the hooks would block every call (PlanGate missing on
  ``PATH``, a broken ledger).

Besides the canaries, doctor checks what makes hooks silently do nothing
(:func:`setting_findings`): the ledger is present and verifies; committed hook
files name no machine path; Claude Code's managed or user settings do not turn
project hooks off (``disableAllHooks``, ``allowManagedHooksOnly``); Codex has
hooks on and a trust record for each PlanGate hook (an untrusted or modified
hook never runs); and whether each host fails closed when a hook times out
(Cursor ``failClosed``, Claude Code ``onFailure: "block"``). A *warning* does
not fail doctor; a *failure* does.

Git hooks are run in a throwaway repository with the canary file staged
(pre-commit) or as a push of a commit that adds it (pre-push).

Only commands carrying the ``plangate-managed`` marker (or running
``plangate hook``) are executed; other people's hooks are listed as skipped,
never run. The verdict is ``PASS`` only when at least one host is installed
and every canary of every command was denied.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plangate.hooks.doctor_settings import Finding
from plangate.shapes import is_task_id
from plangate.verdict import Reason, Result

CANARY_RELPATH = ".plangate/doctor-canary"
TIMEOUT_SECONDS = 60


@dataclass(frozen=True)
class Probe:
    """One canary run of one command (``expect``: what must happen, deny or allow)."""

    host: str
    event: str
    canary: str
    denied: bool
    detail: str
    expect: str = "deny"

    @property
    def ok(self) -> bool:
        """The canary got the answer it must get."""
        return self.denied == (self.expect == "deny")

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        return {"host": self.host, "event": self.event, "canary": self.canary,
                "denied": self.denied, "detail": self.detail, "expect": self.expect,
                "ok": self.ok}


ALLOW_CANARY = "allowed-write"


def allow_target(root: str) -> str:
    """A path the hooks must allow now: inside the open task session's scope (its first
    literal pattern), else a planning file of a task id no directory uses."""

    session_path = _session_allowed_path(root)
    if session_path:
        return session_path
    working = Path(root, "docs", "working")
    used = {p.name for p in working.iterdir()} if working.is_dir() else set()
    for number in range(9999, 0, -1):
        task = f"TASK-{number:04d}"
        if task not in used and is_task_id(task):
            return f"docs/working/{task}/plan.md"
    return "docs/working/TASK-9999/plan.md"


def _session_allowed_path(root: str) -> str:
    from plangate.clock import utc_now
    from plangate.errors import PlanGateError
    from plangate.ledger import LedgerError, open_ledger
    from plangate.session.state import active_session

    try:
        with open_ledger(Path(root), dict(os.environ), create=False) as ledger:
            session = active_session(ledger, utc_now())
    except (LedgerError, PlanGateError, OSError):
        return ""
    if session is None:
        return ""
    from plangate.hooks.service import task_facts

    facts = task_facts(root, session.task_id, "doctor")
    for pattern in facts.allowed_paths or ():
        if not any(c in pattern for c in "*?[{"):
            return pattern
    return ""


def _allow_payload(host: str, root: str, target: str) -> bytes:
    full = f"{root.rstrip('/')}/{target}"
    if host == "claude":
        return json.dumps({"session_id": "plangate-doctor", "cwd": root,
                           "hook_event_name": "PreToolUse", "tool_name": "Write",
                           "tool_input": {"file_path": full, "content": "canary"}}).encode()
    if host == "codex":
        patch = f"*** Begin Patch\n*** Update File: {full}\n+canary\n*** End Patch\n"
        return json.dumps({"session_id": "plangate-doctor", "cwd": root,
                           "hook_event_name": "PreToolUse", "tool_name": "apply_patch",
                           "tool_input": {"command": patch}}).encode()
    return json.dumps({"conversation_id": "plangate-doctor", "generation_id": "doctor",
                       "workspace_roots": [root], "hook_event_name": "preToolUse",
                       "tool_name": "Write", "tool_input": {"file_path": full}}).encode()


def judge_allow(host: str, proc: subprocess.CompletedProcess[bytes]) -> tuple[bool, str]:
    """Did the host get an allow? ``(denied, detail)``."""
    out = proc.stdout.decode("utf-8", "replace").strip()
    err = proc.stderr.decode("utf-8", "replace").strip()
    first_err = err.splitlines()[0][:200] if err else ""
    if host == "cursor":
        try:
            body = json.loads(out) if out else {}
        except ValueError:
            return True, f"exit {proc.returncode} with non-JSON output {first_err}".strip()
        if isinstance(body, dict) and body.get("permission") == "allow":
            return False, "permission allow"
        return True, f"not allowed: {str(body.get('agent_message', first_err))[:200]}"
    if proc.returncode == 2:
        return True, f"exit 2: {first_err}"
    if '"permissionDecision":"deny"' in out.replace(" ", ""):
        return True, f"exit {proc.returncode} with permissionDecision deny"
    return False, f"exit {proc.returncode} (allowed)"


def _payloads(host: str, root: str) -> list[tuple[str, bytes]]:
    target = f"{root.rstrip('/')}/{CANARY_RELPATH}"
    shell = f"echo canary > {CANARY_RELPATH}"
    if host in ("claude", "codex"):
        write_tool = "Write" if host == "claude" else "apply_patch"
        write_input: dict[str, Any] = (
            {"file_path": target, "content": "canary"} if host == "claude"
            else {"command": f"*** Begin Patch\n*** Add File: {target}\n+canary\n*** End Patch\n"}
        )
        base = {"session_id": "plangate-doctor", "cwd": root, "hook_event_name": "PreToolUse"}
        return [
            ("guarded-write", json.dumps({**base, "tool_name": write_tool,
                                          "tool_input": write_input}).encode()),
            ("shell-write", json.dumps({**base, "tool_name": "Bash",
                                        "tool_input": {"command": shell}}).encode()),
            ("malformed", b"{not json"),
        ]
    envelope: dict[str, Any] = {"conversation_id": "plangate-doctor",
                                "generation_id": "doctor", "workspace_roots": [root]}
    return [
        ("guarded-write", json.dumps({**envelope, "hook_event_name": "preToolUse",
                                      "tool_name": "Write",
                                      "tool_input": {"file_path": target}}).encode()),
        ("shell-write", json.dumps({**envelope, "hook_event_name": "beforeShellExecution",
                                    "command": shell, "cwd": root}).encode()),
        ("malformed", b"{not json"),
    ]


def _scrubbed_env() -> dict[str, str]:
    # The canary must be judged as in a fresh agent session: no inherited task.
    return {k: v for k, v in os.environ.items() if k != "PLANGATE_TASK"}


def _run_shell(command: str, cwd: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    # The host runs the configured line through a shell; doctor must do exactly the same.
    return subprocess.run(  # noqa: S602 -- reproducing the host's own shell invocation
        command, shell=True, cwd=cwd, input=stdin, capture_output=True,
        timeout=TIMEOUT_SECONDS, env=_scrubbed_env(), check=False,
    )


def judge(host: str, proc: subprocess.CompletedProcess[bytes]) -> tuple[bool, str]:
    """Did PlanGate deny, in the host's own terms? ``(denied, detail)``.

    A block that does not carry PlanGate's reason (the interpreter is missing,
    the package cannot be imported) is not a pass: it locks every tool call.
    """
    from plangate.hooks.install import NOT_FOUND_CODE

    out = proc.stdout.decode("utf-8", "replace").strip()
    err = proc.stderr.decode("utf-8", "replace").strip()
    if NOT_FOUND_CODE in out or NOT_FOUND_CODE in err:
        return False, f"PlanGate is not on PATH for this host ({NOT_FOUND_CODE}): every call blocks"
    ours = "PlanGate denied" in out or "PlanGate denied" in err
    first_err = err.splitlines()[0][:160] if err else ""
    if host in ("claude", "codex"):
        if proc.returncode == 2:
            if ours:
                return True, "exit 2 (blocking)"
            return False, f"exit 2 but not from PlanGate (broken install?): {first_err}"
        if proc.returncode == 0 and out:
            try:
                body = json.loads(out)
            except ValueError:
                return False, "exit 0 with non-JSON output: the tool would run"
            hso = body.get("hookSpecificOutput", {}) if isinstance(body, dict) else {}
            if isinstance(hso, dict) and hso.get("permissionDecision") == "deny":
                return True, "exit 0 with permissionDecision deny"
        return False, f"exit {proc.returncode}: the tool would run {first_err}".strip()
    if host == "cursor":
        try:
            body = json.loads(out) if out else {}
        except ValueError:
            return False, f"exit {proc.returncode} with non-JSON output {first_err}".strip()
        if isinstance(body, dict) and body.get("permission") == "deny" and ours:
            return True, "permission deny"
        return False, f"exit {proc.returncode} without PlanGate's permission deny"
    if proc.returncode != 0 and ours:
        return True, f"exit {proc.returncode} (stops git)"
    if proc.returncode != 0:
        return False, f"exit {proc.returncode} but not from PlanGate: {first_err}"
    return False, "exit 0 (git goes on)"


def _is_plangate(command: str) -> bool:
    from plangate.hooks.install import MARKER

    return MARKER in command or "plangate hook" in command or "plangate.hooks" in command


def _git_probes(event: str, script: str) -> list[Probe]:
    from plangate.git import scrubbed_env

    with tempfile.TemporaryDirectory(prefix="plangate-doctor-") as tmp:
        env = scrubbed_env() | {
            "GIT_AUTHOR_NAME": "doctor", "GIT_AUTHOR_EMAIL": "doctor@example.invalid",
            "GIT_COMMITTER_NAME": "doctor", "GIT_COMMITTER_EMAIL": "doctor@example.invalid",
        }

        def git(*args: str) -> subprocess.CompletedProcess[bytes]:
            return subprocess.run(["git", *args], cwd=tmp, env=env, capture_output=True,
                                  check=True, timeout=TIMEOUT_SECONDS)

        git("init", "-q")
        Path(tmp, "README.md").write_text("doctor\n")
        git("add", "README.md")
        git("-c", "commit.gpgsign=false", "commit", "-q", "--no-verify", "-m", "doctor base")
        base = git("rev-parse", "HEAD").stdout.decode().strip()
        canary = Path(tmp, CANARY_RELPATH)
        canary.parent.mkdir(parents=True, exist_ok=True)
        canary.write_text("canary\n")
        git("add", "-f", CANARY_RELPATH)
        stdin = b""
        if event == "pre-push":
            git("-c", "commit.gpgsign=false", "commit", "-q", "--no-verify", "-m", "canary")
            head = git("rev-parse", "HEAD").stdout.decode().strip()
            stdin = f"refs/heads/main {head} refs/heads/main {base}\n".encode()
        proc = subprocess.run(  # noqa: S602 -- the hook file is run as git would run it
            f"{_quote(script)}", shell=True, cwd=tmp, input=stdin, capture_output=True,
            timeout=TIMEOUT_SECONDS, env=_scrubbed_env(), check=False,
        )
        denied, detail = judge("git", proc)
        return [Probe("git", event, "guarded-write", denied, detail)]


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


REBUILD_HINT = ("run 'plangate hooks install --claude --local-python --hookd' again: it "
                "rebuilds the native client for the installed package")


def native_clients(installed: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """The native hook helper clients the local entries run
    (:func:`plangate.hooks.native_build.inspect` of each, once)."""
    from plangate.hooks.native_build import inspect, native_path_of

    paths: list[str] = []
    for listed, _event, command in installed:
        path = native_path_of(command) if listed == "claude-local" else None
        if path is not None and path not in paths:
            paths.append(path)
    return [inspect(path) for path in paths]


def native_findings(clients: list[dict[str, Any]]) -> list[Finding]:
    """A missing or writable native client fails doctor (every call blocks, or another
    could replace it); a stale one (package reinstalled or edited since it was built)
    only warns: every call then decides in-process, with the same answer, slower."""
    out: list[Finding] = []
    for client in clients:
        path = client["path"]
        if not client["exists"]:
            out.append(Finding("hookd", "HOOKD_NATIVE_MISSING",
                               f"the native client {path} the local hook entries run is missing: "
                               "every agent call is blocked", REBUILD_HINT, True))
        elif not client["owner_ok"]:
            out.append(Finding("hookd", "HOOKD_NATIVE_UNSAFE",
                               f"the native client {path} (mode {client['mode']}) is not a "
                               "regular file owned by you and writable only by you",
                               REBUILD_HINT, True))
        elif client["stale"] is None:
            out.append(Finding("hookd", "HOOKD_NATIVE_UNREADABLE",
                               f"the native client {path} holds no readable baked values",
                               REBUILD_HINT, False))
        elif client["stale"]:
            out.append(Finding("hookd", "HOOKD_NATIVE_STALE",
                               f"the native client {path} was built for another package digest "
                               f"({client['baked_digest']}): the helper refuses it, so every "
                               "call decides in-process (correct, slower)", REBUILD_HINT, False))
    return out


def run_doctor(root: Path, *, home: str | None = None,
               managed_settings: tuple[str, ...] | None = None) -> Result:
    """Probe every installed PlanGate hook command of the repository at ``root``, then
    check the settings that would make hooks do nothing (:func:`setting_findings`)."""
    from plangate.hooks.install import installed_commands

    real_root = os.path.realpath(root)
    allowed = allow_target(real_root)
    installed = installed_commands(root)
    local = any(h == "claude-local" and _is_plangate(c) for h, _e, c in installed)
    probes: list[Probe] = []
    skipped: list[dict[str, str]] = []
    for listed, event, command in installed:
        host = "claude" if listed == "claude-local" else listed
        if listed == "claude" and local and _is_plangate(command):
            # The committed entry leaves the decision to this developer's local entries.
            skipped.append({"host": host, "event": event,
                            "reason": "defers to .claude/settings.local.json"})
            continue
        if host == "git":
            content = Path(command).read_text("utf-8", "replace")
            if not _is_plangate(content):
                skipped.append({"host": host, "event": event, "reason": "not PlanGate's"})
                continue
            probes += _git_probes(event, command)
            continue
        if not _is_plangate(command):
            skipped.append({"host": host, "event": event, "reason": "not PlanGate's"})
            continue
        if host in ("claude", "codex") and event != "PreToolUse":
            continue  # effect events cannot deny a canary write; PreToolUse is what blocks
        if host == "cursor" and event not in ("preToolUse", "beforeShellExecution"):
            continue
        for canary, payload in _payloads(host, real_root):
            if host == "cursor" and (
                (event == "preToolUse" and canary == "shell-write")
                or (event == "beforeShellExecution" and canary == "guarded-write")
            ):
                continue
            try:
                proc = _run_shell(command, real_root, payload)
            except subprocess.TimeoutExpired:
                probes.append(Probe(host, event, canary, False, "timed out"))
                continue
            denied, detail = judge(host, proc)
            probes.append(Probe(host, event, canary, denied, detail))
        if host in ("claude", "codex", "cursor") and event in ("PreToolUse", "preToolUse"):
            try:
                proc = _run_shell(command, real_root, _allow_payload(host, real_root, allowed))
            except subprocess.TimeoutExpired:
                probes.append(Probe(host, event, ALLOW_CANARY, True, "timed out", "allow"))
                continue
            denied, detail = judge_allow(host, proc)
            probes.append(Probe(host, event, ALLOW_CANARY, denied, f"{allowed}: {detail}",
                                "allow"))
    from plangate.hooks.doctor_settings import setting_findings

    findings = setting_findings(root, home=home, managed_settings=managed_settings)
    natives = native_clients(installed)
    findings = [*findings, *native_findings(natives)]
    facts = {"probes": [p.to_json() for p in probes], "skipped": skipped,
             "native_clients": natives,
             "hosts": sorted({p.host for p in probes}),
             "findings": [f.to_json() for f in findings],
             "warnings": [f"{f.code}: {f.message}" for f in findings if not f.fails]}
    if not probes:
        return Result("FAIL", (Reason("DOCTOR_NOTHING_INSTALLED",
                                      "no PlanGate hook is installed in this repository",
                                      "run 'plangate hooks install --claude' (or --codex, "
                                      "--cursor, --git)"),), facts)
    reasons: list[Reason] = []
    for p in probes:
        if p.ok:
            continue
        if p.expect == "deny":
            reasons.append(Reason(
                "DOCTOR_CANARY_ALLOWED",
                f"{p.host} {p.event}: the {p.canary} canary was not denied ({p.detail})",
                "reinstall with 'plangate hooks install' and check that PlanGate is on PATH"))
        else:
            reasons.append(Reason(
                "DOCTOR_CANARY_DENIED",
                f"{p.host} {p.event}: a write the hooks must allow was denied ({p.detail})",
                "fix what the detail names (PlanGate on PATH, the ledger); otherwise every "
                "agent call is blocked"))
    reasons += [Reason(f.code, f.message, f.hint) for f in findings if f.fails]
    if reasons:
        return Result("FAIL", tuple(reasons), facts)
    return Result("PASS", (), facts)
