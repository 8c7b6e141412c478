"""``plangate demo``: walk the product's journeys on a bundled example.

Each capability contributes one module in this package with
``run_steps(demo: Demo) -> None``; :data:`STEP_MODULES` fixes their order.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from plangate.agents import AGENT_MARKER_PREFIXES, AGENT_MARKERS
from plangate.cli.context import Context
from plangate.errors import PlanGateError

STEP_MODULES: tuple[str, ...] = (
    "plangate.cli.demo.plan_first",
    "plangate.cli.demo.arbiter",
    "plangate.cli.demo.authority",
    "plangate.cli.demo.ledger",
    "plangate.cli.demo.delivery",
    "plangate.cli.demo.harness",
    "plangate.cli.demo.improvement",
    "plangate.cli.demo.hooks",
)


class DemoFailure(PlanGateError):
    """A demo step did not produce the verdict it shows."""


@dataclass
class Demo:
    """A temporary repository plus helpers to run and narrate CLI steps."""

    repo: Path
    out: io.TextIOBase | object
    env: Mapping[str, str] = field(default_factory=dict)
    step_no: int = 0

    def step(self, title: str) -> None:
        """Start a numbered step."""
        self.step_no += 1
        self.show(f"\n[{self.step_no}] {title}")

    def show(self, text: str) -> None:
        """Print narration."""
        print(text, file=self.out)  # type: ignore[arg-type]

    def cli(self, *argv: str, stdin: bytes = b"", cwd: Path | None = None) -> tuple[int, str, str]:
        """Run ``plangate <argv>`` in-process in the demo repository."""
        from plangate.cli.main import main

        out, err = io.StringIO(), io.StringIO()
        ctx = Context(
            cwd=cwd or self.repo,
            stdout=out,
            stderr=err,
            stdin=io.BytesIO(stdin),
            env=dict(self.env),
        )
        code = main(list(argv), ctx)
        return code, out.getvalue(), err.getvalue()

    def expect(self, code: int, expected: int, what: str) -> None:
        """Print the verdict of a step and fail the demo if it is not the expected one."""
        mark = "ok" if code == expected else "UNEXPECTED"
        self.show(f"    -> exit {code} ({what}) [{mark}]")
        if code != expected:
            raise DemoFailure(
                "DEMO_UNEXPECTED_RESULT",
                f"step {self.step_no}: expected exit {expected}, got {code}",
                "this is a bug in plangate or its demo",
            )

    def expect_reason(self, output: str, code: str) -> None:
        """Fail the demo unless ``output`` names the reason ``code``."""
        if code not in output:
            self.show(f"    -> {code} not reported [UNEXPECTED]")
            raise DemoFailure(
                "DEMO_UNEXPECTED_RESULT",
                f"step {self.step_no}: expected {code}",
                "this is a bug in plangate or its demo",
            )

    def git(self, *args: str) -> str:
        """Run git in the demo repository (setup only; checks go through plangate)."""
        from plangate.git import scrubbed_env

        env = scrubbed_env()
        env.update(
            {
                "GIT_AUTHOR_NAME": "Demo",
                "GIT_AUTHOR_EMAIL": "demo@example.invalid",
                "GIT_COMMITTER_NAME": "Demo",
                "GIT_COMMITTER_EMAIL": "demo@example.invalid",
            }
        )
        proc = subprocess.run(
            ["git", *args], cwd=self.repo, env=env, capture_output=True, check=True
        )
        return proc.stdout.decode().strip()

    def commit_all(self, message: str) -> str:
        """Stage and commit everything; return HEAD."""
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")


CONSOLE_SCRIPTS = ("plangate-hook", "plangate")
"""The programs the installed hooks run by name (the demo's hooks and doctor's canaries)."""


def console_scripts_dir() -> Path | None:
    """The directory holding this installation's ``plangate`` and ``plangate-hook``.

    The scripts directory of the running interpreter's installation (a virtual
    environment's ``bin/``, pipx's, the user's), else the interpreter's own
    directory; ``None`` when neither holds the console scripts (running from a
    source tree).
    """
    candidates = [sysconfig.get_path("scripts")]
    if sys.executable:
        candidates.append(str(Path(sys.executable).parent))
    for candidate in candidates:
        if candidate and all(Path(candidate, name).is_file() for name in CONSOLE_SCRIPTS):
            return Path(candidate)
    return None


def path_with_console_scripts(path: str) -> str:
    """``PATH`` with :func:`console_scripts_dir` first, so that the hooks the demo installs
    find this very installation, also when it was invoked by path (``.venv/bin/plangate
    demo``) and its directory is not on ``PATH``."""
    scripts = console_scripts_dir()
    if scripts is None:
        return path
    return os.pathsep.join([str(scripts), *(p for p in path.split(os.pathsep) if p)])


@contextmanager
def console_scripts_on_path() -> Iterator[None]:
    """Put :func:`console_scripts_dir` first on this process's ``PATH`` for the demo.

    ``plangate doctor`` runs the installed hook commands through a shell, as the
    hosts do, with this process's environment: they find ``plangate-hook`` there.
    """
    saved = os.environ.get("PATH")
    os.environ["PATH"] = path_with_console_scripts(saved or os.defpath)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("PATH", None)
        else:
            os.environ["PATH"] = saved


def demo_env(base: Mapping[str, str]) -> dict[str, str]:
    """Environment for demo steps: no inherited task, ledger URL or agent markers, and this
    installation's console scripts first on ``PATH``."""
    return {
        k: v
        for k, v in base.items()
        if not k.startswith(
            ("PLANGATE_", "GIT_", "CLAUDE", "CODEX", "CURSOR", *AGENT_MARKER_PREFIXES)
        )
        and k not in AGENT_MARKERS
    } | {
        "PLANGATE_DEMO": "1",
        "HOME": os.environ.get("HOME", tempfile.gettempdir()),
        "PATH": path_with_console_scripts(base.get("PATH", os.defpath)),
    }
