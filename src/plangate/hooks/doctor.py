"""``plangate doctor``: prove that the installed hooks really deny, and really allow.

A configuration file that mentions a hook proves nothing (a wrong path, a
missing interpreter, a host that rejects the file, exit 1 instead of 2...).
Doctor therefore runs every installed PlanGate hook command exactly as the
host would (the command line through ``/bin/sh``, in the repository root,
with a canary payload on stdin) and judges what comes back in the host's own
terms (each host's canaries and judges are its adapter's, found through the host
table :data:`plangate.hooks.hosts.table.HOSTS`). Canaries:

- ``guarded-write``: a write to ``.plangate/doctor-canary`` (guarded by
  construction, so it must be denied in every repository state);
- ``shell-write``: the shell command ``echo canary > .plangate/doctor-canary``;
- ``malformed``: a payload that is not JSON (a crash path must deny too);
- ``allowed-write``: a write the current state allows (:func:`allow_target`: a path
  inside the active task's scope, or with no active task a planning file of an
  unused task, each first judged by the decision itself over the facts a hook reads):
  it must be **allowed**, or the hooks would block every call (PlanGate missing on
  ``PATH``, a broken ledger). When the state allows no write, it is not run and
  doctor warns (``DOCTOR_NO_ALLOWED_WRITE``).

Besides the canaries, doctor checks what makes hooks silently do nothing
(:func:`setting_findings`): the ledger is present and verifies; committed hook
files name no machine path; Claude Code's managed or user settings do not turn
project hooks off (``disableAllHooks``, ``allowManagedHooksOnly``); Codex has
hooks on and a trust record for each PlanGate hook (an untrusted or modified
hook never runs); and whether each host fails closed when a hook times out
(Cursor ``failClosed``, Claude Code ``onFailure: "block"``); every host event is
installed. Last, the installed hosts' versions against the pinned ones
(:mod:`plangate.hooks.doctor_versions`). A *warning* does not fail doctor; a
*failure* does.

Git hooks are run in a throwaway repository with the canary file staged
(pre-commit) or as a push of a commit that adds it (pre-push).

Only commands carrying the ``plangate-managed`` marker (or running
``plangate hook``) are executed; other people's hooks are listed as skipped,
never run. The verdict is ``PASS`` only when at least one host is installed,
every deny canary of every command was denied, every allow canary allowed, and no
check fails.
"""

from __future__ import annotations

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
CANARY_NAME = "plangate-doctor-canary"
"""The file name a glob of the active task's scope is filled in with."""


def _scope_candidates(pattern: str) -> list[str]:
    """Concrete paths a scope pattern admits: itself when literal, else its glob filled in
    (``**`` dropped, ``*`` and ``?`` replaced); a character class or brace gives none."""
    if any(c in pattern for c in "[{"):
        return []
    segments = [seg for seg in pattern.strip("/").split("/") if seg and seg != "**"]
    if not segments:
        return []
    filled = [seg.replace("*", CANARY_NAME, 1).replace("*", "").replace("?", "x")
              for seg in segments]
    path = "/".join(filled)
    out = [path]
    if pattern.endswith(("/", "**")) or "*" not in segments[-1]:
        out.append(f"{path}/{CANARY_NAME}")  # a directory pattern: a file inside it
    return out


def _unused_planning_files(root: str) -> list[str]:
    """The plan of a task id no directory uses (what may be written with no active task)."""
    working = Path(root, "docs", "working")
    used = {p.name for p in working.iterdir()} if working.is_dir() else set()
    for number in range(9999, 0, -1):
        task = f"TASK-{number:04d}"
        if task not in used and is_task_id(task):
            return [f"docs/working/{task}/plan.md"]
    return []


def allow_target(root: str) -> tuple[str, str]:
    """``(path, why)``: a path the hooks must allow now, or ``("", why none is)``.

    Candidates: with an active task (found as a hook finds it, without
    ``PLANGATE_TASK``: the open exec run, else the task session), paths inside its
    scope; with none, a planning file of an unused task. Each is judged by the
    decision itself (:func:`plangate.hooks.decision.decide`) over the facts a hook
    gathers now; the first it allows is the canary. When it allows none (a stale
    record, a scope of only character classes), no allowed-write canary can be run.
    """
    from plangate.errors import PlanGateError
    from plangate.hooks.decision import ActionKind, decide
    from plangate.hooks.service import HookEvent, HookRequest, build_action, gather_facts
    from plangate.ledger import LedgerError, open_ledger

    env = _scrubbed_env()
    try:
        with open_ledger(Path(root), env, create=False) as ledger:
            facts = gather_facts(root, env, ledger)
    except (LedgerError, PlanGateError, OSError) as exc:
        return "", f"the facts a hook reads cannot be read: {exc}"
    if facts.task is not None:
        candidates = [c for pattern in facts.task.allowed_paths or ()
                      for c in _scope_candidates(pattern)]
        owner = f"the scope of {facts.task.task_id}"
    else:
        candidates = _unused_planning_files(root)
        owner = "the planning files of an unused task"
    why = f"no path in {owner} may be written now"
    for candidate in candidates:
        request = HookRequest("doctor", HookEvent.PRE, root, "doctor", file_targets=(candidate,))
        action = build_action(request, root, env)
        if action.kind is ActionKind.READ:
            continue
        result = decide(facts, action)
        if result.accepted:
            return candidate, ""
        why = f"no path in {owner} may be written now ({', '.join(result.codes)})"
    return "", why


def _scrubbed_env() -> dict[str, str]:
    # The canary must be judged as in a fresh agent session: no inherited task. Its
    # decision is recorded as doctor's probe, so no report counts it as a refusal.
    from plangate.hooks.decision import DOCTOR_PROBE_ENV

    env = {k: v for k, v in os.environ.items() if k != "PLANGATE_TASK"}
    env[DOCTOR_PROBE_ENV] = "1"
    return env


def _run_shell(command: str, cwd: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    # The host runs the configured line through a shell; doctor must do exactly the same.
    return subprocess.run(  # noqa: S602 -- reproducing the host's own shell invocation
        command, shell=True, cwd=cwd, input=stdin, capture_output=True,
        timeout=TIMEOUT_SECONDS, env=_scrubbed_env(), check=False,
    )


def judge(host: str, proc: subprocess.CompletedProcess[bytes]) -> tuple[bool, str]:
    """Did PlanGate deny, in ``host``'s own terms? ``(denied, detail)``.

    A block that does not carry PlanGate's reason (the interpreter is missing,
    the package cannot be imported) is not a pass: it locks every tool call.
    """
    from plangate.hooks.hosts.table import HOSTS
    from plangate.hooks.install import NOT_FOUND_CODE

    out = proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace")
    if NOT_FOUND_CODE in out or NOT_FOUND_CODE in err:
        return False, f"PlanGate is not on PATH for this host ({NOT_FOUND_CODE}): every call blocks"
    return HOSTS[host].load().judge_deny(proc)


def _is_plangate(command: str) -> bool:
    from plangate.hooks.install import MARKER

    return MARKER in command or "plangate hook" in command or "plangate.hooks" in command


def _is_framework(content: str) -> bool:
    from plangate.hooks.install import PRE_COMMIT_FRAMEWORK_MARKS

    return any(mark in content for mark in PRE_COMMIT_FRAMEWORK_MARKS)


def _scratch_repository_probes(
    host: str, event: str, command: str, *, framework: bool = False
) -> list[Probe]:
    """Run ``command`` (a shell line) as git runs the ``event`` hook in a throwaway
    repository with the canary staged or pushed; ``framework``: as the pre-commit framework
    runs a hook's entry (no stdin; the pushed range in ``PRE_COMMIT_FROM_REF``/``_TO_REF``)."""
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
        hook_env = _scrubbed_env() | ({"PRE_COMMIT": "1"} if framework else {})
        if event == "pre-push":
            git("-c", "commit.gpgsign=false", "commit", "-q", "--no-verify", "-m", "canary")
            head = git("rev-parse", "HEAD").stdout.decode().strip()
            if framework:
                hook_env |= {"PRE_COMMIT_FROM_REF": base, "PRE_COMMIT_TO_REF": head}
            else:
                stdin = f"refs/heads/main {head} refs/heads/main {base}\n".encode()
        proc = subprocess.run(  # noqa: S602 -- the hook is run as git (or the framework) runs it
            command, shell=True, cwd=tmp, input=stdin, capture_output=True,
            timeout=TIMEOUT_SECONDS, env=hook_env, check=False,
        )
        denied, detail = judge(host, proc)
        label = f"{event} (pre-commit framework)" if framework else event
        return [Probe(host, label, "guarded-write", denied, detail)]


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


REBUILD_HINT = ("run 'plangate hooks install --claude --local-python --hookd' again: it "
                "rebuilds the native client for the installed package")


def native_clients(installed: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """The native hook helper clients the local entries run
    (:func:`plangate.hooks.native_build.inspect` of each, once)."""
    from plangate.hooks.install import LOCAL
    from plangate.hooks.native_build import inspect, native_path_of

    paths: list[str] = []
    for listed, _event, command in installed:
        path = native_path_of(command) if listed.endswith(LOCAL) else None
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
               managed_settings: tuple[str, ...] | None = None,
               env: dict[str, str] | None = None) -> Result:
    """Probe every installed PlanGate hook command of the repository at ``root``, then
    check the settings that would make hooks do nothing (:func:`setting_findings`) and
    the installed hosts' versions against the pinned ones (:func:`version_findings`)."""
    from plangate.hooks.hosts.table import HOSTS
    from plangate.hooks.install import LOCAL, installed_commands
    from plangate.hooks.precommit import framework_findings, read_config

    real_root = os.path.realpath(root)
    framework = read_config(root)
    allowed, no_allowed = allow_target(real_root)
    installed = installed_commands(root)
    local = {h.removesuffix(LOCAL) for h, _e, c in installed
             if h.endswith(LOCAL) and _is_plangate(c)}
    target = f"{real_root.rstrip('/')}/{CANARY_RELPATH}"
    shell = f"echo canary > {CANARY_RELPATH}"
    probes: list[Probe] = []
    skipped: list[dict[str, str]] = []
    for listed, event, command in installed:
        name = listed.removesuffix(LOCAL)
        host = HOSTS[name]
        if listed == name and name in local and _is_plangate(command):
            # The committed entry leaves the decision to this developer's local entries.
            skipped.append({"host": name, "event": event,
                            "reason": f"defers to {host.local_config_file}"})
            continue
        if host.scratch_repository_probe:
            content = Path(command).read_text("utf-8", "replace")
            through = framework.stages.get(event) if _is_framework(content) else None
            if through is not None:
                # The framework runs PlanGate's entry from its configuration: probe that.
                probes += _scratch_repository_probes(name, event, through, framework=True)
                continue
            if not _is_plangate(content):
                skipped.append({"host": name, "event": event, "reason": "not PlanGate's"})
                continue
            probes += _scratch_repository_probes(name, event, _quote(command))
            continue
        if not _is_plangate(command):
            skipped.append({"host": name, "event": event, "reason": "not PlanGate's"})
            continue
        if event not in host.probe_events:
            continue  # effect events cannot deny a canary write; the blocking ones do
        adapter = host.load_agent()
        for canary_event, canary, payload in adapter.canaries(real_root, target, shell):
            if canary_event != event:
                continue
            try:
                proc = _run_shell(command, real_root, payload)
            except subprocess.TimeoutExpired:
                probes.append(Probe(name, event, canary, False, "timed out"))
                continue
            denied, detail = judge(name, proc)
            probes.append(Probe(name, event, canary, denied, detail))
        allow_event, allow_payload = adapter.allow_canary(
            real_root, f"{real_root.rstrip('/')}/{allowed}")
        if not allowed or allow_event != event:
            continue
        try:
            proc = _run_shell(command, real_root, allow_payload)
        except subprocess.TimeoutExpired:
            probes.append(Probe(name, event, ALLOW_CANARY, True, "timed out", "allow"))
            continue
        denied, detail = adapter.judge_allow(proc)
        probes.append(Probe(name, event, ALLOW_CANARY, denied, f"{allowed}: {detail}", "allow"))
    from plangate.hooks.doctor_settings import setting_findings

    findings = setting_findings(root, home=home, managed_settings=managed_settings, env=env)
    natives = native_clients(installed)
    findings = [*findings, *native_findings(natives),
                *framework_findings(root, framework, os.environ if env is None else env)]
    if not allowed and probes:
        findings.append(Finding(
            "canaries", "DOCTOR_NO_ALLOWED_WRITE",
            f"no allowed-write canary was run: {no_allowed}; the deny canaries still ran",
            "'plangate status' shows the active task and why its writes are denied", False))
    from plangate.hooks.doctor_versions import version_findings

    findings += version_findings(env)
    facts = {"probes": [p.to_json() for p in probes], "skipped": skipped,
             "native_clients": natives, "allowed_canary": allowed,
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
