"""Claude Code's own sandbox as ``plangate task start --sandbox claude`` configures it,
with the real Claude Code on Linux (bubblewrap + socat) and a scripted model.

The settings must be ones the sandbox accepts: a ``denyWrite`` list bubblewrap cannot
mount makes every Bash call fail before it starts. And they must confine: a program
the hook lets run *because* the sandbox confines it (project code, which the
classifier cannot read) gets ``EROFS`` when it writes a protected path. That second
check is the sandbox's alone: the hook allowed the command.
"""

from __future__ import annotations

import json
from pathlib import Path

from support.journey import IN_SCOPE, TASK, Journey
from support.model_server import call, say

PROBE = '''\
import os
TARGETS = [
    ".plangate/probe",                # missing, under the denied .plangate/
    ".git/HEAD",                      # existing, under the denied .git/
    ".git/probe",                     # missing, under the denied .git/
    ".claude/settings.json",          # existing, named one by one inside .claude/
    ".claude/rules/probe.md",         # missing, protected .claude/rules
    ".cursor/rules/probe.mdc",        # missing, under the missing .cursor/
    ".codex/hooks.json",              # existing
    "docs/working/{task}/plan.md",    # the task's approved plan
]
for target in TARGETS:
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "a") as handle:
            handle.write("tampered\\n")
        print("WROTE", target)
    except OSError as exc:
        print("DENIED", target, exc.errno, exc.strerror)
'''


def _started_with_sandbox(journey: Journey) -> dict[str, object]:
    journey.approve()
    started = journey.plangate("task", "start", TASK, "--sandbox", "claude", "--json")
    report: dict[str, object] = json.loads(started.stdout)
    assert report["claude_sandbox_relied_on"] is True, report
    return report


def _snapshot(repo: Path) -> dict[str, bytes | None]:
    paths = [".git/HEAD", ".claude/settings.json", ".codex/hooks.json",
             f"docs/working/{TASK}/plan.md"]
    return {p: (repo / p).read_bytes() if (repo / p).exists() else None for p in paths}


def test_sandboxed_commands_start_and_protected_paths_are_read_only(
    switched_on: Journey,
) -> None:
    journey = switched_on
    _started_with_sandbox(journey)
    before = _snapshot(journey.repo)
    probe = PROBE.replace("{task}", TASK)
    session = journey.claude(
        [
            # In scope: the hook allows the write, the sandbox lets the command start.
            call("Bash", command=f"cat > {IN_SCOPE} <<'EOF'\n{probe}EOF\necho written",
                 description="write the app"),
            # Project code: the hook allows it only because the sandbox confines it.
            call("Bash", command=f"python3 {IN_SCOPE}", description="run the app"),
            say("ok"),
        ]
    )
    assert session.returncode == 0, session.describe()
    first, second = session.result_text(0), session.result_text(1)
    assert "bwrap" not in first and "written" in first, session.describe()
    assert (journey.repo / IN_SCOPE).read_text() == probe
    assert "bwrap" not in second and "HOOK_" not in second, session.describe()
    lines = [line for line in second.splitlines() if line.startswith(("WROTE", "DENIED"))]
    assert len(lines) == 8, session.describe()
    wrote = [line for line in lines if line.startswith("WROTE")]
    assert wrote == [], session.describe()
    # Each write failed at the operating system: read-only file system (EROFS, 30),
    # or for a path under a missing denied component, the read-only /dev/null mounted
    # there (ENOTDIR 20, or EEXIST 17 when a directory is made over it).
    for line in lines:
        errno = int(line.split()[2])
        assert errno in (30, 20, 17), line
    assert "DENIED .git/HEAD 30" in second and "DENIED .plangate/probe 30" in second
    assert _snapshot(journey.repo) == before
    for missing in (".plangate/probe", ".git/probe", ".claude/rules", ".cursor"):
        assert not (journey.repo / missing).exists(), missing


def test_the_working_tree_outside_the_denied_paths_stays_writable(
    switched_on: Journey,
) -> None:
    journey = switched_on
    _started_with_sandbox(journey)
    script = "import pathlib; pathlib.Path('build/out.txt').parent.mkdir(); " \
             "pathlib.Path('build/out.txt').write_text('made')"
    session = journey.claude(
        [
            call("Bash", command=f"printf '%s\\n' \"{script}\" > {IN_SCOPE}",
                 description="write the app"),
            call("Bash", command=f"python3 {IN_SCOPE} && echo ran", description="run it"),
            say("ok"),
        ]
    )
    assert session.returncode == 0, session.describe()
    assert "ran" in session.result_text(1), session.describe()
    assert (journey.repo / "build" / "out.txt").read_text() == "made"
