"""Run a command line under real /bin/bash in a throwaway bubblewrap box, over a copy
of a small real git repository, and say which paths of the copy it changed.

The differential test (tests/property/test_shell_bash_differential.py) lets bash
judge the shell classifier: a command the classifier calls read-only must leave the
tree as it was; one it calls a write must change only the paths it names.

The box: new user, mount, PID, network, IPC, UTS and cgroup namespaces (no network),
the system directories bound read-only, an empty ``/tmp`` and ``$HOME``, the copy of
the repository bound writable at :data:`BOX_REPO`, and a bare repository standing
for the remote ``origin`` bound writable beside it (outside the compared tree).
Nothing else of the machine is visible.

The tree is compared by every file, directory and link in the copy, by kind, mode
and content (a link by its target), ``.git`` included, except three parts of
``.git`` no ref lives in, which are not part of the comparison:

- ``.git/objects/``: content-addressed; an object added there names nothing;
- ``.git/index``: the staging area, which ``git status`` refreshes and ``git add``
  fills; what it holds is judged when it is committed;
- ``.git/refs/remotes/`` and their reflogs: a push to a remote's name records there
  what the remote now holds; the push itself is judged by the pre-push hook.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from plangate.records import NamedTuple

BWRAP = "/usr/bin/bwrap"
BASH = "/bin/bash"
BOX_ROOT = "/tmp/box"
BOX_REPO = f"{BOX_ROOT}/repo"
BOX_REMOTE = f"{BOX_ROOT}/origin.git"
RUN_SECONDS = 20
"""A command still running after this long is killed (then the tree is compared as
it is): a bound on a stuck example, not a measure of anything."""

PROTECTED = (
    "CLAUDE.md",
    ".claude/settings.json",
    "approvals/c3.json",
    ".git/hooks/pre-push",
)
"""Files of the template repository that an agent must never write unseen."""

_NOT_COMPARED = (".git/objects/", ".git/index", ".git/refs/remotes/", ".git/logs/refs/remotes/")

_SYSTEM_DIRECTORIES = ("/usr", "/etc")
_SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")

_GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Box",
    "GIT_AUTHOR_EMAIL": "box@example.invalid",
    "GIT_COMMITTER_NAME": "Box",
    "GIT_COMMITTER_EMAIL": "box@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


class Entry(NamedTuple):
    """One path of a tree: its kind, permission bits and content digest (a link: its target)."""

    kind: str
    mode: int
    digest: str


Snapshot = Mapping[str, Entry]


class Outcome(NamedTuple):
    """What one run did: the paths that differ, and bash's exit status and output."""

    changed: frozenset[str]
    status: int
    output: str
    created_directories: frozenset[str] = frozenset()
    """Changed paths that were absent before and are directories after."""


def bwrap_or_fail() -> str:
    """The bubblewrap binary; its absence fails the test (never a skip)."""
    found = shutil.which("bwrap") or (BWRAP if os.path.exists(BWRAP) else None)
    if found is None:
        pytest.fail(
            "bubblewrap (bwrap) is required to run commands under real bash in a box: "
            "install it (apt-get install bubblewrap; scripts/test.sh installs it)"
        )
    return found


def _git(cwd: Path, *args: str) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "LANG": "C.UTF-8", **_GIT_ENV}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def make_template(where: Path) -> tuple[Path, Path]:
    """A small real repository (three commits; branches ``main``, ``topic`` and ``work``,
    checked out; tag ``v1``; a ``pre-push`` hook; the protected files) and a bare
    ``origin`` for it."""
    repo = where / "repo"
    remote = where / "origin.git"
    repo.mkdir(parents=True)
    _git(where, "init", "-q", "--bare", "-b", "main", str(remote))
    _git(repo, "init", "-q", "-b", "main")
    for sample in (repo / ".git" / "hooks").iterdir():
        sample.unlink()  # the sample hooks only make every copy slower
    files = {
        "CLAUDE.md": "# Instructions\n",
        ".claude/settings.json": '{"hooks": {}}\n',
        "approvals/c3.json": '{"verdict": "approved"}\n',
        "src/a.py": "a = 1\n",
        "src/b.py": "b = 2\n",
        "docs/notes.md": "notes\n",
    }
    for index, (name, text) in enumerate(files.items()):
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        _git(repo, "add", name)
        if index in (1, 3, 5):
            _git(repo, "commit", "-q", "-m", f"commit {index}")
    hook = repo / ".git" / "hooks" / "pre-push"
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o755)
    _git(repo, "branch", "topic", "HEAD~1")
    # The agent works on a branch of its own: 'main', the trust branch, is not checked
    # out, so git lets a command move it.
    _git(repo, "checkout", "-q", "-b", "work")
    _git(repo, "tag", "v1", "HEAD~2")
    _git(repo, "remote", "add", "origin", BOX_REMOTE)
    _git(repo, "config", "user.name", "Box")
    _git(repo, "config", "user.email", "box@example.invalid")
    (repo / "untracked.txt").write_text("untracked\n")
    return repo, remote


def snapshot(root: Path) -> dict[str, Entry]:
    """Every path under ``root`` (relative, ``/``-separated) with kind, mode and digest."""
    out: dict[str, Entry] = {}
    for directory, subdirs, files in os.walk(root):
        base = os.path.relpath(directory, root)
        for name in [*subdirs, *files]:
            full = os.path.join(directory, name)
            rel = name if base == "." else f"{base}/{name}".replace(os.sep, "/")
            if _skipped(rel):
                continue
            info = os.lstat(full)
            mode = stat.S_IMODE(info.st_mode)
            if stat.S_ISLNK(info.st_mode):
                out[rel] = Entry("link", 0, os.readlink(full))
            elif stat.S_ISDIR(info.st_mode):
                out[rel] = Entry("dir", mode, "")
            elif stat.S_ISREG(info.st_mode):
                with open(full, "rb") as handle:
                    out[rel] = Entry("file", mode, hashlib.sha256(handle.read()).hexdigest())
            else:
                out[rel] = Entry("other", mode, str(stat.S_IFMT(info.st_mode)))
        subdirs[:] = [d for d in subdirs if not os.path.islink(os.path.join(directory, d))]
    return out


def _skipped(rel: str) -> bool:
    return any(rel == p.rstrip("/") or rel.startswith(p) for p in _NOT_COMPARED)


def changed_paths(before: Snapshot, after: Snapshot) -> frozenset[str]:
    """Paths added, removed or altered (kind, mode or content)."""
    return frozenset(p for p in {*before, *after} if before.get(p) != after.get(p))


class BashBox:
    """A template repository and the means to run commands over fresh copies of it."""

    def __init__(self, where: Path) -> None:
        self.bwrap = bwrap_or_fail()
        self.where = where
        self.template, self.remote_template = make_template(where / "template")
        self.before = snapshot(self.template)
        self.runs = 0

    def run(self, command: str) -> Outcome:
        """Run ``command`` with ``bash -c`` in a new box over a fresh copy of the template."""
        self.runs += 1
        scratch = Path(tempfile.mkdtemp(prefix="run-", dir=self.where))
        try:
            repo = scratch / "repo"
            remote = scratch / "origin.git"
            shutil.copytree(self.template, repo, symlinks=True)
            shutil.copytree(self.remote_template, remote, symlinks=True)
            status, output = self._bash(command, repo, remote)
            after = snapshot(repo)
            changed = changed_paths(self.before, after)
            created = frozenset(
                p for p in changed if p not in self.before and after[p].kind == "dir"
            )
            return Outcome(changed, status, output, created)
        finally:
            _remove(scratch)

    def _bash(self, command: str, repo: Path, remote: Path) -> tuple[int, str]:
        argv = [self.bwrap, "--unshare-all", "--die-with-parent", "--new-session"]
        for directory in _SYSTEM_DIRECTORIES:
            argv += ["--ro-bind", directory, directory]
        for link in _SYSTEM_LINKS:
            if os.path.islink(link):
                argv += ["--symlink", os.readlink(link), link]
            elif os.path.isdir(link):
                argv += ["--ro-bind", link, link]
        argv += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        argv += ["--dir", f"{BOX_ROOT}/home", "--bind", str(repo), BOX_REPO]
        argv += ["--bind", str(remote), BOX_REMOTE, "--chdir", BOX_REPO, "--clearenv"]
        env = {"PATH": "/usr/bin:/bin", "HOME": f"{BOX_ROOT}/home", "LANG": "C.UTF-8"}
        for name, value in {**env, **_GIT_ENV}.items():
            argv += ["--setenv", name, value]
        argv += [BASH, "-c", command]
        try:
            done = subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=RUN_SECONDS,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return -1, "killed: still running"
        if done.returncode != 0 and b"bwrap:" in done.stderr[:200]:
            pytest.fail(f"bubblewrap could not start a box: {done.stderr.decode(errors='replace')}")
        return done.returncode, (done.stdout + done.stderr).decode("utf-8", "replace")[-2000:]


def _remove(path: Path) -> None:
    # A command may leave a directory without write or search permission.
    for directory, subdirs, _files in os.walk(path):
        for name in subdirs:
            full = os.path.join(directory, name)
            if not os.path.islink(full):
                os.chmod(full, 0o700)
    shutil.rmtree(path, ignore_errors=True)


def covered(outcome: Outcome, declared: Iterable[str], *, commits: bool) -> list[str]:
    """The changed paths no declared write covers (empty when the declaration holds).

    A declared path covers itself and everything below it; a declared ``.git`` at any
    depth covers the repository's ``.git`` (the hook guards ``.git`` at every depth);
    a directory created above a declared path is one the write made on its way
    (``mkdir -p a/b`` makes ``a``). A commit changes ``.git`` by design: it is judged
    by the paths it commits.
    """
    changed = outcome.changed
    # An absolute path into the copy is the path the box shows it at.
    inside = [p[len(BOX_REPO) + 1 :] if p.startswith(BOX_REPO + "/") else p for p in declared]
    names = [os.path.normpath(p) for p in inside if p and not os.path.isabs(p)]
    names = [n for n in names if not n.startswith("..")]
    git_declared = commits or any(n == ".git" or n.endswith("/.git") for n in names)
    out: list[str] = []
    for path in sorted(changed):
        if git_declared and (path == ".git" or path.startswith(".git/")):
            continue
        if any(path == n or path.startswith(n + "/") for n in names):
            continue
        if path in outcome.created_directories and any(n.startswith(path + "/") for n in names):
            continue
        out.append(path)
    return out
