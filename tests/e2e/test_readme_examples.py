"""Every shell example in the README runs as written, in order, in a scratch repository,
with a person's terminal (a real pseudo-terminal) and PlanGate on PATH.

Blocks that install this project or run its own test suite cannot run here: they are run
by CI and are listed in :data:`RUN_BY_CI` by their first line, explicitly. Any other block
of the README is run; a block this test does not know is run too.
"""

from __future__ import annotations

import os
import pty
import re
import subprocess
from pathlib import Path

import pytest

from support.hooks import developer_bin
from support.terminal import person_env

README = Path(__file__).resolve().parents[2] / "README.md"
RUN_BY_CI = {
    "pipx install 'git+https://github.com/OWNER/plangate.git@vX.Y.Z'": "installs this project",
    "make test": "runs this project's test suite",
    "pip install -e '.[dev]'": "installs this project and runs its checks and test suite",
}
"""First line of each README block that CI runs instead (installs, the test suite)."""


def shell_blocks(text: str) -> list[str]:
    """The ```sh blocks of ``text``, in order."""
    return re.findall(r"^```sh\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def _first_line(block: str) -> str:
    return block.strip().splitlines()[0].split("  #")[0].strip()


def test_the_run_by_ci_list_names_only_blocks_that_exist() -> None:
    firsts = [_first_line(b) for b in shell_blocks(README.read_text())]
    assert set(RUN_BY_CI) <= set(firsts)


def test_every_readme_example_runs_as_written(tmp_path: Path) -> None:
    blocks = [b for b in shell_blocks(README.read_text()) if _first_line(b) not in RUN_BY_CI]
    assert len(blocks) >= 3
    repo = tmp_path / "project"
    repo.mkdir()
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    bin_dir = developer_bin(tmp_path / "venv" / "bin", light=False)
    developer_bin(bin_dir, light=True)
    env = person_env(
        HOME=str(home),
        PATH=f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        GIT_AUTHOR_NAME="Ada",
        GIT_AUTHOR_EMAIL="ada@example.invalid",
        GIT_COMMITTER_NAME="Ada",
        GIT_COMMITTER_EMAIL="ada@example.invalid",
    )
    env.pop("PYTHONPATH")  # PlanGate comes from PATH, as on a developer's machine
    setup = (
        "git init -q -b main && echo '# project' > README.md && git add README.md && "
        "git -c commit.gpgsign=false commit -q -m 'first commit'"
    )
    subprocess.run(["bash", "-c", setup], cwd=repo, env=env, check=True)
    for number, block in enumerate(blocks, 1):
        script = tmp_path / f"block{number}.sh"
        script.write_text(block)
        master, slave = pty.openpty()
        try:
            os.write(master, b"SETUP\n")  # what the person types when setup asks
            proc = subprocess.run(
                ["bash", "-e", "-o", "pipefail", str(script)],
                cwd=repo,
                stdin=slave,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
        finally:
            os.close(slave)
            os.close(master)
        assert proc.returncode == 0, (
            f"README block {number} failed ({proc.returncode}):\n{block}\n"
            f"--- stdout\n{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}"
        )


@pytest.mark.parametrize("first", sorted(RUN_BY_CI))
def test_run_by_ci_blocks_say_why(first: str) -> None:
    assert RUN_BY_CI[first]
