"""Process mechanics: bounded output, a deadline, input fed, nothing left behind (both paths)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plangate._spawn import (
    STDERR_KEPT,
    SpawnOutputTooLarge,
    SpawnTimeout,
    capture,
    subprocess_capture,
)

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}


def run(path: str, argv: list[str], cwd: Path, **kw):
    """The spawn path (through ``env -C``, the same shape as git's ``-C``) or subprocess."""
    options = {"input_data": None, "timeout": 10.0, "output_limit": 1 << 20} | kw
    if path == "spawn":
        return capture(["env", *argv], cwd, ENV, cwd_as_argument="-C", **options)
    return subprocess_capture(argv, cwd, ENV, **options)


PATHS = ["spawn", "subprocess"]


def _children() -> set[int]:
    me = os.getpid()
    out = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == me:
                out.add(int(name))
    return out


@pytest.mark.parametrize("path", PATHS)
def test_output_code_and_working_directory(path: str, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "here.txt").write_text("x")
    result = run(path, ["sh", "-c", "ls; echo err >&2; exit 3"], work)
    assert result == (3, b"here.txt\n", b"err\n")


@pytest.mark.parametrize("path", PATHS)
def test_input_larger_than_a_pipe_is_fed_whole(path: str, tmp_path: Path) -> None:
    data = os.urandom(1 << 20)
    result = run(path, ["cat"], tmp_path, input_data=data, output_limit=2 << 20)
    assert result.stdout == data


@pytest.mark.parametrize("path", PATHS)
def test_output_beyond_the_limit_kills_the_child(path: str, tmp_path: Path) -> None:
    before = _children()
    with pytest.raises(SpawnOutputTooLarge):
        run(path, ["sh", "-c", "yes"], tmp_path, output_limit=100_000)
    assert _children() <= before  # killed and reaped


@pytest.mark.parametrize("path", PATHS)
def test_a_child_past_its_deadline_is_killed(path: str, tmp_path: Path) -> None:
    before = _children()
    with pytest.raises(SpawnTimeout):
        run(path, ["sleep", "30"], tmp_path, timeout=0.3)
    assert _children() <= before


@pytest.mark.parametrize("path", PATHS)
def test_standard_error_is_kept_up_to_its_bound_and_the_rest_dropped(
    path: str, tmp_path: Path
) -> None:
    script = f"head -c {STDERR_KEPT * 4} /dev/zero >&2; echo done"
    result = run(path, ["sh", "-c", script], tmp_path)
    assert result.returncode == 0 and result.stdout == b"done\n"
    assert len(result.stderr) == STDERR_KEPT


@pytest.mark.parametrize("path", PATHS)
def test_a_missing_program_is_file_not_found(path: str, tmp_path: Path) -> None:
    argv = ["plangate-no-such-program"]
    if path == "spawn":
        with pytest.raises(FileNotFoundError):
            capture(argv, tmp_path, ENV, input_data=None, timeout=5, output_limit=10,
                    cwd_as_argument="-C")
    else:
        with pytest.raises(FileNotFoundError):
            subprocess_capture(argv, tmp_path, ENV, input_data=None, timeout=5, output_limit=10)


def test_descriptors_are_not_leaked_into_the_child(tmp_path: Path) -> None:
    fd = os.open(tmp_path, os.O_RDONLY)
    os.set_inheritable(fd, True)
    try:
        result = run("spawn", ["sh", "-c", f"test -e /proc/self/fd/{fd} && echo leaked || echo ok"],
                     tmp_path)
    finally:
        os.close(fd)
    assert result.stdout == b"ok\n"
