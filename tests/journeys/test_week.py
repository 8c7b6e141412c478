"""A team's week with PlanGate, on real tools, with nothing to work around.

Three people (alice, who switches PlanGate on; bob, her teammate; carol, who approves), each with a real
ssh key, a home and a clone of one bare remote. Day one: alice adopts PlanGate at a
terminal in an existing Python project (a team hook in ``.claude/settings.json``, a
pre-commit configuration, a CI workflow), the adoption pull request goes to a human in CI,
bob and carol clone and start; TASK-0001 is planned by alice, reviewed by alice and bob
(signed), approved by carol (signed), done by Claude Code in alice's clone, pushed through
the git hooks and judged by the documented workflow run as GitHub runs it; merge readiness
is read from the pull request event; the report tells the same story as ``status``. Day
two: TASK-0002 the other way round, done by Codex in bob's clone, and a README fix with no
task. Nobody types ``--no-verify`` or a recovery command; the only manual steps are the
ones a program asks a person for at a terminal.

The week is one test that runs :data:`WEEK`, an ordered list of step functions. A step
that fails today because of a known gap in the product is listed in
:data:`SEAMS_NOT_YET_FIXED` with the text of its failure: the step still runs with its real
assertions, the week then goes on the way a team goes on today (the step's ``bypass_``
function: what people type to get past it), and the test fails when a listed step passes
(the list must shrink) or fails in another way. An empty list is the goal.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from support.journey import Session
from support.model_server import call, say
from support.team import (
    Conversation,
    GitHubRun,
    Person,
    PullRequest,
    Remote,
    WorkflowRun,
    commands_a_screen_asks_for,
    documented_workflow,
    files_a_screen_asks_for,
)


@dataclass(frozen=True)
class Seam:
    """A step that fails on today's main, and the text its failure shows."""

    step: str
    observed: str


SEAMS_NOT_YET_FIXED: tuple[Seam, ...] = ()
"""Steps of the week known to fail today, each with a text its failure contains. When a
fix lands, its step passes, the week fails with "remove it from SEAMS_NOT_YET_FIXED", and
the entry goes."""


# -- the team's project -------------------------------------------------------------------

TEAM_HOOK = 'cat > /dev/null; echo "$CLAUDE_PROJECT_DIR" >> "$HOME/team-hook.log"'
"""The team's own Claude Code hook (after each edit), which setup must keep."""

PROJECT_FILES = {
    "README.md": "# project\n\nGreets people.\n",
    "pyproject.toml": '[project]\nname = "project"\nversion = "0.1.0"\n',
    "src/app.py": 'def greet():\n    return "hi"\n',
    ".pre-commit-config.yaml": (
        "repos:\n  - repo: local\n    hooks:\n      - id: ruff\n        name: ruff\n"
        "        entry: python -m ruff check\n        language: system\n        types: [python]\n"
    ),
    ".claude/settings.json": json.dumps(
        {
            "hooks": {
                "PostToolUse": [
                    {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": TEAM_HOOK}]}
                ]
            }
        },
        indent=2,
    )
    + "\n",
    ".github/workflows/tests.yml": (
        "on: [push, pull_request]\njobs:\n  tests:\n    runs-on: ubuntu-latest\n"
        "    steps:\n      - uses: actions/checkout@v4\n      - run: python -m pytest -q\n"
    ),
}

ANSWERS = (
    (r"Type SETUP", "SETUP"),
    (r"(?i)\[y/N\]|\[Y/n\]|\(y/n\)|yes/no", "y"),
)
"""How a person answers setup's questions: types the confirmation word and says yes to
what it suggests. Any other question stops the program (support.team.converse)."""

PLAN = """# {task}: plan

## Goal

{goal}

## Files / Components to Touch

- `{code}`: the change.
- `{test}`: the tests that pin it.

## Approach

1. Write the function and its test.

## Risks

- None beyond the two files.

## Testing Strategy

One unit test.

Verification Automation: `python3 -m pytest -q`
"""

NOW = "2026-12-07T10:00:00Z"


@dataclass
class TaskSpec:
    """One task of the week: who plans it, who reviews, the files it may touch."""

    task: str
    branch: str
    goal: str
    code: str
    test: str


TASK_ONE = TaskSpec(
    "TASK-0001", "task-1-greeting", "Greet by name.", "src/app.py", "tests/test_app.py"
)
TASK_TWO = TaskSpec(
    "TASK-0002", "task-2-farewell", "Say goodbye.", "src/farewell.py", "tests/test_farewell.py"
)


@dataclass
class Week:
    """Everything the week's steps share."""

    root: Path
    remote: Remote
    alice: Person
    bob: Person
    carol: Person
    github: GitHubRun
    prs: dict[str, PullRequest] = field(default_factory=dict)
    runs: dict[str, WorkflowRun] = field(default_factory=dict)
    sessions: dict[str, Session] = field(default_factory=dict)
    commits: dict[str, str] = field(default_factory=dict)


def _observes(step: Callable[[Week], None]) -> Callable[[Week], None]:
    """Mark a step that only looks (CI's verdict, the report): when it fails the week goes on."""
    step.observes = True  # type: ignore[attr-defined]
    return step


# -- what people do, shared by the steps -------------------------------------------------


def _write(person: Person, files: dict[str, str]) -> None:
    """A person edits files in their editor."""
    for rel, text in files.items():
        path = person.clone / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _setup(person: Person, *args: str) -> str:
    """``plangate setup ARGS`` at the person's terminal, then what its screen asks the person
    to run (the pre-commit framework's install); the screen when it succeeds."""
    talk = person.at_terminal("setup", *args, answers=ANSWERS)
    assert talk.returncode == 0, talk.describe()
    _do_what_setup_asks(person, talk)
    return talk.screen


def _pull_branch(person: Person, branch: str) -> None:
    person.sh(
        f"git fetch -q origin && git switch -q {branch} 2>/dev/null || git switch -q -c {branch} --track origin/{branch}; git pull -q --ff-only"
    )


def _commit_and_push(
    person: Person, paths: str, message: str, branch: str, *, no_verify: bool = False
) -> str:
    """``git add PATHS && git commit && git push`` through the git hooks; what they printed."""
    skip = " --no-verify" if no_verify else ""
    done = person.sh(
        f"git add {paths} && git commit -q{skip} -m {shlex.quote(message)} && git push -q{skip} -u origin {branch}"
    )
    return done.stdout + done.stderr


def _plan(person: Person, spec: TaskSpec, *, no_verify: bool = False) -> None:
    """The planner writes the Plan Package, signs the self review (C-1) and pushes it."""
    person.sh(f"git switch -q main && git pull -q --ff-only && git switch -q -c {spec.branch}")
    person.plangate("init", spec.task)
    base = f"docs/working/{spec.task}"
    _write(
        person,
        {
            f"{base}/plan.md": PLAN.format(
                task=spec.task, goal=spec.goal, code=spec.code, test=spec.test
            ),
            f"{base}/pbi-input.md": f"# {spec.task}\n\n## Request\n\n{spec.goal}\n\n## Acceptance criteria\n\n- AC-1: a test shows it.\n",
            f"{base}/todo.md": "- [ ] function\n- [ ] test\n",
            f"{base}/test-cases.md": "| AC | test |\n|---|---|\n| AC-1 | unit |\n",
            f"{base}/review-self.md": f"# {spec.task}: self review\n\nThe plan names both files and the test.\n",
            f"{base}/review-external.md": f"# {spec.task}: external review\n\n",
        },
    )
    person.plangate("review", "mark", spec.task, "--c1", "PASS", "--sign", str(person.key.path))
    _commit_and_push(person, base, f"Plan {spec.task}", spec.branch, no_verify=no_verify)


def _review(person: Person, spec: TaskSpec, *, no_verify: bool = False) -> None:
    """The second reviewer reads the plan, signs the external review (C-2) and pushes it."""
    _pull_branch(person, spec.branch)
    base = f"docs/working/{spec.task}"
    _write(
        person,
        {
            f"{base}/review-external.md": f"# {spec.task}: external review\n\nNo findings: scope is two files.\n"
        },
    )
    person.plangate("review", "mark", spec.task, "--c2", "approve", "--sign", str(person.key.path))
    _commit_and_push(person, base, f"Review {spec.task}", spec.branch, no_verify=no_verify)


def _approve(person: Person, spec: TaskSpec, *, no_verify: bool = False) -> None:
    """The approver issues the record for the reviewed commit, signs it and pushes it."""
    _pull_branch(person, spec.branch)
    base = f"docs/working/{spec.task}"
    refs = {}
    for key, name in (("model_a", "review-self.md"), ("model_b", "review-external.md")):
        digest = hashlib.sha256((person.clone / base / name).read_bytes()).hexdigest()
        refs[key] = {"verdict": "approve", "evidence_ref": f"{base}/{name}#sha256:{digest}"}
    reviewers = person.machine.home / f"reviewers-{spec.task}.json"
    reviewers.write_text(json.dumps(refs))
    person.plangate(
        "c3",
        "issue",
        spec.task,
        "--target-sha",
        person.head(),
        "--reviewers",
        str(reviewers),
        "--decision",
        "AUTO_APPROVED",
        "--policy-ref",
        "plangate-arbiter@v1",
        "--issued-by",
        person.email,
        "--sign",
        str(person.key.path),
    )
    _commit_and_push(
        person, f"{base}/approvals", f"Approve {spec.task}", spec.branch, no_verify=no_verify
    )


def _open_and_check(week: Week, key: str, title: str, branch: str, author: Person) -> WorkflowRun:
    pr = week.remote.open_pull_request(title, branch, author.name)
    week.prs[key] = pr
    run = week.github.run(pr)
    week.runs[key] = run
    return run


def _merge(week: Week, key: str) -> None:
    """A person presses the merge button; everyone pulls main."""
    week.remote.merge(week.prs[key])
    for person in (week.alice, week.bob, week.carol):
        if person.clone.exists():
            person.sh("git switch -q main && git pull -q --ff-only")


def _assess(week: Week, key: str, task: str) -> tuple[int, dict[str, object], str]:
    """``plangate delivery assess TASK`` in the pull request's CI checkout, with the event."""
    run = week.runs[key]
    env = week.github.env | {"GITHUB_EVENT_PATH": str(run.event_path), "GITHUB_ACTIONS": "true"}
    proc = subprocess.run(
        ["plangate", "delivery", "assess", task, "--now", NOW, "--json"],
        cwd=run.workspace,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    try:
        result = json.loads(proc.stdout)
    except ValueError:
        result = {}
    return proc.returncode, result, proc.stdout + proc.stderr


def _accepted_run(run: WorkflowRun) -> None:
    assert run.output("verdict") == "ACCEPTED", run.describe()
    assert not run.red, run.describe()
    assert run.human_gates == [], "an accepted pull request waits for a human\n" + run.describe()


# -- day one -------------------------------------------------------------------------------


def step_the_project_exists(week: Week) -> None:
    """alice's existing project, on the remote's main, before PlanGate."""
    alice = week.alice
    alice.clone.mkdir(parents=True)
    _write(alice, PROJECT_FILES)
    # The team's pre-commit framework runs ruff on every commit (installed long ago).
    alice.sh(
        "git init -q -b main && git config commit.gpgsign false && pre-commit install >/dev/null && "
        "git add -A && "
        f"git commit -q -m 'The project' && git remote add origin {week.remote.path} && "
        "git push -q -u origin main"
    )


def _adoption_setup(week: Week) -> Conversation:
    alice = week.alice
    return alice.at_terminal(
        "setup",
        "--claude",
        "--codex",
        "--git",
        "--reviewer",
        alice.signer(),
        "--reviewer",
        week.bob.signer(),
        "--approver",
        week.carol.signer(),
        answers=ANSWERS,
    )


def _do_what_setup_asks(person: Person, talk: Conversation) -> None:
    """The person runs the commands and writes the files setup's screen asks for."""
    for command in commands_a_screen_asks_for(talk.screen):
        person.sh(command)
    _write(person, files_a_screen_asks_for(talk.screen))


def step_alice_adopts_at_a_terminal(week: Week) -> None:
    """``plangate setup`` with the team's keys, answered at a terminal, beside the team's
    pre-commit framework: it succeeds or writes nothing, and keeps the team's own hook."""
    alice = week.alice
    alice.trust_project_in_codex()
    talk = _adoption_setup(week)
    if talk.returncode != 0:
        left = alice.sh("git status --porcelain --untracked-files=all").stdout
        assert left == "", f"setup refused and still wrote:\n{left}\n{talk.screen[-1200:]}"
    assert talk.returncode == 0, talk.describe()
    _do_what_setup_asks(alice, talk)
    settings = json.loads((alice.clone / ".claude/settings.json").read_text())
    commands = [
        h.get("command") for e in settings["hooks"].get("PostToolUse", []) for h in e["hooks"]
    ]
    assert TEAM_HOOK in commands, settings


def bypass_alice_adopts_at_a_terminal(week: Week) -> str:
    week.alice.sh("pre-commit uninstall")
    talk = _adoption_setup(week)
    assert talk.returncode == 0, talk.describe()
    _do_what_setup_asks(week.alice, talk)
    return "pre-commit uninstall (the team's ruff hook is gone), setup again"


def step_the_trust_root_requires_signatures(week: Week) -> None:
    """Setup given reviewers and an approver leaves signatures required."""
    trust = (week.alice.clone / ".plangate/trust.toml").read_text()
    assert re.search(r"^require_signatures\s*=\s*true", trust, re.M), trust


def bypass_the_trust_root_requires_signatures(week: Week) -> str:
    talk = week.alice.at_terminal("trust", "require", "on", answers=ANSWERS)
    assert talk.returncode == 0, talk.describe()
    return "plangate trust require on"


def step_alice_opens_the_adoption_pull_request(week: Week) -> None:
    """The adoption and the documented workflow, committed and pushed through the git hooks."""
    alice = week.alice
    _page, workflow = documented_workflow()
    _write(alice, {".github/workflows/plangate.yml": yaml.safe_dump(workflow, sort_keys=False)})
    alice.sh("git switch -q -c adopt-plangate")
    _commit_and_push(alice, "-A", "Adopt PlanGate", "adopt-plangate")


def bypass_alice_opens_the_adoption_pull_request(week: Week) -> str:
    _commit_and_push(week.alice, "-A", "Adopt PlanGate", "adopt-plangate", no_verify=True)
    return "git commit --no-verify; git push --no-verify"


@_observes
def step_ci_hands_the_adoption_to_a_human(week: Week) -> None:
    """HUMAN_REQUIRED, and the check is not a red failure: a human decides."""
    run = _open_and_check(week, "adoption", "Adopt PlanGate", "adopt-plangate", week.alice)
    assert run.output("verdict") == "HUMAN_REQUIRED", run.describe()
    assert "CI_ADOPTS_PLANGATE" in run.log, run.describe()
    assert not run.red, "the check is red for HUMAN_REQUIRED\n" + run.describe()
    codeowners = (run.workspace / ".github/CODEOWNERS").exists()
    assert run.human_gates or codeowners, "no human gate holds the merge\n" + run.describe()


@_observes
def step_ci_uploads_the_sarif(week: Week) -> None:
    """The documented workflow uploads the SARIF file the check writes."""
    run = week.runs["adoption"]
    assert run.uploaded_sarif, "the workflow uploads no SARIF file\n" + run.describe()


@_observes
def step_ci_annotates_each_finding_once(week: Week) -> None:
    """One annotation per finding, not the whole message once per path."""
    run = week.runs["adoption"]
    annotations = run.annotations()
    messages = [a.split("::", 2)[-1] for a in annotations]
    assert annotations, run.describe()
    assert len(messages) == len(set(messages)), (
        "one message annotated more than once:\n" + "\n".join(annotations)
    )


def step_the_adoption_is_merged(week: Week) -> None:
    _merge(week, "adoption")


def step_the_teammates_start(week: Week) -> None:
    """bob and carol clone and run setup: no ledger recovery, no adoption steps printed."""
    bob, carol = week.bob, week.carol
    for person in (bob, carol):
        person.clone_from(week.remote)
    bob.trust_project_in_codex()
    screen = _setup(bob, "--claude", "--codex", "--git")
    assert "LEDGER_MISSING" not in screen, screen
    assert "Adopt PlanGate" not in screen and "adopt-plangate" not in screen, screen
    _setup(carol, "--git")
    doctor = bob.plangate("doctor", ok=False)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr


def bypass_the_teammates_start(week: Week) -> str:
    printed = []
    for person, hosts in ((week.bob, ("--claude", "--codex", "--git")), (week.carol, ("--git",))):
        talk = person.at_terminal("ledger", "init", "--force", answers=ANSWERS)
        assert talk.returncode == 0, talk.describe()
        if "adopt-plangate" in _setup(person, *hosts):
            printed.append(person.name)
    doctor = week.bob.plangate("doctor", ok=False)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    also = f"; setup then printed the adoption steps to {', '.join(printed)}" if printed else ""
    return f"plangate ledger init --force (bob, carol), setup again{also}"


@_observes
def step_local_settings_do_not_block_a_read(week: Week) -> None:
    """With no task, Claude Code's own local settings never make a Read's hook fail."""
    bob = week.bob
    _write(
        bob,
        {
            ".claude/settings.local.json": json.dumps({"permissions": {"allow": ["Bash(ls:*)"]}})
            + "\n"
        },
    )
    session = bob.machine.claude([call("Read", file_path=str(bob.clone / "README.md")), say("ok")])
    told = json.dumps(session.turns[-1].body["messages"]) if session.turns else ""
    assert session.returncode == 0, session.describe()
    assert not session.tool_results()[0].is_error, session.describe()
    feedback = [m.start() for m in re.finditer("PlanGate denied", told)]
    assert feedback == [], "\n".join(told[i - 200 : i + 600] for i in feedback)


def step_alice_plans_task_one(week: Week) -> None:
    _plan(week.alice, TASK_ONE)


def bypass_alice_plans_task_one(week: Week) -> str:
    _commit_and_push(
        week.alice,
        f"docs/working/{TASK_ONE.task}",
        f"Plan {TASK_ONE.task}",
        TASK_ONE.branch,
        no_verify=True,
    )
    return "git commit --no-verify; git push --no-verify"


def step_bob_reviews_task_one(week: Week) -> None:
    _review(week.bob, TASK_ONE)


def bypass_bob_reviews_task_one(week: Week) -> str:
    _commit_and_push(
        week.bob,
        f"docs/working/{TASK_ONE.task}",
        f"Review {TASK_ONE.task}",
        TASK_ONE.branch,
        no_verify=True,
    )
    return "git commit --no-verify; git push --no-verify"


def step_carol_approves_task_one(week: Week) -> None:
    _approve(week.carol, TASK_ONE)


def bypass_carol_approves_task_one(week: Week) -> str:
    _commit_and_push(
        week.carol,
        f"docs/working/{TASK_ONE.task}/approvals",
        f"Approve {TASK_ONE.task}",
        TASK_ONE.branch,
        no_verify=True,
    )
    return "git commit --no-verify; git push --no-verify"


def step_claude_code_does_task_one(week: Week) -> None:
    """alice starts the task; Claude Code edits and writes in scope; nothing is denied."""
    alice = week.alice
    _pull_branch(alice, TASK_ONE.branch)
    alice.plangate("task", "start", TASK_ONE.task)
    app, test = alice.clone / TASK_ONE.code, alice.clone / TASK_ONE.test
    session = alice.machine.claude(
        [
            call("Read", file_path=str(app)),
            call(
                "Edit",
                file_path=str(app),
                old_string='def greet():\n    return "hi"',
                new_string='def greet(name="you"):\n    return f"hi {name}"',
            ),
            call(
                "Write",
                file_path=str(test),
                content='from app import greet\n\n\ndef test_greet():\n    assert greet("bob") == "hi bob"\n',
            ),
            say("done"),
        ]
    )
    week.sessions["claude"] = session
    assert session.returncode == 0, session.describe()
    assert [r.is_error for r in session.tool_results()] == [False, False, False], session.describe()
    assert "hi {name}" in app.read_text() and test.exists(), session.describe()
    assert session.stop_feedback() == [], session.describe()
    assert (alice.machine.home / "team-hook.log").exists(), "the team's own hook did not run"


def step_alice_pushes_task_one(week: Week) -> None:
    alice = week.alice
    week.commits["task-1-work"] = _commit_and_push(
        alice, f"{TASK_ONE.code} {TASK_ONE.test}", "Greet by name", TASK_ONE.branch
    )
    alice.plangate("task", "stop")


def bypass_alice_pushes_task_one(week: Week) -> str:
    week.commits["task-1-work"] = _commit_and_push(
        week.alice,
        f"{TASK_ONE.code} {TASK_ONE.test}",
        "Greet by name",
        TASK_ONE.branch,
        no_verify=True,
    )
    week.alice.plangate("task", "stop", ok=False)
    return "git commit --no-verify; git push --no-verify"


@_observes
def step_the_teams_pre_commit_hook_still_runs(week: Week) -> None:
    """alice's commit of the task's code ran the team's ruff hook beside PlanGate's check."""
    printed = week.commits["task-1-work"]
    assert re.search(r"^ruff\.+", printed, re.M), f"the team's ruff hook did not run:\n{printed}"


@_observes
def step_ci_accepts_task_one(week: Week) -> None:
    """The signed, approved task's pull request: ACCEPTED, green, signers named."""
    run = _open_and_check(week, "task-1", "TASK-0001: greet by name", TASK_ONE.branch, week.alice)
    _accepted_run(run)
    assert "carol@example.com" in run.summary, run.describe()


@_observes
def step_task_one_is_merge_ready_from_the_event(week: Week) -> None:
    """Merge readiness read from the pull request event and git, no snapshot written."""
    code, result, text = _assess(week, "task-1", TASK_ONE.task)
    assert code in (0, 4), text
    assert result.get("state") != "EXEC_RETURN" and "DELIVERY_PLAN_DEVIATION" not in text, text


def bypass_task_one_is_merge_ready_from_the_event(week: Week) -> str:
    return _assess_with_a_written_snapshot(week, "task-1", TASK_ONE.task, week.alice)


def _assess_with_a_written_snapshot(week: Week, key: str, task: str, person: Person) -> str:
    """What a person does today: write the pull request snapshot by hand and assess it in
    their own clone (at the pull request's head)."""
    run, pr = week.runs[key], week.prs[key]
    assert person.head() == pr.head_sha
    changed = subprocess.run(
        ["git", "diff", "--name-only", f"{pr.base_sha}...{pr.head_sha}"],
        cwd=run.workspace,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    snapshot = {
        "task_id": task,
        "pr_number": pr.number,
        "head_sha": pr.head_sha,
        "changed_files": changed,
        "mergeable": "MERGEABLE",
        "checks": [{"name": "plangate", "sha": pr.head_sha, "conclusion": "success"}],
        "review": {"state": "approved", "sha": pr.head_sha},
        "findings": [],
        "escalation_flags": [],
        "dod_evaluated": True,
    }
    path = person.machine.home / f"snapshot-{key}.json"
    path.write_text(json.dumps(snapshot))
    proc = subprocess.run(
        ["plangate", "delivery", "assess", task, "--snapshot", str(path), "--now", NOW, "--json"],
        cwd=person.clone,
        env=person.machine.env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    try:
        result = json.loads(proc.stdout)
    except ValueError:
        result = {}
    reasons = [f"{r.get('code')}: {str(r.get('message'))[:160]}" for r in result.get("reasons", [])]
    return f"hand-written snapshot: exit {proc.returncode}; {'; '.join(reasons)}"


def step_task_one_is_merged(week: Week) -> None:
    _merge(week, "task-1")


def _report(person: Person) -> str:
    """``plangate report --format markdown`` as text (Markdown escapes undone)."""
    return re.sub(r"\\(.)", r"\1", person.plangate("report", "--format", "markdown").stdout)


def _denials(report: str) -> int:
    match = re.search(r"^### Denials: (\d+)", report, re.M)
    return int(match.group(1)) if match else 0


def _report_agrees_with_status(person: Person, tasks: tuple[str, ...]) -> None:
    """For each task, the report's "state now" says what ``status`` (exec's verdict) says."""
    status = json.loads(person.plangate("status", "--json", *tasks, ok=False).stdout)
    verdicts = {t["task"]: t["verdict"] for t in status["tasks"]}
    report = _report(person)
    for task in tasks:
        row = next((line for line in report.splitlines() if line.startswith(f"| {task} |")), None)
        assert row is not None, f"{task} is not one row of the report:\n{report}"
        holds = verdicts.get(task) == "ACCEPTED"
        assert ("does not hold" in row) != holds, (
            f"status: {json.dumps(status)[:2000]}\nreport row: {row}"
        )


@_observes
def step_the_report_agrees_with_status(week: Week) -> None:
    """The report's word on TASK-0001 is status's (and exec's), on one line."""
    _report_agrees_with_status(week.alice, (TASK_ONE.task,))


@_observes
def step_doctor_probes_are_not_refusals(week: Week) -> None:
    """carol runs doctor: its canary probes are not counted as refusals in her report."""
    carol = week.carol
    before = _denials(_report(carol))
    carol.plangate("doctor", ok=False)
    after = _report(carol)
    assert _denials(after) == before, f"doctor added {_denials(after) - before} denials:\n{after}"


# -- day two ---------------------------------------------------------------------------------


def step_bob_plans_task_two(week: Week) -> None:
    _plan(week.bob, TASK_TWO)


def bypass_bob_plans_task_two(week: Week) -> str:
    _commit_and_push(
        week.bob,
        f"docs/working/{TASK_TWO.task}",
        f"Plan {TASK_TWO.task}",
        TASK_TWO.branch,
        no_verify=True,
    )
    return "git commit --no-verify; git push --no-verify"


def step_alice_reviews_task_two(week: Week) -> None:
    _review(week.alice, TASK_TWO)


def bypass_alice_reviews_task_two(week: Week) -> str:
    _commit_and_push(
        week.alice,
        f"docs/working/{TASK_TWO.task}",
        f"Review {TASK_TWO.task}",
        TASK_TWO.branch,
        no_verify=True,
    )
    return "git commit --no-verify; git push --no-verify"


def step_carol_approves_task_two(week: Week) -> None:
    _approve(week.carol, TASK_TWO)


def bypass_carol_approves_task_two(week: Week) -> str:
    _commit_and_push(
        week.carol,
        f"docs/working/{TASK_TWO.task}/approvals",
        f"Approve {TASK_TWO.task}",
        TASK_TWO.branch,
        no_verify=True,
    )
    return "git commit --no-verify; git push --no-verify"


def step_codex_does_task_two(week: Week) -> None:
    """bob starts the task; Codex writes both files through its shell; nothing is denied."""
    bob = week.bob
    _pull_branch(bob, TASK_TWO.branch)
    bob.plangate("task", "start", TASK_TWO.task)
    code = 'def farewell():\\n    return \\"bye\\"\\n'
    test = 'from farewell import farewell\\n\\n\\ndef test_farewell():\\n    assert farewell() == \\"bye\\"\\n'
    session = bob.machine.codex(
        [
            call("exec_command", cmd=f'printf "{code}" > {TASK_TWO.code}'),
            call("exec_command", cmd=f'mkdir -p tests && printf "{test}" > {TASK_TWO.test}'),
            say("done"),
        ]
    )
    week.sessions["codex"] = session
    assert session.returncode == 0, session.describe()
    assert (bob.clone / TASK_TWO.code).read_text() == 'def farewell():\n    return "bye"\n', (
        session.describe()
    )
    assert (bob.clone / TASK_TWO.test).exists(), session.describe()
    assert session.stop_feedback() == [], session.describe()
    assert "PlanGate denied" not in json.dumps(session.turns[-1].body), session.describe()


def step_bob_pushes_task_two(week: Week) -> None:
    bob = week.bob
    _commit_and_push(bob, f"{TASK_TWO.code} {TASK_TWO.test}", "Say goodbye", TASK_TWO.branch)
    bob.plangate("task", "stop")


def bypass_bob_pushes_task_two(week: Week) -> str:
    _commit_and_push(
        week.bob, f"{TASK_TWO.code} {TASK_TWO.test}", "Say goodbye", TASK_TWO.branch, no_verify=True
    )
    week.bob.plangate("task", "stop", ok=False)
    return "git commit --no-verify; git push --no-verify"


@_observes
def step_ci_accepts_task_two(week: Week) -> None:
    run = _open_and_check(week, "task-2", "TASK-0002: say goodbye", TASK_TWO.branch, week.bob)
    _accepted_run(run)


@_observes
def step_task_two_is_merge_ready_from_the_event(week: Week) -> None:
    code, result, text = _assess(week, "task-2", TASK_TWO.task)
    assert code in (0, 4), text
    assert result.get("state") != "EXEC_RETURN" and "DELIVERY_PLAN_DEVIATION" not in text, text


def bypass_task_two_is_merge_ready_from_the_event(week: Week) -> str:
    return _assess_with_a_written_snapshot(week, "task-2", TASK_TWO.task, week.bob)


def step_task_two_is_merged(week: Week) -> None:
    _merge(week, "task-2")


def step_alice_pushes_a_readme_fix(week: Week) -> None:
    """A README fix with no task, committed and pushed through the git hooks."""
    alice = week.alice
    alice.sh("git switch -q -c readme-fix")
    _write(alice, {"README.md": "# project\n\nGreets people, and says goodbye.\n"})
    _commit_and_push(alice, "README.md", "README: say what it does", "readme-fix")


def bypass_alice_pushes_a_readme_fix(week: Week) -> str:
    _commit_and_push(
        week.alice, "README.md", "README: say what it does", "readme-fix", no_verify=True
    )
    return "git commit --no-verify; git push --no-verify"


@_observes
def step_ci_lets_a_readme_fix_through(week: Week) -> None:
    """CI does not reject a task-less pull request that only fixes docs, and is not red."""
    run = _open_and_check(week, "readme", "README fix", "readme-fix", week.alice)
    assert run.output("verdict") in ("ACCEPTED", "HUMAN_REQUIRED"), run.describe()
    assert not run.red, run.describe()


@_observes
def step_the_week_in_the_report(week: Week) -> None:
    """bob's report at the end of the week: both tasks, each as status sees it."""
    _report_agrees_with_status(week.bob, (TASK_ONE.task, TASK_TWO.task))


WEEK: tuple[Callable[[Week], None], ...] = (
    step_the_project_exists,
    step_alice_adopts_at_a_terminal,
    step_the_trust_root_requires_signatures,
    step_alice_opens_the_adoption_pull_request,
    step_ci_hands_the_adoption_to_a_human,
    step_ci_uploads_the_sarif,
    step_ci_annotates_each_finding_once,
    step_the_adoption_is_merged,
    step_the_teammates_start,
    step_local_settings_do_not_block_a_read,
    step_alice_plans_task_one,
    step_bob_reviews_task_one,
    step_carol_approves_task_one,
    step_claude_code_does_task_one,
    step_alice_pushes_task_one,
    step_the_teams_pre_commit_hook_still_runs,
    step_ci_accepts_task_one,
    step_task_one_is_merge_ready_from_the_event,
    step_task_one_is_merged,
    step_the_report_agrees_with_status,
    step_doctor_probes_are_not_refusals,
    step_bob_plans_task_two,
    step_alice_reviews_task_two,
    step_carol_approves_task_two,
    step_codex_does_task_two,
    step_bob_pushes_task_two,
    step_ci_accepts_task_two,
    step_task_two_is_merge_ready_from_the_event,
    step_task_two_is_merged,
    step_alice_pushes_a_readme_fix,
    step_ci_lets_a_readme_fix_through,
    step_the_week_in_the_report,
)


def _name(step: Callable[[Week], None]) -> str:
    return step.__name__.removeprefix("step_")


def test_seams_name_steps_of_the_week() -> None:
    names = {_name(s) for s in WEEK}
    assert [s.step for s in SEAMS_NOT_YET_FIXED if s.step not in names] == []


@pytest.fixture
def week(tmp_path: Path, hosts_bin: Path) -> Week:
    remote = Remote(tmp_path / "origin.git")
    alice, bob, carol = (Person(n, tmp_path, hosts_bin) for n in ("alice", "bob", "carol"))
    ci_home = tmp_path / "runner-home"
    ci_home.mkdir()
    ci_env = {k: v for k, v in alice.machine.env.items() if not k.startswith("GIT_")}
    ci_env |= {"HOME": str(ci_home), "GIT_CONFIG_NOSYSTEM": "1"}
    github = GitHubRun(tmp_path / "runner", remote, ci_env)
    return Week(tmp_path, remote, alice, bob, carol, github)


def test_a_teams_week(week: Week) -> None:
    """The week, step by step (see the module docstring and SEAMS_NOT_YET_FIXED)."""
    known = {s.step: s for s in SEAMS_NOT_YET_FIXED}
    lines: list[str] = []
    fixed: list[str] = []
    failed: list[str] = []
    started = time.monotonic()
    for step in WEEK:
        name = _name(step)
        begun = time.monotonic()
        failure = None
        try:
            step(week)
        except AssertionError as exc:
            failure = str(exc)
        seconds = time.monotonic() - begun
        seam = known.get(name)
        if failure is None:
            lines.append(f"{seconds:6.1f}s  ok    {name}")
            if seam is not None:
                fixed.append(name)
            continue
        if seam is None or seam.observed not in failure:
            expected = "" if seam is None else f" (listed with {seam.observed!r})"
            failed.append(f"step {name} failed{expected}:\n{failure[:4000]}")
        bypass = globals().get(f"bypass_{name}")
        if bypass is None and seam is None and not getattr(step, "observes", False):
            lines.append(f"{seconds:6.1f}s  FAIL  {name}  (the week stops: no way around it)")
            break
        went_on = bypass(week) if bypass is not None else "the week goes on"
        lines.append(f"{seconds:6.1f}s  {'SEAM' if seam else 'FAIL'}  {name}  ({went_on})")
    lines.append(f"{time.monotonic() - started:6.1f}s  the week")
    print("\n".join(lines))
    assert failed == [], "\n".join(lines) + "\n\n" + "\n\n".join(failed)
    assert fixed == [], f"fixed: remove these steps from SEAMS_NOT_YET_FIXED: {fixed}"
