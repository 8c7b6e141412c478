"""``plangate demo``: walk the product's journeys on a bundled example.

Each capability contributes one module in this package with
``run_steps(demo: Demo) -> None``; :data:`STEP_MODULES` fixes their order.
"""

from __future__ import annotations

import io
import os
import subprocess
import tempfile
from collections.abc import Mapping
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


def demo_env(base: Mapping[str, str]) -> dict[str, str]:
    """Environment for demo steps: no inherited task, ledger URL or agent markers."""
    return {
        k: v
        for k, v in base.items()
        if not k.startswith(
            ("PLANGATE_", "GIT_", "CLAUDE", "CODEX", "CURSOR", *AGENT_MARKER_PREFIXES)
        )
        and k not in AGENT_MARKERS
    } | {"PLANGATE_DEMO": "1", "HOME": os.environ.get("HOME", tempfile.gettempdir())}
