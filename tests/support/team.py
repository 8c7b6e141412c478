"""A team on real machines: people with ssh keys and clones, a bare remote, GitHub's run.

The week's journey (tests/journeys/test_week.py) is built from these parts:

- :class:`Remote`: a bare repository standing in for the forge; pull requests are merged
  on it as the forge merges them (a merge commit written server-side, no local hooks).
- :class:`Person`: a name, a real ssh key (``ssh-keygen``), a home and a clone; the person
  types at a pseudo-terminal (:func:`converse` answers the prompts a program shows, as a
  person reads and answers them) and runs the hosts through :class:`~support.journey.Journey`.
- :class:`GitHubRun`: runs the workflow documented in docs/ as GitHub runs it for a
  ``pull_request`` event: a fresh checkout of the head commit with full history, the
  ``GITHUB_*`` variables, the event JSON at ``GITHUB_EVENT_PATH``, ``GITHUB_OUTPUT`` and
  ``GITHUB_STEP_SUMMARY`` files, each ``run:`` step through ``bash -e -o pipefail``, the
  composite action of this repository (``action.yml``) step by step, and ``if:``
  conditions over ``steps.*.outputs``. The runner does not install Python or PlanGate
  (the test's own installation is on ``PATH``) and records what it leaves out.
"""

from __future__ import annotations

import hashlib
import json
import os
import pty
import re
import select
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from support.journey import ROOT, SESSION_TIMEOUT, Journey
from support.keys import Key, make_key

PROMPT_QUIET_SECONDS = 0.3
"""How long a program's output stays quiet before :func:`converse` reads its last line as a
question waiting for an answer (a person reads the screen; no timing is asserted)."""


# -- a person at a terminal --------------------------------------------------------------


@dataclass
class Conversation:
    """What a program printed at the terminal, the answers typed and how it exited."""

    argv: list[str]
    returncode: int
    screen: str
    answered: list[tuple[str, str]]

    def describe(self) -> str:
        """Everything a failing assertion should show."""
        return f"$ {' '.join(self.argv)}  (exit {self.returncode})\n{self.screen}"


def converse(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: dict[str, str],
    answers: Sequence[tuple[str, str]],
    give_up_after: float = 10.0,
) -> Conversation:
    """Run ``argv`` with a pseudo-terminal for stdin, stdout and stderr, and answer its
    questions as a person does: when the output stops at a line without a newline (a
    prompt), the first rule of ``answers`` (``(regex, reply)``) matching that line is
    typed with a newline. A line no rule matches may be a prompt still being written, so
    it is read again; once it has stood unchanged for ``give_up_after`` seconds it is a
    question nobody expected, and the program is stopped (the conversation records
    ``UNANSWERED PROMPT``): a new question is never answered by accident."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        list(argv), cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave, close_fds=True
    )
    os.close(slave)
    screen = b""
    answered: list[tuple[str, str]] = []
    deadline = time.monotonic() + SESSION_TIMEOUT
    pending_since = len(screen)
    last_output = time.monotonic()
    try:
        while True:
            if time.monotonic() > deadline:
                proc.kill()
                screen += b"\n[converse: the program did not finish]\n"
                break
            ready, _, _ = select.select([master], [], [], PROMPT_QUIET_SECONDS)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the slave side closed: the program ended
                    chunk = b""
                if not chunk:
                    break
                screen += chunk
                last_output = time.monotonic()
                continue
            if proc.poll() is not None:
                break  # ended, and nothing more to read (a lingering child may hold the pty)
            tail = screen[pending_since:].decode("utf-8", "replace")
            last_line = tail.rsplit("\n", 1)[-1].strip()
            if not last_line:
                continue
            reply = next((r for pattern, r in answers if re.search(pattern, last_line)), None)
            if reply is None:
                if time.monotonic() - last_output >= give_up_after:
                    screen += f"\n[converse: UNANSWERED PROMPT {last_line!r}]\n".encode()
                    proc.kill()
                continue
            os.write(master, reply.encode() + b"\n")
            answered.append((last_line, reply))
            pending_since = len(screen)
    finally:
        returncode = proc.wait()
        os.close(master)
    text = screen.decode("utf-8", "replace").replace("\r\n", "\n")
    return Conversation(list(argv), returncode, text, answered)


ASKED_COMMANDS = re.compile(r"pre-commit install(?: --hook-type [a-z-]+)*")
"""Commands a program may ask a person to run next (the pre-commit framework's install)."""

SUGGESTED_FILE = re.compile(r"^No (?P<path>[\w./-]+): .*write it to that file", re.M)
"""A program's request to write a file whose text it prints, indented by four spaces."""


def commands_a_screen_asks_for(screen: str) -> list[str]:
    """The commands a program's screen asks the person to run, each once, in order."""
    return list(dict.fromkeys(ASKED_COMMANDS.findall(screen)))


def files_a_screen_asks_for(screen: str) -> dict[str, str]:
    """The files a program's screen asks the person to write, with the text it shows."""
    files = {}
    for match in SUGGESTED_FILE.finditer(screen):
        body = []
        for line in screen[match.end() :].split("\n")[1:]:
            if line.strip() and not line.startswith("    "):
                break
            body.append(line[4:])
        files[match.group("path")] = "\n".join(body).strip("\n") + "\n"
    return files


# -- the forge's repository --------------------------------------------------------------


def _git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, f"git {' '.join(args)}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout.strip()


FORGE_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "GIT_AUTHOR_NAME": "GitHub",
    "GIT_AUTHOR_EMAIL": "noreply@github.invalid",
    "GIT_COMMITTER_NAME": "GitHub",
    "GIT_COMMITTER_EMAIL": "noreply@github.invalid",
}


@dataclass
class PullRequest:
    """A pull request on the remote: its number, its branches and their commits when opened."""

    number: int
    title: str
    head_ref: str
    base_ref: str = "main"
    head_sha: str = ""
    base_sha: str = ""
    author: str = ""

    def event(self, remote: Remote) -> dict[str, Any]:
        """The ``pull_request`` event GitHub writes at ``GITHUB_EVENT_PATH`` (the fields a
        workflow reads; GitHub's payload carries more)."""
        repo = {"full_name": "team/project", "name": "project", "clone_url": str(remote.path)}
        return {
            "action": "synchronize",
            "number": self.number,
            "pull_request": {
                "number": self.number,
                "title": self.title,
                "state": "open",
                "draft": False,
                "merged": False,
                "user": {"login": self.author},
                "head": {"ref": self.head_ref, "sha": self.head_sha, "repo": repo},
                "base": {"ref": self.base_ref, "sha": self.base_sha, "repo": repo},
            },
            "repository": repo,
            "sender": {"login": self.author},
        }


class Remote:
    """A bare repository standing in for the forge."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._numbers = 0
        _git(path.parent, "init", "-q", "--bare", "-b", "main", str(path), env=FORGE_ENV)

    def sha(self, ref: str) -> str:
        """The commit ``ref`` (a branch name) points at on the remote."""
        return _git(self.path, "rev-parse", f"refs/heads/{ref}^{{commit}}", env=FORGE_ENV)

    def open_pull_request(self, title: str, head_ref: str, author: str) -> PullRequest:
        """Open a pull request of ``head_ref`` into ``main`` (both pushed already)."""
        self._numbers += 1
        pr = PullRequest(self._numbers, title, head_ref, author=author)
        self.refresh(pr)
        return pr

    def refresh(self, pr: PullRequest) -> None:
        """Read the pull request's head and base commits again (after a push)."""
        pr.head_sha = self.sha(pr.head_ref)
        pr.base_sha = self.sha(pr.base_ref)

    def merge(self, pr: PullRequest) -> str:
        """Merge the pull request as the forge's merge button does: a merge commit written
        on the remote, the base branch moved to it. Returns the merge commit."""
        self.refresh(pr)
        tree = _git(
            self.path, "merge-tree", "--write-tree", pr.base_sha, pr.head_sha, env=FORGE_ENV
        ).splitlines()[0]
        message = f"Merge pull request #{pr.number} from {pr.head_ref}\n\n{pr.title}"
        merged = _git(
            self.path,
            "commit-tree",
            tree,
            "-p",
            pr.base_sha,
            "-p",
            pr.head_sha,
            "-m",
            message,
            env=FORGE_ENV,
        )
        _git(
            self.path, "update-ref", f"refs/heads/{pr.base_ref}", merged, pr.base_sha, env=FORGE_ENV
        )
        return merged


# -- people ------------------------------------------------------------------------------


class Person:
    """One person: a real ssh key, a machine (home, hosts, PlanGate on PATH) and a clone."""

    def __init__(self, name: str, root: Path, hosts_bin: Path) -> None:
        self.name = name
        self.email = f"{name}@example.com"
        self.machine = Journey(root / name, hosts_bin)
        self.key: Key = make_key(self.machine.home / ".ssh", self.email)
        identity = {
            "GIT_AUTHOR_NAME": name.capitalize(),
            "GIT_AUTHOR_EMAIL": self.email,
            "GIT_COMMITTER_NAME": name.capitalize(),
            "GIT_COMMITTER_EMAIL": self.email,
        }
        self.machine.env.update(identity)

    @property
    def clone(self) -> Path:
        """The person's working tree."""
        return self.machine.repo

    def signer(self) -> str:
        """``NAME=KEY.pub`` as ``plangate setup --reviewer/--approver`` takes it."""
        return f"{self.email}={self.key.pub_path}"

    def sh(self, script: str, *, ok: bool = True) -> subprocess.CompletedProcess[str]:
        """Run ``script`` with bash in the clone at a pseudo-terminal (the person's shell)."""
        return self.machine.sh(script, ok=ok)

    def plangate(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        """The installed ``plangate`` CLI in the clone."""
        return self.machine.plangate(*args, ok=ok)

    def at_terminal(self, *args: str, answers: Sequence[tuple[str, str]] = ()) -> Conversation:
        """``plangate ARGS`` at a real terminal, the person answering its questions."""
        return converse(["plangate", *args], cwd=self.clone, env=self.machine.env, answers=answers)

    def head(self) -> str:
        """The clone's HEAD commit."""
        return self.sh("git rev-parse HEAD").stdout.strip()

    def clone_from(self, remote: Remote) -> None:
        """``git clone`` the remote into the person's working tree."""
        self.machine.sh(f"git clone -q {remote.path} {self.clone}")
        self.sh("git config commit.gpgsign false")

    def trust_project_in_codex(self) -> None:
        """What a Codex user has done once: the project trusted in Codex (its ``.codex/``
        loads only then)."""
        self.machine.write_codex_config("http://127.0.0.1:9")


# -- GitHub's run of the documented workflow ---------------------------------------------

DOCUMENTED_WORKFLOW_PAGES = ("docs/getting-started.md", "docs/agents.md")
"""The pages whose first YAML block with ``on: pull_request`` and a step using PlanGate's
action is the workflow a team copies (the first page holding one wins)."""

PLANGATE_ACTION = re.compile(r"^<owner>/<plangate-repo>@|^[^/]+/plangate@|^\./?$")
"""How the documented workflow names PlanGate's composite action (the repository root)."""

SKIPPED_ACTIONS = {
    "actions/setup-python": "the test's Python runs PlanGate",
}
SKIPPED_COMPOSITE_STEPS = ("Install PlanGate",)
"""Composite steps the runner leaves out: PlanGate is already installed (editable)."""


def documented_workflow(root: Path = ROOT) -> tuple[str, dict[str, Any]]:
    """The page and the parsed workflow a team copies from the docs."""
    for page in DOCUMENTED_WORKFLOW_PAGES:
        text = (root / page).read_text()
        for block in re.findall(r"```ya?ml\n(.*?)```", text, re.S):
            try:
                parsed = yaml.safe_load(block)
            except yaml.YAMLError:
                continue
            if not isinstance(parsed, dict):
                continue
            trigger = parsed.get("on", parsed.get(True))
            if "pull_request" not in json.dumps(trigger) or "jobs" not in parsed:
                continue
            steps = [s for job in parsed["jobs"].values() for s in job.get("steps", [])]
            if any(PLANGATE_ACTION.search(str(s.get("uses", ""))) for s in steps):
                return page, parsed
    raise AssertionError(
        f"no pull_request workflow using PlanGate's action in {DOCUMENTED_WORKFLOW_PAGES}"
    )


@dataclass
class StepRun:
    """One step of a job: what ran and how it ended (``skipped`` when its ``if`` was false)."""

    name: str
    outcome: str  # success, failure, skipped, emulated
    exit_code: int | None = None
    log: str = ""
    outputs: dict[str, str] = field(default_factory=dict)


@dataclass
class JobRun:
    """One job: its steps and its conclusion (``failure`` is the red cross on the PR)."""

    name: str
    conclusion: str
    steps: list[StepRun]
    environment: str | None = None


@dataclass
class WorkflowRun:
    """A workflow run on one pull request event."""

    page: str
    pr: PullRequest
    event_path: Path
    workspace: Path
    jobs: list[JobRun]
    summary: str
    uploaded_sarif: list[Path]
    left_out: list[str]

    @property
    def red(self) -> bool:
        """A job failed: GitHub shows the check red."""
        return any(job.conclusion == "failure" for job in self.jobs)

    @property
    def human_gates(self) -> list[str]:
        """The deployment environments whose jobs ran: GitHub holds each such job until a
        required reviewer approves it (the runner lets it run, as after that approval)."""
        return [job.environment for job in self.jobs if job.environment and job.steps]

    @property
    def log(self) -> str:
        """Every step's log, in order."""
        return "\n".join(s.log for job in self.jobs for s in job.steps)

    def output(self, name: str) -> str | None:
        """The first step output called ``name`` (PlanGate's ``verdict``, ``exit-code``)."""
        for job in self.jobs:
            for step in job.steps:
                if name in step.outputs:
                    return step.outputs[name]
        return None

    def annotations(self) -> list[str]:
        """The workflow commands that annotate the pull request (``::error``/``::warning``)."""
        return [
            line for line in self.log.splitlines() if re.match(r"::(error|warning|notice)\b", line)
        ]

    def describe(self) -> str:
        """Everything a failing assertion should show."""
        lines = [f"PR #{self.pr.number} {self.pr.title!r} ({self.page})"]
        for job in self.jobs:
            lines.append(f"job {job.name}: {job.conclusion}")
            for step in job.steps:
                lines.append(
                    f"  step {step.name!r}: {step.outcome} exit {step.exit_code} {step.outputs}"
                )
        return (
            "\n".join(lines) + f"\n--- log ---\n{self.log[-6000:]}\n--- summary ---\n{self.summary}"
        )


_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


class _Context:
    """The contexts an expression reads: github, inputs, steps, env, needs."""

    def __init__(self, event: dict[str, Any], workspace: Path, action_path: Path) -> None:
        self.github: dict[str, Any] = {
            "event": event,
            "event_name": "pull_request",
            "workspace": str(workspace),
            "action_path": str(action_path),
            "sha": event["pull_request"]["head"]["sha"],
            "head_ref": event["pull_request"]["head"]["ref"],
            "base_ref": event["pull_request"]["base"]["ref"],
            "repository": event["repository"]["full_name"],
        }
        self.inputs: dict[str, Any] = {}
        self.steps: dict[str, dict[str, Any]] = {}
        self.needs: dict[str, Any] = {}
        self.failed = False

    def lookup(self, dotted: str) -> Any:
        roots = {
            "github": self.github,
            "inputs": self.inputs,
            "steps": self.steps,
            "needs": self.needs,
        }
        head, *rest = dotted.split(".")
        value: Any = roots.get(head)
        if value is None:
            raise AssertionError(f"the runner does not know the context {dotted!r}")
        for part in rest:
            value = value.get(part, "") if isinstance(value, dict) else ""
        return value

    def evaluate(self, expression: str) -> Any:
        """A small subset of GitHub's expressions: literals, context paths, ``==``/``!=``,
        ``&&``/``||``/``!``, parentheses and the functions of :meth:`call`."""
        tokens = re.findall(
            r"'(?:[^']|'')*'|&&|\|\||==|!=|!|\(|\)|,|[A-Za-z_][\w.\-]*|\d+", expression
        )
        position = 0

        def peek() -> str | None:
            return tokens[position] if position < len(tokens) else None

        def take() -> str:
            nonlocal position
            position += 1
            return tokens[position - 1]

        def atom() -> Any:
            token = take()
            if token == "(":
                value = disjunction()
                assert take() == ")", expression
                return value
            if token == "!":
                return not atom()
            if token.startswith("'"):
                return token[1:-1].replace("''", "'")
            if token in ("true", "false"):
                return token == "true"
            if token.isdigit():
                return int(token)
            if peek() == "(":
                take()
                arguments = []
                while peek() != ")":
                    arguments.append(disjunction())
                    if peek() == ",":
                        take()
                take()
                return self.call(token, arguments)
            return self.lookup(token)

        def comparison() -> Any:
            left = atom()
            while peek() in ("==", "!="):
                op = take()
                right = atom()
                left = (str(left).lower() == str(right).lower()) == (op == "==")
            return left

        def conjunction() -> Any:
            left = comparison()
            while peek() == "&&":
                take()
                right = comparison()
                left = left and right
            return left

        def disjunction() -> Any:
            left = conjunction()
            while peek() == "||":
                take()
                right = conjunction()
                left = left or right
            return left

        value = disjunction()
        assert position == len(tokens), f"the runner cannot read the expression {expression!r}"
        return value

    def call(self, name: str, arguments: list[Any]) -> Any:
        """The functions a workflow of the docs uses: the status checks, ``hashFiles`` (a
        digest of the named workspace files, ``''`` when none exists) and ``contains``."""
        if name == "hashFiles":
            workspace = Path(self.github["workspace"])
            files = [workspace / str(a) for a in arguments if (workspace / str(a)).is_file()]
            digest = hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()
            return digest if files else ""
        if name == "contains":
            return str(arguments[1]).lower() in str(arguments[0]).lower()
        statuses = {
            "always": True,
            "success": not self.failed,
            "failure": self.failed,
            "cancelled": False,
        }
        assert name in statuses and not arguments, f"the runner does not know {name}()"
        return statuses[name]

    def render(self, text: Any) -> str:
        """``text`` with every ``${{ ... }}`` replaced by its value."""
        return _EXPRESSION.sub(lambda m: str(self.evaluate(m.group(1))), str(text))

    def condition(self, value: Any) -> bool:
        """An ``if:`` (with or without ``${{ }}``); absent means ``success()``."""
        if value is None:
            return not self.failed
        text = str(value).strip()
        match = _EXPRESSION.fullmatch(text)
        expression = match.group(1) if match else text
        if not re.search(r"\b(always|failure|cancelled)\(\)", expression):
            expression = f"success() && ({expression})"
        return bool(self.evaluate(expression))


def _read_outputs(path: Path) -> dict[str, str]:
    """A ``GITHUB_OUTPUT`` file: ``name=value`` lines and ``name<<DELIM`` blocks."""
    outputs: dict[str, str] = {}
    lines = path.read_text().splitlines() if path.exists() else []
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if "<<" in line and "=" not in line.split("<<", 1)[0]:
            name, delimiter = line.split("<<", 1)
            body = []
            while index < len(lines) and lines[index] != delimiter:
                body.append(lines[index])
                index += 1
            index += 1
            outputs[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            outputs[name] = value
    return outputs


class GitHubRun:
    """Runs the documented workflow for pull requests of ``remote`` as GitHub does."""

    def __init__(
        self, root: Path, remote: Remote, env: dict[str, str], source: Path = ROOT
    ) -> None:
        self.root = root
        self.remote = remote
        self.env = env
        # The docs and the action of one checkout of PlanGate (this one by default).
        self.page, self.workflow = documented_workflow(source)
        self.action_path = source
        self.runs = 0

    def run(self, pr: PullRequest) -> WorkflowRun:
        """One run of every job of the workflow on ``pr``'s current head."""
        self.remote.refresh(pr)
        self.runs += 1
        run_dir = self.root / f"run-{self.runs}"
        temp = run_dir / "_temp"
        temp.mkdir(parents=True)
        workspace = run_dir / "workspace"
        event = pr.event(self.remote)
        event_path = temp / "event.json"
        event_path.write_text(json.dumps(event, indent=2))
        summary_path = temp / "step_summary.md"
        summary_path.write_text("")
        left_out: list[str] = []
        uploaded: list[Path] = []
        jobs: list[JobRun] = []
        context = _Context(event, workspace, self.action_path)
        for job_id, job in self.workflow["jobs"].items():
            needs = job.get("needs") or []
            needs = [needs] if isinstance(needs, str) else list(needs)
            context.steps = {}
            # A job's implicit success(): every job it needs succeeded.
            context.failed = any(context.needs.get(n, {}).get("result") != "success" for n in needs)
            environment = job.get("environment")
            if isinstance(environment, dict):
                environment = environment.get("name")
            if not context.condition(job.get("if")):
                context.needs[job_id] = {"result": "skipped", "outputs": {}}
                jobs.append(JobRun(job_id, "skipped", [], environment))
                continue
            context.failed = False
            steps: list[StepRun] = []
            for index, step in enumerate(job.get("steps", [])):
                name = str(step.get("name") or step.get("uses") or step.get("run", "")[:40])
                if not context.condition(step.get("if")):
                    steps.append(StepRun(name, "skipped"))
                    continue
                env = {
                    **self.env,
                    "CI": "true",
                    "GITHUB_ACTIONS": "true",
                    "GITHUB_EVENT_NAME": "pull_request",
                    "GITHUB_EVENT_PATH": str(event_path),
                    "GITHUB_WORKSPACE": str(workspace),
                    "GITHUB_REPOSITORY": event["repository"]["full_name"],
                    "GITHUB_SHA": pr.head_sha,
                    "GITHUB_REF": f"refs/pull/{pr.number}/merge",
                    "GITHUB_HEAD_REF": pr.head_ref,
                    "GITHUB_BASE_REF": pr.base_ref,
                    "GITHUB_RUN_ID": str(self.runs),
                    "GITHUB_STEP_SUMMARY": str(summary_path),
                    "RUNNER_TEMP": str(temp),
                }
                outcome = self._step(step, index, context, env, workspace, temp, left_out, uploaded)
                steps.append(outcome)
                step_id = step.get("id")
                if step_id:
                    context.steps[str(step_id)] = {
                        "outputs": outcome.outputs,
                        "outcome": outcome.outcome,
                        "conclusion": outcome.outcome,
                    }
                if outcome.outcome == "failure" and not step.get("continue-on-error"):
                    context.failed = True
            conclusion = "failure" if context.failed else "success"
            context.needs[job_id] = {
                "result": conclusion,
                "outputs": {k: context.render(v) for k, v in (job.get("outputs") or {}).items()},
            }
            jobs.append(JobRun(job_id, conclusion, steps, environment))
        return WorkflowRun(
            self.page, pr, event_path, workspace, jobs, summary_path.read_text(), uploaded, left_out
        )

    def _step(
        self,
        step: dict[str, Any],
        index: int,
        context: _Context,
        env: dict[str, str],
        workspace: Path,
        temp: Path,
        left_out: list[str],
        uploaded: list[Path],
    ) -> StepRun:
        uses = str(step.get("uses", ""))
        name = str(step.get("name") or uses or f"run {index}")
        inputs = {k: context.render(v) for k, v in (step.get("with") or {}).items()}
        if uses.startswith("actions/checkout@"):
            return self._checkout(name, inputs, workspace, env)
        if uses.split("@", maxsplit=1)[0] in SKIPPED_ACTIONS:
            left_out.append(f"{uses}: {SKIPPED_ACTIONS[uses.split('@', maxsplit=1)[0]]}")
            return StepRun(name, "emulated")
        if uses.startswith("github/codeql-action/upload-sarif@"):
            sarif = workspace / inputs.get("sarif_file", "results.sarif")
            if not sarif.is_file():
                return StepRun(name, "failure", 1, f"::error::Path does not exist: {sarif}")
            document = json.loads(sarif.read_text())
            assert document.get("version") == "2.1.0", document
            uploaded.append(sarif)
            return StepRun(name, "success", 0, f"uploaded {sarif}")
        if PLANGATE_ACTION.search(uses):
            return self._composite(name, inputs, context, env, workspace, temp, left_out)
        if "run" in step:
            step_env = {**env, **{k: context.render(v) for k, v in (step.get("env") or {}).items()}}
            return self._bash(name, context.render(step["run"]), step_env, workspace, temp)
        raise AssertionError(f"the runner does not know the step {step!r}")

    def _checkout(
        self, name: str, inputs: dict[str, str], workspace: Path, env: dict[str, str]
    ) -> StepRun:
        """actions/checkout: ``ref`` checked out detached; ``fetch-depth: 0`` the whole history
        (anything else would be a shallow clone, which the runner refuses to pretend)."""
        assert str(inputs.get("fetch-depth")) == "0", f"the workflow checks out shallowly: {inputs}"
        ref = inputs.get("ref") or f"refs/pull/{0}/merge"
        _git(
            self.root,
            "clone",
            "-q",
            "--no-checkout",
            str(self.remote.path),
            str(workspace),
            env=env,
        )
        _git(workspace, "checkout", "-q", "--detach", ref, env=env)
        return StepRun(name, "success", 0, f"checked out {ref}")

    def _composite(
        self,
        name: str,
        given: dict[str, str],
        context: _Context,
        env: dict[str, str],
        workspace: Path,
        temp: Path,
        left_out: list[str],
    ) -> StepRun:
        """This repository's ``action.yml``, step by step, with its inputs and outputs."""
        action = yaml.safe_load((self.action_path / "action.yml").read_text())
        inner = _Context(context.github["event"], workspace, self.action_path)
        for key, spec in (action.get("inputs") or {}).items():
            inner.inputs[key] = (
                given[key] if key in given else inner.render(spec.get("default", ""))
            )
        logs: list[str] = []
        failed: StepRun | None = None
        for step in action["runs"]["steps"]:
            step_name = str(step.get("name") or step.get("uses"))
            if not inner.condition(step.get("if")):
                continue
            uses = str(step.get("uses", ""))
            if (
                uses.split("@", maxsplit=1)[0] in SKIPPED_ACTIONS
                or step_name in SKIPPED_COMPOSITE_STEPS
            ):
                left_out.append(f"action step {step_name!r}: PlanGate is installed already")
                continue
            assert "run" in step, f"the runner does not know the action's step {step!r}"
            step_env = {**env, **{k: inner.render(v) for k, v in (step.get("env") or {}).items()}}
            outcome = self._bash(step_name, inner.render(step["run"]), step_env, workspace, temp)
            logs.append(outcome.log)
            if step.get("id"):
                inner.steps[str(step["id"])] = {
                    "outputs": outcome.outputs,
                    "outcome": outcome.outcome,
                }
            if outcome.outcome == "failure":
                inner.failed = True
                failed = outcome
                break
        outputs = {
            k: inner.render(v.get("value", "")) for k, v in (action.get("outputs") or {}).items()
        }
        log = "\n".join(logs)
        if failed is not None:
            return StepRun(name, "failure", failed.exit_code, log, outputs)
        return StepRun(name, "success", 0, log, outputs)

    def _bash(
        self, name: str, script: str, env: dict[str, str], workspace: Path, temp: Path
    ) -> StepRun:
        """A ``run:`` step as GitHub runs ``shell: bash``: ``bash --noprofile --norc -e -o
        pipefail FILE`` in the workspace, with its own ``GITHUB_OUTPUT`` file."""
        script_file = temp / f"step-{len(list(temp.glob('step-*.sh')))}.sh"
        script_file.write_text(script)
        output_file = temp / f"{script_file.stem}.output"
        output_file.write_text("")
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", str(script_file)],
            cwd=workspace,
            env={**env, "GITHUB_OUTPUT": str(output_file)},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=SESSION_TIMEOUT,
            check=False,
        )
        outcome = "success" if proc.returncode == 0 else "failure"
        return StepRun(
            name, outcome, proc.returncode, proc.stdout + proc.stderr, _read_outputs(output_file)
        )
