"""The trust root is read from a commit through git, never from the working tree."""

from __future__ import annotations

import os
import shutil
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


def _record(repo: Path, text: str) -> Path:
    record = repo / ".git" / "plangate" / "trust-branch"
    record.parent.mkdir(exist_ok=True)
    record.write_text(text)
    return record


def test_trust_branch_missing_or_mismatched(git_repo: Path, team: list[Key]) -> None:
    _record(git_repo, "trunk\n")
    _write_root(git_repo, team, extra='trust_branch = "trunk"')
    with pytest.raises(InputRejected) as info:
        local_root(Git(git_repo), git_repo)
    assert info.value.code == "AUTH_TRUST_BRANCH_MISSING"
    _write_root(git_repo, team)  # names main
    commit_all(git_repo, "root naming main, committed on main")
    git(git_repo, "branch", "trunk")
    with pytest.raises(InputRejected) as info:
        local_root(Git(git_repo), git_repo)
    assert info.value.code == "AUTH_TRUST_BRANCH_MISMATCH"


def test_the_trust_branch_is_the_recorded_one_not_the_working_trees(
    git_repo: Path, team: list[Key]
) -> None:
    _write_root(git_repo, team)
    commit_all(git_repo, "trust root on main")
    # An agent's branch whose own trust.toml names itself and drops signatures.
    git(git_repo, "checkout", "-q", "-b", "feature")
    (git_repo / ".plangate/trust.toml").write_bytes(
        trust_toml(R, A, require=False, extra='trust_branch = "feature"')
    )
    commit_all(git_repo, "self-naming trust root")
    local = local_root(Git(git_repo), git_repo)
    assert local.branch == "main"
    assert local.root is not None and local.root.require_signatures
    # A record names the trust branch; the working tree still has no say.
    _record(git_repo, "feature\n")
    local = local_root(Git(git_repo), git_repo)
    assert local.branch == "feature" and local.root is not None
    assert not local.root.require_signatures


@pytest.mark.parametrize("text", ["", "../main\n", "a b\n", "x" * 300])
def test_a_bad_record_is_refused(git_repo: Path, text: str) -> None:
    _record(git_repo, text)
    with pytest.raises(InputRejected) as info:
        local_root(Git(git_repo), git_repo)
    assert info.value.code == "AUTH_TRUST_BRANCH_RECORD_BAD"


def test_trust_init_records_the_branch_once(git_repo: Path) -> None:
    from plangate.authority import service
    from plangate.authority.source import recorded_trust_branch

    assert recorded_trust_branch(git_repo) == "main"
    service.init(git_repo, trust_branch="trunk", force=False)
    assert (git_repo / ".git/plangate/trust-branch").read_text() == "trunk\n"
    assert recorded_trust_branch(git_repo) == "trunk"
    with pytest.raises(InputRejected) as info:
        service.init(git_repo, trust_branch="main", force=True)
    assert info.value.code == "AUTH_TRUST_BRANCH_RECORDED"
    assert recorded_trust_branch(git_repo) == "trunk"


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


# -- the proof, in one batch read, that the trust branch holds no trust file -----------


def _proof(repo: Path) -> bool:
    from plangate.authority.source import no_root_probe, proves_no_trust_files

    probe = no_root_probe(repo)
    assert probe is not None
    answers = Git(repo).read_objects(probe)
    assert answers is not None
    return proves_no_trust_files(answers)


def _commit_tree_change(repo: Path, *index_args: str) -> None:
    git(repo, "update-index", *index_args)
    git(repo, "commit", "-q", "-m", "index change")


def _layout(repo: Path, name: str) -> None:
    plangate = repo / ".plangate"
    if name == "other files only":
        plangate.mkdir()
        (plangate / "protected-surfaces.toml").write_text("version = 1\n")
    elif name == "the root":
        plangate.mkdir()
        (plangate / "trust.toml").write_text("x\n")
        (plangate / "allowed_signers").write_text("x\n")
    elif name == "a lone revocation list":
        plangate.mkdir()
        (plangate / "revoked_signers").write_text("")
    elif name == "trust.toml a directory":
        (plangate / "trust.toml").mkdir(parents=True)
        (plangate / "trust.toml" / "x").write_text("x\n")
    elif name == "allowed_signers a link":
        plangate.mkdir()
        (plangate / "allowed_signers").symlink_to("elsewhere")
    elif name == ".plangate a file":
        plangate.write_text("x\n")
    elif name == ".plangate a link":
        plangate.symlink_to("elsewhere")
    if name != "nothing":
        commit_all(repo, name)
    if name == ".plangate a submodule":
        head = git(repo, "rev-parse", "HEAD").strip()
        _commit_tree_change(repo, "--add", "--cacheinfo", f"160000,{head},.plangate")
    if name == "trust.toml a submodule":
        head = git(repo, "rev-parse", "HEAD").strip()
        _commit_tree_change(repo, "--add", "--cacheinfo", f"160000,{head},.plangate/trust.toml")
        git(repo, "rm", "-q", "--cached", ".plangate/trust.toml")


LAYOUTS = {
    "nothing": True,
    "other files only": True,
    "the root": False,
    "a lone revocation list": False,
    "trust.toml a directory": False,
    "allowed_signers a link": False,
    ".plangate a file": False,
    ".plangate a link": False,
    ".plangate a submodule": False,
    "trust.toml a submodule": False,
}


@pytest.mark.parametrize(("name", "proven"), LAYOUTS.items())
def test_the_batch_proof_agrees_with_the_listing(git_repo: Path, name: str, proven: bool) -> None:
    _layout(git_repo, name)
    path = git_repo / ".plangate/trust.toml"  # the working tree holds no trust.toml
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.is_file() or path.is_symlink():
        path.unlink()
    assert _proof(git_repo) is proven
    listed = Git(git_repo).ls_tree_at_ref("refs/heads/main", [".plangate/trust.toml",
                                                               ".plangate/allowed_signers",
                                                               ".plangate/revoked_signers"])
    if proven:  # the proof never claims absence where the listing finds a trust file
        assert listed == []


def test_the_batch_proof_needs_every_tree_it_reads(git_repo: Path) -> None:
    _layout(git_repo, "other files only")
    assert _proof(git_repo) is True
    # The trust directory's tree object is gone: git answers "missing" for it, which is
    # not proof that the branch holds no trust file.
    tree = git(git_repo, "rev-parse", "main:.plangate").strip()
    (git_repo / ".git/objects" / tree[:2] / tree[2:]).unlink()
    assert _proof(git_repo) is False
    with pytest.raises(GitError):
        local_root(Git(git_repo), git_repo)
    # The root tree gone as well: still no proof.
    root_tree = git(git_repo, "rev-parse", "main^{tree}").strip()
    (git_repo / ".git/objects" / root_tree[:2] / root_tree[2:]).unlink()
    assert _proof(git_repo) is False


def test_the_batch_proof_needs_the_trust_branch_and_a_commit(git_repo: Path) -> None:
    git(git_repo, "branch", "-m", "main", "master")
    assert _proof(git_repo) is False
    tree = git(git_repo, "rev-parse", "HEAD^{tree}").strip()
    (git_repo / ".git/refs/heads/main").write_text(tree + "\n")
    assert _proof(git_repo) is False


def test_no_probe_when_the_working_tree_holds_a_trust_file(git_repo: Path) -> None:
    from plangate.authority.source import no_root_probe

    assert no_root_probe(git_repo) == [
        "refs/heads/main^{commit}", "refs/heads/main^{tree}", "refs/heads/main:.plangate"
    ]
    (git_repo / ".plangate").mkdir()
    (git_repo / ".plangate/trust.toml").mkdir()  # anything there: the exact path decides
    assert no_root_probe(git_repo) is None


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("nothing", (0, [], "unauthenticated")),
        ("other files only", (0, [], "unauthenticated")),
        ("trust.toml a directory", (0, [], "unauthenticated")),
        ("a lone revocation list", (1, ["AUTH_TRUST_INCOMPLETE"], None)),
    ],
)
def test_c3_verify_judges_each_trust_branch_layout_as_the_exact_reading_does(
    git_repo: Path, name: str, expected: tuple[int, list[str], str | None]
) -> None:
    import json

    from support.cli import run_cli_in
    from support.taskkit import approve_task, make_task

    _layout(git_repo, name)
    path = git_repo / ".plangate/trust.toml"
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    make_task(git_repo)
    approve_task(git_repo)
    result = run_cli_in(git_repo, "c3", "verify", "TASK-0001", "--json")
    out = json.loads(result.out)
    code, codes = result.code, [r["code"] for r in out["reasons"]]
    assert (code, codes) == expected[:2], out
    if expected[2] is not None:
        assert out["facts"]["authority"] == expected[2]
