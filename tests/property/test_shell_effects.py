"""Commands from a small grammar: whatever the classifier calls read-only changes no file.

Each generated command really runs (``bash -c``) in a scratch copy of a small
repository, confined with bubblewrap (only the scratch directory writable, no
network; without bubblewrap the test fails). The files are hashed before and after.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.hooks.shell import ShellKind, analyse
from support.bashbox import bwrap_or_fail
from support.branches import Branches

FILES = ("a.txt", "b.txt", "sub/c.txt", "-n", "-o.txt")
WORDS = ("a.txt", "b.txt", "sub/c.txt", "sub", "./-n", "out", "'*.txt'", "x")
PROGRAMS = (
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "sort",
    "uniq",
    "cut",
    "tr",
    "ls",
    "echo",
    "printf",
    "touch",
    "mkdir",
    "rm",
    "cp",
    "mv",
    "ln",
    "chmod",
    "sed",
    "tee",
    "find",
    "diff",
    "comm",
)
OPTIONS = (
    "-n",
    "-r",
    "-o",
    "-ro",
    "-c",
    "-f",
    "-s",
    "-d",
    "-i",
    "-x",
    "-p",
    "-l",
    "-u",
    "-e",
    "--",
    "-",
    "-v",
    "-R",
    "-t",
    "-1",
    "--output=out",
    "--in-place",
)
OPERATORS = (" && ", " ; ", " | ", " || ")
REDIRECTS = ("", "", "", " > out", " >> out", " 2>/dev/null", " > /dev/null", " < a.txt")


@st.composite
def commands(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        program = draw(st.sampled_from(PROGRAMS))
        args = draw(st.lists(st.sampled_from(OPTIONS + WORDS), max_size=4))
        if program == "sed":
            args = [draw(st.sampled_from(("'s/a/b/'", "'1d'", "'w out'", "'s/a/b/w out'"))), *args]
        parts.append(" ".join([program, *args]) + draw(st.sampled_from(REDIRECTS)))
    text = parts[0]
    for part in parts[1:]:
        text += draw(st.sampled_from(OPERATORS)) + part
    return text


def _snapshot(root: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for current, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(current) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = "link:" + os.readlink(path)
            elif path.is_file():
                out[rel] = (
                    f"{path.stat().st_mode:o}:" + hashlib.sha256(path.read_bytes()).hexdigest()
                )
            else:
                out[rel] = f"dir:{path.stat().st_mode:o}"
    return out


def _run(command: str, scratch: Path) -> None:
    # Bubblewrap is required: without it the test fails, never runs a command unconfined.
    argv = [
        bwrap_or_fail(),
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--bind",
        str(scratch),
        str(scratch),
        "--unshare-net",
        "--die-with-parent",
        "--chdir",
        str(scratch),
        "bash",
        "--noprofile",
        "--norc",
        "-c",
        command,
    ]
    subprocess.run(
        argv,
        cwd=scratch,
        capture_output=True,
        timeout=10,
        check=False,
        stdin=subprocess.DEVNULL,
        env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
    )


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("template")
    (root / "sub").mkdir()
    for name in FILES:
        (root / name).write_text(f"{name}\nb line\na line\n")
    return root


# Single commands writing through a redirect or a writing program, mixed with the free
# grammar, so that the classifier's WRITES answer is common enough to be tested.
writing_commands = st.builds(
    lambda program, args, redirect: " ".join([program, *args]) + redirect,
    st.sampled_from(("echo", "printf", "cat", "sort", "touch", "mkdir", "cp", "tee")),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=2),
    st.sampled_from((" > out", " >> out", " > sub/new.txt")),
)

# Single reading commands, mixed with the free grammar, so that the READ_ONLY answer is
# common enough to be tested.
reading_commands = st.builds(
    lambda program, args, redirect: " ".join([program, *args]) + redirect,
    st.sampled_from(("cat", "head", "tail", "wc", "grep", "sort", "ls", "diff")),
    st.lists(st.sampled_from(OPTIONS[:4] + WORDS), max_size=3),
    st.sampled_from(("", " < a.txt", " > /dev/null", " 2>/dev/null")),
)


def test_read_only_commands_change_no_file(template: Path, tmp_path_factory) -> None:
    seen = Branches()

    @settings(max_examples=60, deadline=None)
    @given(command=st.one_of(commands(), reading_commands))
    def check(command: str) -> None:
        seen.example()
        analysis = analyse(command)
        if not seen.reached("read-only", analysis.kind == ShellKind.READ_ONLY):
            return
        scratch = tmp_path_factory.mktemp("scratch")
        shutil.copytree(template, scratch, dirs_exist_ok=True, symlinks=True)
        before = _snapshot(scratch)
        _run(command, scratch)
        assert _snapshot(scratch) == before, command

    check()
    seen.assert_share("read-only")


def test_declared_writes_cover_every_changed_file(template: Path, tmp_path_factory) -> None:
    seen = Branches()

    @settings(max_examples=40, deadline=None)
    @given(command=st.one_of(commands(), writing_commands))
    def check(command: str) -> None:
        seen.example()
        analysis = analyse(command)
        if not seen.reached("writes", analysis.kind == ShellKind.WRITES):
            return
        scratch = tmp_path_factory.mktemp("scratch")
        shutil.copytree(template, scratch, dirs_exist_ok=True, symlinks=True)
        before = _snapshot(scratch)
        _run(command, scratch)
        after = _snapshot(scratch)
        changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
        declared = {os.path.normpath(w.path) for w in analysis.writes}
        declared |= {os.path.normpath(os.path.join(d, b)) for d, b, _s in analysis.into_dir}
        for path in changed:
            assert any(path == d or path.startswith(d + "/") for d in declared), (command, path)

    check()
    seen.assert_share("writes")


# -- sed scripts against GNU sed itself ------------------------------------------------------

SED_ADDRESSES = ("", "", "1", "$", "/a/", "1,2", "0~2", "/a/I,+1", "2!")
SED_COMMANDS = (
    "p",
    "d",
    "b",
    "b y",
    "t",
    "T",
    ":x",
    "v",
    "v 4.2",
    "q",
    "=",
    "n",
    "N",
    "x",
    "G",
    "h",
    "z",
    "F",
    "l",
    "s/a/b/",
    "s/a/b/g",
    "s/a/b/w W1",
    "s/a/b/ w W2",
    "w W3",
    "W W4",
    "r R",
    "a T",
    "i\\",
    "c T",
    "y/a/b/",
    "e touch E1",
    "s/a/touch E2/e",
    "{",
    "}",
    "#c",
)
SED_SEPARATORS = (";", "\n", " ", "\t", "; ", "")


@st.composite
def sed_scripts(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 5))):
        parts.append(draw(st.sampled_from(SED_ADDRESSES)) + draw(st.sampled_from(SED_COMMANDS)))
        parts.append(draw(st.sampled_from(SED_SEPARATORS)))
    return "".join(parts)


def _gnu_sed() -> bool:
    found = shutil.which("sed")
    if found is None:
        return False
    out = subprocess.run([found, "--version"], capture_output=True, text=True, check=False)
    return "GNU sed" in out.stdout


@pytest.mark.skipif(not _gnu_sed(), reason="needs GNU sed")
def test_sed_scripts_the_classifier_reads_write_no_file() -> None:
    """GNU sed creates a 'w' file while it reads the script and runs 'e' on a line:
    a script the classifier accepts as a reader must leave the directory as it was."""
    seen = Branches()

    @settings(max_examples=300, deadline=None)
    @given(script=sed_scripts())
    def check(script: str) -> None:
        seen.example()
        command = f"sed -e {shlex.quote(script)} in.txt"
        if not seen.reached("read-only", analyse(command).kind == ShellKind.READ_ONLY):
            return
        with tempfile.TemporaryDirectory() as scratch:
            root = Path(scratch)
            (root / "in.txt").write_text("a\nb\na\n")
            (root / "R").write_text("r\n")
            # A loop ('b' back to a label) times out: what it wrote so far is still checked.
            with contextlib.suppress(subprocess.TimeoutExpired):
                subprocess.run(
                    ["sed", "-e", script, "in.txt"],
                    cwd=root,
                    capture_output=True,
                    timeout=5,
                    check=False,
                    stdin=subprocess.DEVNULL,
                    env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
                )
            assert sorted(p.name for p in root.iterdir()) == ["R", "in.txt"], script

    check()
    seen.assert_share("read-only")
