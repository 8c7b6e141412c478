"""The git adapter against real repositories in temporary directories."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from plangate.errors import EnvironmentFailure
from plangate.git import Git, GitError, scrubbed_env
from support.repo import commit_all, git

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def _commit_body(message: str) -> bytes:
    return (
        f"tree {EMPTY_TREE}\n"
        "author A <a@example.invalid> 1700000000 +0000\n"
        "committer A <a@example.invalid> 1700000000 +0000\n\n"
        f"{message}\n"
    ).encode()


def _write_object(repo: Path, kind: str, body: bytes) -> str:
    proc = subprocess.run(
        ["git", "hash-object", "-t", kind, "-w", "--stdin"],
        cwd=repo,
        env=scrubbed_env(),
        input=body,
        capture_output=True,
        check=True,
    )
    object_id = proc.stdout.decode().strip()
    header = f"{kind} {len(body)}\0".encode()
    assert object_id == hashlib.sha1(header + body).hexdigest()  # noqa: S324 -- git's id
    return object_id


def test_head_of_a_fresh_repo(git_repo: Path) -> None:
    g = Git(git_repo)
    head = g.head()
    assert head == git(git_repo, "rev-parse", "HEAD")
    assert len(head) == 40
    state = g.head_state()
    assert state.branch == "refs/heads/main"
    assert not state.unborn and not state.detached
    assert g.toplevel() == git_repo.resolve()


def test_unborn_head(tmp_path: Path) -> None:
    repo = tmp_path / "unborn"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    g = Git(repo)
    state = g.head_state()
    assert state.unborn
    assert state.commit is None
    with pytest.raises(GitError) as info:
        g.head()
    assert info.value.code == "GIT_HEAD_UNBORN"
    assert isinstance(info.value, EnvironmentFailure)


def test_detached_head(git_repo: Path) -> None:
    first = git(git_repo, "rev-parse", "HEAD")
    commit_all(git_repo, "second")
    git(git_repo, "checkout", "-q", "--detach", first)
    state = Git(git_repo).head_state()
    assert state.detached
    assert state.branch is None
    assert state.commit == first
    assert Git(git_repo).head() == first


def test_not_a_git_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    g = Git(plain)
    for call in (g.head, g.head_state, g.toplevel):
        with pytest.raises(GitError) as info:
            call()
        assert info.value.code == "NOT_A_GIT_REPOSITORY"
        assert info.value.hint


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(GitError) as info:
        Git(tmp_path / "nowhere").head()
    assert info.value.code == "GIT_UNAVAILABLE"


def test_git_dir_in_the_environment_is_ignored(
    git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    git(other, "config", "user.name", "Other")
    git(other, "config", "user.email", "other@example.invalid")
    (other / "x").write_text("x")
    commit_all(other, "other repo")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    assert "GIT_DIR" not in scrubbed_env()
    g = Git(git_repo)
    assert g.head() == git(git_repo, "rev-parse", "HEAD")
    assert g.head() != git(other, "rev-parse", "HEAD")
    assert g.toplevel() == git_repo.resolve()


def test_resolve_full_abbreviated_and_symbolic(git_repo: Path) -> None:
    head = git(git_repo, "rev-parse", "HEAD")
    g = Git(git_repo)
    assert g.resolve_commit(head) == head
    assert g.resolve_commit(head[:7]) == head
    assert g.resolve_commit(head[:12]) == head
    assert g.resolve_commit("HEAD") == head
    assert g.resolve_commit("main") == head
    assert g.commit_exists(head[:7])


@pytest.mark.parametrize("rev", ["", "-h", "--all", "HEAD\x00x", "HEAD\n"])
def test_resolve_refuses_bad_revisions(git_repo: Path, rev: str) -> None:
    with pytest.raises(GitError) as info:
        Git(git_repo).resolve_commit(rev)
    assert info.value.code in ("GIT_BAD_REVISION", "GIT_COMMIT_UNKNOWN")


def test_resolve_unknown(git_repo: Path) -> None:
    g = Git(git_repo)
    head = git(git_repo, "rev-parse", "HEAD")
    unknown = "0" * 7 if not head.startswith("0000000") else "f" * 7
    for rev in (unknown, "f" * 40, "no-such-branch"):
        with pytest.raises(GitError) as info:
            g.resolve_commit(rev)
        assert info.value.code == "GIT_COMMIT_UNKNOWN"
    assert not g.commit_exists(unknown)


def test_resolve_refuses_a_tree_or_blob(git_repo: Path) -> None:
    blob = _write_object(git_repo, "blob", b"just a blob\n")
    tree = git(git_repo, "rev-parse", "HEAD^{tree}")
    g = Git(git_repo)
    for rev in (blob, blob[:10], tree):
        with pytest.raises(GitError) as info:
            g.resolve_commit(rev)
        assert info.value.code == "GIT_COMMIT_UNKNOWN"


def test_ambiguous_abbreviation(git_repo: Path) -> None:
    # Found offline: these two root commits share the 7-hex prefix ee26844.
    first = _write_object(git_repo, "commit", _commit_body("c13432"))
    second = _write_object(git_repo, "commit", _commit_body("c22984"))
    assert first[:7] == second[:7] == "ee26844"
    assert first != second
    g = Git(git_repo)
    with pytest.raises(GitError) as info:
        g.resolve_commit("ee26844")
    assert info.value.code == "GIT_COMMIT_AMBIGUOUS"
    # A longer prefix tells them apart.
    shared = next(i for i, (x, y) in enumerate(zip(first, second, strict=True)) if x != y)
    assert g.resolve_commit(first[: shared + 1]) == first
    assert g.resolve_commit(second) == second


def test_prefix_shared_with_a_blob_names_the_commit(git_repo: Path) -> None:
    # Commit "c14847" and blob "b25237" share 327ff45: only commits count.
    commit = _write_object(git_repo, "commit", _commit_body("c14847"))
    blob = _write_object(git_repo, "blob", b"b25237")
    assert commit[:7] == blob[:7] == "327ff45"
    assert Git(git_repo).resolve_commit("327ff45") == commit


def test_is_ancestor(git_repo: Path) -> None:
    first = git(git_repo, "rev-parse", "HEAD")
    second = commit_all(git_repo, "second")
    g = Git(git_repo)
    assert g.is_ancestor(first, second)
    assert g.is_ancestor(first, first)
    assert not g.is_ancestor(second, first)


def test_changed_paths_rename_counts_both_sides(git_repo: Path) -> None:
    (git_repo / "old.txt").write_text("same content\n" * 5)
    base = commit_all(git_repo, "add")
    git(git_repo, "mv", "old.txt", "new.txt")
    head = commit_all(git_repo, "rename")
    assert Git(git_repo).changed_paths(base, head) == ["new.txt", "old.txt"]


def test_changed_paths_mode_change(git_repo: Path) -> None:
    script = git_repo / "run.sh"
    script.write_text("#!/bin/sh\n")
    base = commit_all(git_repo, "add")
    script.chmod(0o755)
    head = commit_all(git_repo, "chmod")
    assert Git(git_repo).changed_paths(base, head) == ["run.sh"]


def test_changed_paths_symlink_retarget(git_repo: Path) -> None:
    (git_repo / "a").write_text("a")
    (git_repo / "b").write_text("b")
    (git_repo / "link").symlink_to("a")
    base = commit_all(git_repo, "add")
    (git_repo / "link").unlink()
    (git_repo / "link").symlink_to("b")
    head = commit_all(git_repo, "retarget")
    assert Git(git_repo).changed_paths(base, head) == ["link"]


def test_changed_paths_file_replaced_by_symlink(git_repo: Path) -> None:
    (git_repo / "f").write_text("f")
    base = commit_all(git_repo, "add")
    (git_repo / "f").unlink()
    (git_repo / "f").symlink_to("README.md")
    head = commit_all(git_repo, "symlink")
    assert Git(git_repo).changed_paths(base, head) == ["f"]


def test_changed_paths_submodule_pointer(git_repo: Path) -> None:
    first = git(git_repo, "rev-parse", "HEAD")
    git(git_repo, "update-index", "--add", "--cacheinfo", f"160000,{first},vendor/sub")
    git(git_repo, "commit", "-q", "-m", "add gitlink")
    base = git(git_repo, "rev-parse", "HEAD")
    git(git_repo, "update-index", "--cacheinfo", f"160000,{'1' * 40},vendor/sub")
    git(git_repo, "commit", "-q", "-m", "move gitlink")
    head = git(git_repo, "rev-parse", "HEAD")
    g = Git(git_repo)
    assert g.changed_paths(base, head) == ["vendor/sub"]
    entries = g.ls_tree(head, ["vendor/sub"])
    assert [(e.mode, e.kind) for e in entries] == [("160000", "commit")]
    with pytest.raises(GitError) as info:
        g.read_blob(head, "vendor/sub", 100)
    assert info.value.code == "GIT_PATH_NOT_A_FILE"


def test_changed_paths_unusual_names(git_repo: Path) -> None:
    base = git(git_repo, "rev-parse", "HEAD")
    names = ["sp ace.md", "\u65e5\u672c.md", "new\nline.md", "tab\t.md", '"quoted".md']
    for name in names:
        (git_repo / name).write_text("x")
    head = commit_all(git_repo, "odd names")
    assert Git(git_repo).changed_paths(base, head) == sorted(names)


def test_changed_paths_bad_revision(git_repo: Path) -> None:
    with pytest.raises(GitError) as info:
        Git(git_repo).changed_paths("f" * 40, "HEAD")
    assert info.value.code == "GIT_FAILED"


def test_staged_and_worktree_changes(git_repo: Path) -> None:
    (git_repo / "README.md").write_text("changed\n")
    (git_repo / "untracked.txt").write_text("u")
    (git_repo / "staged.txt").write_text("s")
    git(git_repo, "add", "staged.txt")
    g = Git(git_repo)
    assert g.staged_paths() == ["staged.txt"]
    assert g.worktree_changes() == ["README.md", "staged.txt", "untracked.txt"]


def test_worktree_rename_reports_both_sides(git_repo: Path) -> None:
    git(git_repo, "mv", "README.md", "READ.md")
    assert Git(git_repo).worktree_changes() == ["READ.md", "README.md"]


def test_staged_paths_in_unborn_repo(tmp_path: Path) -> None:
    repo = tmp_path / "u"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "a").write_text("a")
    git(repo, "add", "a")
    assert Git(repo).staged_paths() == ["a"]


def test_read_blob(git_repo: Path) -> None:
    (git_repo / "dir").mkdir()
    (git_repo / "dir" / "f.toml").write_bytes(b"x = 1\r\n")
    (git_repo / "ln").symlink_to("README.md")
    head = commit_all(git_repo, "files")
    g = Git(git_repo)
    assert g.read_blob(head, "dir/f.toml", 100) == b"x = 1\r\n"
    for path, code in (
        ("ln", "GIT_PATH_NOT_A_FILE"),
        ("dir", "GIT_PATH_NOT_A_FILE"),
        ("missing", "GIT_PATH_NOT_A_FILE"),
    ):
        with pytest.raises(GitError) as info:
            g.read_blob(head, path, 100)
        assert info.value.code == code
    with pytest.raises(GitError) as info:
        g.read_blob(head, "dir/f.toml", 3)
    assert info.value.code == "GIT_BLOB_TOO_LARGE"
    assert g.read_blob(head, "dir/f.toml", 7) == b"x = 1\r\n"  # exactly the limit: read
    with pytest.raises(GitError) as info:
        g.read_blob(head, "dir/f.toml", 6)
    assert info.value.code == "GIT_BLOB_TOO_LARGE"


def test_read_blob_takes_the_size_from_the_listing(git_repo: Path) -> None:
    """A name with spaces and a tab, and a large blob: the size is the listing's own."""
    (git_repo / "a b\tc.txt").write_bytes(b"y" * 300_001)
    head = commit_all(git_repo, "odd name")
    g = Git(git_repo)
    assert g.read_blob(head, "a b\tc.txt", 300_001) == b"y" * 300_001
    with pytest.raises(GitError) as info:
        g.read_blob(head, "a b\tc.txt", 300_000)
    assert info.value.code == "GIT_BLOB_TOO_LARGE"


def test_empty_tree_and_worktrees(git_repo: Path, tmp_path: Path) -> None:
    g = Git(git_repo)
    assert g.empty_tree() == EMPTY_TREE
    head = g.head()
    wt = tmp_path / "wt"
    g.add_worktree(wt, head)
    assert (wt / "README.md").read_text() == "# test repo\n"
    assert Git(wt).head_state().detached
    assert g.common_dir() == Git(wt).common_dir()
    assert g.git_dir() != Git(wt).git_dir()
    g.remove_worktree(wt)
    assert not wt.exists()


def test_resolve_commits_batch_matches_resolve_commit(git_repo: Path) -> None:
    first = git(git_repo, "rev-parse", "HEAD")
    second = commit_all(git_repo, "second")
    a = _write_object(git_repo, "commit", _commit_body("c13432"))
    _write_object(git_repo, "commit", _commit_body("c22984"))  # makes ee26844 ambiguous
    shared = _write_object(git_repo, "commit", _commit_body("c14847"))
    _write_object(git_repo, "blob", b"b25237")  # shares 327ff45 with that commit
    blob = _write_object(git_repo, "blob", b"plain blob\n")
    g = Git(git_repo)
    revs = [first, second[:9], "ee26844", a, "327ff45", blob, "f" * 40, "main", "--all", first]
    out = g.resolve_commits(revs)
    assert list(out) == list(dict.fromkeys(revs))
    for rev in out:
        try:
            expected = g.resolve_commit(rev)
        except GitError as exc:
            expected = exc.code
        got = out[rev]
        assert (got if isinstance(got, str) else got.code) == expected, rev
    assert out[first] == first
    assert out["327ff45"] == shared
    assert isinstance(out["ee26844"], GitError)
    assert out["ee26844"].code == "GIT_COMMIT_AMBIGUOUS"


def test_resolve_commits_outside_a_repository(tmp_path: Path) -> None:
    with pytest.raises(GitError) as info:
        Git(tmp_path).resolve_commits(["a" * 40])
    assert info.value.code == "NOT_A_GIT_REPOSITORY"
    assert Git(tmp_path).resolve_commits([]) == {}


def test_batch_check_answers_each_name_in_one_process(git_repo: Path) -> None:
    g = Git(git_repo)
    head = g.head()
    tree = git(git_repo, "rev-parse", "HEAD^{tree}").strip()
    answers = g.batch_check(
        [head, "refs/heads/main^{commit}", f"{head}:README.md", "refs/heads/main:nowhere",
         "refs/heads/absent^{commit}:README.md", "f" * 40]
    )
    assert answers is not None
    assert answers[0] == (head, "commit")
    assert answers[1] == (head, "commit")
    assert answers[2] is not None and answers[2][1] == "blob"
    assert answers[3:] == [None, None, None]
    assert g.batch_check([tree]) == [(tree, "tree")]
    assert g.batch_check([]) == []


@pytest.mark.parametrize("name", ["", "-x", "a\nb", "a\x00b"])
def test_batch_check_refuses_names_that_would_break_its_protocol(
    git_repo: Path, name: str
) -> None:
    with pytest.raises(GitError) as info:
        Git(git_repo).batch_check(["HEAD", name])
    assert info.value.code == "GIT_BAD_REVISION"


def test_batch_check_outside_a_repository_raises(tmp_path: Path) -> None:
    with pytest.raises(GitError) as info:
        Git(tmp_path).batch_check(["HEAD"])
    assert info.value.code == "NOT_A_GIT_REPOSITORY"


# -- cat-file --batch: objects handed over whole, trees parsed here ----------------------


def test_read_objects_hands_over_each_object_whole(git_repo: Path) -> None:
    from plangate.git import GitObject

    (git_repo / "notes.txt").write_bytes(b"line one\nline two\n")
    commit_all(git_repo, "notes")
    g = Git(git_repo)
    head = g.head()
    answers = g.read_objects([f"{head}^{{commit}}", "HEAD^{tree}", "HEAD:notes.txt", "f" * 40])
    assert answers is not None
    commit, tree, blob, absent = answers
    assert isinstance(commit, GitObject) and commit.kind == "commit"
    assert commit.object_id == head
    assert commit.data.startswith(b"tree " + git(git_repo, "rev-parse", "HEAD^{tree}").encode())
    assert tree is not None and tree.kind == "tree"
    assert blob == GitObject(git(git_repo, "rev-parse", "HEAD:notes.txt"), "blob",
                             b"line one\nline two\n")
    assert absent is None
    assert g.read_objects([]) == []
    for bad in ("HEAD\nHEAD", "-p", "", "HEAD\x00"):
        with pytest.raises(GitError) as info:
            g.read_objects([bad])
        assert info.value.code == "GIT_BAD_REVISION"


@pytest.mark.parametrize(
    "output",
    [
        b"",  # nothing
        b"%(blob)s blob 3\nabc",  # the body's newline missing
        b"%(blob)s blob 3\nabcd\n",  # a body longer than its size
        b"%(blob)s blob 4\nabc\n",  # shorter
        b"%(blob)s blob 3\nabc\nextra",  # trailing bytes
        b"%(blob)s blob\nabc\n",  # no size
        b"%(blob)s blob -3\nabc\n",  # not a size
        b"%(blob)s blob 0x3\nabc\n",
        b"%(blob)s thing 3\nabc\n",  # not an object type
        b"%(short)s blob 3\nabc\n",  # not a full id
        b"name ambiguous\n",
        b"other missing\n",  # "missing" for another name
    ],
)
def test_batch_output_that_is_not_one_answer_per_name_proves_nothing(output: bytes) -> None:
    from plangate.git import _batch_objects

    blob = "a" * 40
    data = output.replace(b"%(blob)s", blob.encode()).replace(b"%(short)s", b"a" * 12)
    assert _batch_objects(["name"], data) is None


def test_batch_output_answers_in_order() -> None:
    from plangate.git import GitObject, _batch_objects

    blob = "b" * 40
    data = b"one missing\n" + blob.encode() + b" blob 4\nab\nc\n"
    assert _batch_objects(["one", "two"], data) == [None, GitObject(blob, "blob", b"ab\nc")]


def _ls_tree(repo: Path, rev: str) -> dict[bytes, tuple[bytes, str]]:
    out = subprocess.run(["git", "ls-tree", "-z", rev], cwd=repo, env=scrubbed_env(),
                         capture_output=True, check=True).stdout
    entries: dict[bytes, tuple[bytes, str]] = {}
    for record in out.split(b"\x00"):
        if record:
            meta, _, name = record.partition(b"\t")
            mode, _kind, object_id = meta.split()
            entries[name] = (mode.lstrip(b"0"), object_id.decode())
    return entries


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_tree_entries_are_what_ls_tree_lists(tmp_path: Path, object_format: str) -> None:
    from plangate.git import tree_entries_of

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main", f"--object-format={object_format}")
    git(repo, "config", "user.name", "Test Author")
    git(repo, "config", "user.email", "author@example.invalid")
    (repo / "plain.txt").write_text("x\n")
    (repo / "tool.sh").write_text("#!/bin/sh\n")
    (repo / "tool.sh").chmod(0o755)
    (repo / "link").symlink_to("plain.txt")
    (repo / "dir").mkdir()
    (repo / "dir" / "inner.txt").write_text("y\n")
    (repo / "name with spaces and ü.txt").write_text("z\n")
    commit_all(repo, "entries")
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head},sub")
    git(repo, "commit", "-q", "-m", "a gitlink")
    answers = Git(repo).read_objects(["HEAD^{tree}"])
    assert answers is not None and answers[0] is not None
    entries = tree_entries_of(answers[0])
    assert entries == _ls_tree(repo, "HEAD")
    assert {mode for mode, _ in entries.values()} == {b"100644", b"100755", b"120000",
                                                     b"40000", b"160000"}


def test_a_tree_that_is_not_well_formed_proves_nothing() -> None:
    from plangate.git import GitObject, tree_entries_of

    tree_id = "c" * 40
    raw = bytes(range(20))
    good = b"100644 a.txt\x00" + raw + b"40000 dir\x00" + raw
    assert tree_entries_of(GitObject(tree_id, "tree", good)) == {
        b"a.txt": (b"100644", raw.hex()), b"dir": (b"40000", raw.hex())}
    assert tree_entries_of(GitObject(tree_id, "tree", b"")) == {}
    for bad in (
        good[:-1],  # a truncated id
        b"100664 a.txt\x00" + raw,  # a mode git does not write
        b"040000 dir\x00" + raw,  # zero-padded
        b"100644 a.txt\x00" + raw + b"100644 a.txt\x00" + raw,  # a repeated name
        b"100644 a/b\x00" + raw,  # a slash in a name
        b"100644 \x00" + raw,  # an empty name
        b"100644a.txt\x00" + raw,  # no space
        b"100644 a.txt" + raw,  # no NUL
    ):
        assert tree_entries_of(GitObject(tree_id, "tree", bad)) is None, bad
    assert tree_entries_of(GitObject(tree_id, "blob", good)) is None
    assert tree_entries_of(GitObject("c" * 64, "tree", good)) is None  # SHA-256 ids: 32 bytes


def test_toplevel_and_head_answer_as_the_two_calls(git_repo: Path, tmp_path: Path) -> None:
    (git_repo / "sub").mkdir()
    for where in (git_repo, git_repo / "sub"):
        door = Git(where)
        assert door.toplevel_and_head() == (door.toplevel(), door.head())
    unborn = tmp_path / "unborn"
    unborn.mkdir()
    git(unborn, "init", "-q", "-b", "main")
    assert Git(unborn).toplevel_and_head() == (unborn.resolve(), None)
    outside = tmp_path / "outside"
    outside.mkdir()
    with pytest.raises(GitError) as info:
        Git(outside).toplevel_and_head()
    assert info.value.code == "NOT_A_GIT_REPOSITORY"
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    with pytest.raises(GitError):
        Git(bare).toplevel_and_head()  # no working tree: as toplevel()


def test_changed_entries_name_links_and_gitlinks_by_the_new_mode(git_repo: Path) -> None:
    """The kinds come from the diff git computes: a link made, a link retargeted and a
    gitlink are named with their object ids; a link replaced by a file, a deleted link
    and a file made executable are plain changes."""
    (git_repo / "a").write_text("a")
    (git_repo / "was-link").symlink_to("a")
    (git_repo / "gone").symlink_to("a")
    (git_repo / "kept").symlink_to("a")
    (git_repo / "run.sh").write_text("#!/bin/sh\n")
    base = commit_all(git_repo, "add")
    (git_repo / "was-link").unlink()
    (git_repo / "was-link").write_text("now a file")
    (git_repo / "gone").unlink()
    (git_repo / "kept").unlink()
    (git_repo / "kept").symlink_to("/etc/passwd")
    (git_repo / "new-link").symlink_to("a")
    (git_repo / "run.sh").chmod(0o755)
    git(git_repo, "add", "-A")
    git(git_repo, "update-index", "--add", "--cacheinfo", f"160000,{base},vendor/sub")
    git(git_repo, "commit", "-q", "-m", "change")
    head = git(git_repo, "rev-parse", "HEAD")
    g = Git(git_repo)
    entries = g.changed_entries(base, head)
    assert entries.paths == g.changed_paths(base, head) == [
        "gone", "kept", "new-link", "run.sh", "vendor/sub", "was-link"]
    assert [path for path, _ in entries.links] == ["kept", "new-link"]
    objects = g.read_objects([object_id for _, object_id in entries.links])
    assert objects is not None
    assert [o.data for o in objects if o is not None] == [b"/etc/passwd", b"a"]
    assert entries.gitlinks == ["vendor/sub"]


def test_changed_entries_of_an_empty_diff(git_repo: Path) -> None:
    head = git(git_repo, "rev-parse", "HEAD")
    assert Git(git_repo).changed_entries(head, head) == ([], [], [])


@pytest.mark.parametrize(
    "raw",
    [
        b":100644 100644 " + b"a" * 40 + b" " + b"b" * 40 + b" M\x00f",  # no closing NUL
        b":100644 100644 " + b"a" * 40 + b" " + b"b" * 40 + b" M\x00",  # a record, no path
        b":000000 120000 " + b"0" * 40 + b" " + b"b" * 40 + b"\x00link\x00",  # no status
        b"100644 120000 " + b"0" * 40 + b" " + b"b" * 40 + b" A\x00link\x00",  # no colon
        b":000000 160000 " + b"0" * 40 + b" " + b"b" * 40 + b" A\x00\x00",  # empty path
    ],
)
def test_changed_entries_refuse_a_listing_they_cannot_read(raw: bytes) -> None:
    from plangate.git import _raw_entries

    with pytest.raises(GitError) as info:
        _raw_entries(raw)
    assert info.value.code == "GIT_BAD_OUTPUT"
