"""git's hooks judge with the committed protected-surface definition as well.

The working tree's ``.plangate/protected-surfaces.toml`` can be weakened by a tool no
agent hook saw (the reason git's hooks judge effects, not tool names). ``pre-commit``
and ``pre-push`` therefore join it with the definition committed where the change starts
(what ``ci check`` judges with): a pattern removed only in the working tree still
protects at commit and push. Real git runs the installed hooks.
"""

from __future__ import annotations

from pathlib import Path

from plangate.hooks.install import apply
from support.repo import commit_all, git, git_as_person
from support.taskkit import PLAN_MD, approve_task, make_task

PLAN = PLAN_MD.replace("- `src/app.py`\n", "- `src/app.py`\n- `config/**`\n")
EXTRA = (
    '\n[[surface]]\npattern = "config/secrets/**"\nclass = "human-owned"\n'
    'reason = "deploy keys"\n'
)
AGENT = {"PLANGATE_TASK": "TASK-0001", "CLAUDECODE": "1"}


def _definition(repo: Path) -> Path:
    return repo / ".plangate" / "protected-surfaces.toml"


def _repo(repo: Path, *, install: bool = True) -> Path:
    """A definition protecting config/secrets/** committed, a task allowing config/**
    approved, git's hooks installed."""
    from plangate.surfaces import bundled_template_bytes

    text = "\n".join(line for line in bundled_template_bytes().decode().splitlines()
                     if "PLANGATE-BUNDLED-TEMPLATE" not in line)
    _definition(repo).parent.mkdir(exist_ok=True)
    _definition(repo).write_text(text + "\n" + EXTRA)
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("x = 1\n")
    (repo / "config").mkdir()
    (repo / "config" / "app.toml").write_text("a = 1\n")
    commit_all(repo, "surfaces and app")
    make_task(repo, plan_md=PLAN)
    approve_task(repo)
    commit_all(repo, "approved task")
    if install:
        apply(repo, ["git"], install=True)
    return repo


def _weaken(repo: Path) -> None:
    """What an unhooked tool does: the pattern leaves the working tree's definition."""
    text = _definition(repo).read_text()
    assert EXTRA in text
    _definition(repo).write_text(text.replace(EXTRA, "\n"))


def test_a_pattern_removed_only_in_the_working_tree_still_protects_a_commit(
    git_repo: Path,
) -> None:
    repo = _repo(git_repo)
    _weaken(repo)
    (repo / "config" / "secrets").mkdir()
    (repo / "config" / "secrets" / "deploy.key").write_text("k\n")
    git(repo, "add", "config/secrets/deploy.key")
    denied = git_as_person(repo, "commit", "-q", "-m", "key", env_extra=AGENT)
    assert denied.returncode == 1, denied.stderr
    assert b"HOOK_PROTECTED_SURFACE" in denied.stderr
    assert b"config/secrets/deploy.key" in denied.stderr
    # The same task's other work is still plain work.
    git(repo, "reset", "-q")
    (repo / "config" / "app.toml").write_text("a = 2\n")
    git(repo, "add", "config/app.toml")
    allowed = git_as_person(repo, "commit", "-q", "-m", "config", env_extra=AGENT)
    assert allowed.returncode == 0, allowed.stderr


def test_without_the_weakening_the_working_tree_definition_judges_as_before(
    git_repo: Path,
) -> None:
    """The committed and the working tree's definitions agree: one definition judges."""
    repo = _repo(git_repo)
    (repo / "config" / "secrets").mkdir()
    (repo / "config" / "secrets" / "deploy.key").write_text("k\n")
    git(repo, "add", "config/secrets/deploy.key")
    denied = git_as_person(repo, "commit", "-q", "-m", "key", env_extra=AGENT)
    assert denied.returncode == 1 and b"HOOK_PROTECTED_SURFACE" in denied.stderr


def test_a_pattern_added_only_in_the_working_tree_protects_too(git_repo: Path) -> None:
    """More, never less: a person's uncommitted pattern also protects their commit."""
    repo = _repo(git_repo)
    text = _definition(repo).read_text()
    _definition(repo).write_text(
        text + '\n[[surface]]\npattern = "config/app.toml"\nclass = "human-owned"\n'
        'reason = "new"\n')
    (repo / "config" / "app.toml").write_text("a = 3\n")
    git(repo, "add", "config/app.toml")
    denied = git_as_person(repo, "commit", "-q", "-m", "config", env_extra=AGENT)
    assert denied.returncode == 1 and b"HOOK_PROTECTED_SURFACE" in denied.stderr


def test_a_push_is_judged_with_the_remote_commits_definition(
    git_repo: Path, tmp_path: Path
) -> None:
    repo = _repo(git_repo, install=False)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    assert git_as_person(repo, "push", "-q", "origin", "main").returncode == 0
    apply(repo, ["git"], install=True)
    _weaken(repo)
    (repo / "config" / "secrets").mkdir()
    (repo / "config" / "secrets" / "deploy.key").write_text("k\n")
    git(repo, "add", "config/secrets/deploy.key")
    skipped = git_as_person(repo, "commit", "-q", "--no-verify", "-m", "key")
    assert skipped.returncode == 0, skipped.stderr
    pushed = git_as_person(repo, "push", "-q", "origin", "main", env_extra=AGENT)
    assert pushed.returncode == 1, pushed.stderr
    assert b"HOOK_PROTECTED_SURFACE" in pushed.stderr


def test_a_committed_definition_that_cannot_be_used_leaves_none(git_repo: Path) -> None:
    """A definition committed as a link cannot be read at HEAD: the commit is refused
    (no definition), never judged by the working tree's alone."""
    repo = _repo(git_repo)
    definition = _definition(repo)
    kept = definition.read_text()
    definition.unlink()
    definition.symlink_to("elsewhere.toml")
    assert git_as_person(repo, "add", str(definition)).returncode == 0
    assert git_as_person(repo, "commit", "-q", "--no-verify", "-m", "odd").returncode == 0
    definition.unlink()
    definition.write_text(kept)  # the working tree holds a good definition again
    (repo / "config" / "app.toml").write_text("a = 4\n")
    git(repo, "add", "config/app.toml")
    denied = git_as_person(repo, "commit", "-q", "-m", "config", env_extra=AGENT)
    assert denied.returncode == 1, denied.stderr
    assert b"HOOK_SURFACES_UNAVAILABLE" in denied.stderr
    assert b"cannot be used" in denied.stderr
