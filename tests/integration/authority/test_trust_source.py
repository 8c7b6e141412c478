"""The trust root is read from a commit through git, never from the working tree."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plangate.authority.source import local_root, root_at
from plangate.errors import InputRejected
from plangate.git import Git, GitError
from support.keys import Key, allowed_signers, make_key, trust_toml
from support.repo import commit_all, git

R = ["alice@example.com", "bob@example.com"]
A = ["carol@example.com"]


@pytest.fixture
def team(tmp_path: Path) -> list[Key]:
    return [make_key(tmp_path / "keys", p) for p in (*R, *A)]


def _write_root(repo: Path, team: list[Key], **kw: object) -> None:
    (repo / ".plangate").mkdir(exist_ok=True)
    (repo / ".plangate/trust.toml").write_bytes(trust_toml(R, A, **kw))  # type: ignore[arg-type]
    (repo / ".plangate/allowed_signers").write_bytes(allowed_signers(*team))


def test_no_trust_root_means_none(git_repo: Path) -> None:
    g = Git(git_repo)
    assert root_at(g, g.head()) is None
    assert local_root(g, git_repo).root is None


def test_root_at_a_commit(git_repo: Path, team: list[Key]) -> None:
    _write_root(git_repo, team)
    sha = commit_all(git_repo, "trust root")
    root = root_at(Git(git_repo), sha)
    assert root is not None and root.commit == sha
    assert root.config.holders("approver") == ("carol@example.com",)
    assert root.digest.startswith("sha256:")


def test_the_working_tree_never_counts(git_repo: Path, team: list[Key]) -> None:
    _write_root(git_repo, team)
    commit_all(git_repo, "trust root")
    # An uncommitted edit (say, an agent adding its own key) is not the root.
    (git_repo / ".plangate/trust.toml").write_bytes(
        trust_toml(R, ["mallory@example.com"], extra='trust_branch = "main"')
    )
    local = local_root(Git(git_repo), git_repo)
    assert local.root is not None
    assert local.root.config.holders("approver") == ("carol@example.com",)


def test_a_feature_branch_reads_the_trust_branch(git_repo: Path, team: list[Key]) -> None:
    _write_root(git_repo, team)
    commit_all(git_repo, "trust root")
    git(git_repo, "checkout", "-q", "-b", "feature")
    (git_repo / ".plangate/allowed_signers").write_bytes(b"")
    commit_all(git_repo, "drop keys on the feature branch")
    local = local_root(Git(git_repo), git_repo)
    assert local.root is not None and len(local.root.signers.entries) == 3


def test_trust_branch_missing_or_mismatched(git_repo: Path, team: list[Key]) -> None:
    _write_root(git_repo, team, extra='trust_branch = "trunk"')
    with pytest.raises(InputRejected) as info:
        local_root(Git(git_repo), git_repo)
    assert info.value.code == "AUTH_TRUST_BRANCH_MISSING"
    commit_all(git_repo, "root naming trunk, committed on main")
    git(git_repo, "branch", "trunk")
    (git_repo / ".plangate/trust.toml").write_bytes(trust_toml(R, A))  # names main locally
    with pytest.raises(InputRejected) as info:
        local_root(Git(git_repo), git_repo)
    assert info.value.code == "AUTH_TRUST_BRANCH_MISMATCH"


def test_incomplete_and_not_a_file(git_repo: Path, team: list[Key]) -> None:
    (git_repo / ".plangate").mkdir()
    (git_repo / ".plangate/trust.toml").write_bytes(trust_toml(R, A))
    sha = commit_all(git_repo, "only trust.toml")
    with pytest.raises(InputRejected) as info:
        root_at(Git(git_repo), sha)
    assert info.value.code == "AUTH_TRUST_INCOMPLETE"
    os.symlink("trust.toml", git_repo / ".plangate/allowed_signers")
    sha = commit_all(git_repo, "a symlink in its place")
    with pytest.raises(InputRejected) as info:
        root_at(Git(git_repo), sha)
    assert info.value.code == "AUTH_TRUST_NOT_A_FILE"


def test_a_role_without_a_key(git_repo: Path, team: list[Key]) -> None:
    _write_root(git_repo, team[:2])
    sha = commit_all(git_repo, "carol has no key")
    with pytest.raises(InputRejected) as info:
        root_at(Git(git_repo), sha)
    assert info.value.code == "AUTH_PRINCIPAL_WITHOUT_KEY"


_PARSERS = ("plangate.authority.root", "plangate.authority.signers", "plangate.authority.trustfile")
_LOADED = (
    "import sys\n"
    "from pathlib import Path\n"
    "from plangate.authority.source import local_root\n"
    "from plangate.git import Git\n"
    "repo = Path(sys.argv[1])\n"
    "local = local_root(Git(repo), repo)\n"
    f"print(local.root is not None, sorted(m for m in {_PARSERS!r} if m in sys.modules))\n"
)


def _loaded_parsers(repo: Path) -> str:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", _LOADED, str(repo)], capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3] / "src")},
    )
    return proc.stdout.strip()


def test_without_a_trust_root_no_parser_is_loaded(git_repo: Path) -> None:
    # Most repositories have no trust root: asking must not load the signature code.
    assert _loaded_parsers(git_repo) == "False []"


def test_a_committed_trust_root_is_parsed(git_repo: Path, team: list[Key]) -> None:
    _write_root(git_repo, team)
    commit_all(git_repo, "trust root")
    assert _loaded_parsers(git_repo) == "True " + str(sorted(_PARSERS))


# -- the one-process answer when the working tree holds no trust root ------------------


def test_a_committed_root_counts_when_the_working_tree_lost_its_files(
    git_repo: Path, team: list[Key]
) -> None:
    _write_root(git_repo, team)
    commit_all(git_repo, "trust root")
    git(git_repo, "checkout", "-q", "-b", "feature")
    git(git_repo, "rm", "-q", "-r", ".plangate")
    commit_all(git_repo, "a feature branch without the trust files")
    assert not (git_repo / ".plangate/trust.toml").exists()
    local = local_root(Git(git_repo), git_repo)
    assert local.root is not None and len(local.root.signers.entries) == 3


def test_a_lone_revocation_list_on_the_branch_is_still_refused(git_repo: Path) -> None:
    (git_repo / ".plangate").mkdir()
    (git_repo / ".plangate/revoked_signers").write_bytes(b"")
    commit_all(git_repo, "revoked_signers alone")
    git(git_repo, "rm", "-q", "--cached", ".plangate/revoked_signers")
    (git_repo / ".plangate/revoked_signers").unlink()
    with pytest.raises(InputRejected) as info:
        local_root(Git(git_repo), git_repo)
    assert info.value.code == "AUTH_TRUST_INCOMPLETE"


def test_no_trust_branch_or_one_that_names_no_commit_means_no_root(git_repo: Path) -> None:
    git(git_repo, "branch", "-m", "main", "master")
    assert local_root(Git(git_repo), git_repo).root is None
    tree = git(git_repo, "rev-parse", "HEAD^{tree}").strip()
    # git refuses to point a branch at a tree; a hand-written ref file does it.
    (git_repo / ".git/refs/heads/main").write_text(tree + "\n")
    assert local_root(Git(git_repo), git_repo).root is None


def test_listing_at_a_ref(git_repo: Path, team: list[Key]) -> None:
    g = Git(git_repo)
    assert g.ls_tree_at_ref("refs/heads/main", [".plangate/trust.toml"]) == []
    assert g.ls_tree_at_ref("refs/heads/absent", [".plangate/trust.toml"]) is None
    _write_root(git_repo, team)
    commit_all(git_repo, "trust root")
    listed = g.ls_tree_at_ref("refs/heads/main", [".plangate/trust.toml", "README.md"])
    assert listed is not None
    assert sorted(e.path for e in listed) == [".plangate/trust.toml", "README.md"]
    for bad in ("main", "-refs/heads/main", "refs/heads/main\x00"):
        with pytest.raises(GitError):
            g.ls_tree_at_ref(bad, ["README.md"])
