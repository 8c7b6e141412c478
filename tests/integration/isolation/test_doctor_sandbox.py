"""``plangate doctor`` names the sandbox backend that works here and why the others do not."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def test_doctor_lists_every_backend_with_its_reason(git_repo: Path, run_cli) -> None:
    result = run_cli(git_repo, "doctor")
    lines = [line for line in result.out.splitlines() if line.startswith("sandbox ")]
    assert len(lines) == 2
    names = [line.split()[1] for line in lines]
    assert names == ["bubblewrap", "seatbelt"]
    if sys.platform.startswith("linux"):
        assert "unavailable: macOS only" in lines[1]
        works = Path("/usr/bin/bwrap").exists()
        assert ("bubblewrap     works" in lines[0]) is works


def test_doctor_json_carries_the_sandbox_facts(git_repo: Path, run_cli) -> None:
    body = json.loads(run_cli(git_repo, "doctor", "--json").out)
    sandbox = body["facts"]["sandbox"]
    assert [s["backend"] for s in sandbox] == ["bubblewrap", "seatbelt"]
    assert all(isinstance(s["available"], bool) and s["detail"] for s in sandbox)
