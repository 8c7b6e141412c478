"""The single git adapter. Only this module runs git.

Every call passes an argument list (never a shell), uses ``-z`` where git
prints paths, runs with every inherited ``GIT_*`` variable removed (so a
hostile ``GIT_DIR`` or ``GIT_INDEX_FILE`` cannot redirect a check), and turns
failures into :class:`GitError` with a reason code and a hint.

Git must not be able to lie to PlanGate, whatever the repository holds:

- replacement objects are off (``--no-replace-objects`` and
  ``GIT_NO_REPLACE_OBJECTS=1``): a ``refs/replace/<commit>`` ref, which an
  ordinary ``git fetch`` or ``git replace`` can create, would otherwise make
  git report another commit's tree and parents;
- hooks never run (``core.hooksPath`` points at an empty place) and the file
  system monitor is off (``core.fsmonitor=false``): both run programs the
  repository names;
- diffs never run external diff or textconv drivers (``--no-ext-diff``,
  ``--no-textconv``);
- where ancestry decides something, a repository with grafts
  (``info/grafts``) or a shallow history cannot answer truthfully:
  :meth:`Git.is_ancestor` raises ``GIT_HISTORY_UNDECIDABLE``;
- an abbreviated object id is resolved through the object database only,
  never as a branch or tag that happens to carry the same name;
- a name is never redirected (:meth:`Git.resolve_commit`): ``main`` means the
  branch ``refs/heads/main`` (``origin/main`` the remote-tracking branch), and
  a tag or another ref carrying the same name makes it ``GIT_REF_AMBIGUOUS``;
- filter drivers (clean, smudge, process) configured by the repository never
  run: every command that touches the working tree runs with each configured
  driver switched off (:data:`WORKTREE_COMMANDS`);
- index bits that hide a file's changes (assume-unchanged, skip-worktree)
  cannot hide them from PlanGate: :meth:`Git.worktree_changes` reports such a
  path as changed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from plangate._spawn import SpawnOutputTooLarge, SpawnTimeout, capture
from plangate.errors import EnvironmentFailure
from plangate.records import NamedTuple
from plangate.shapes import is_full_sha, is_short_sha

if TYPE_CHECKING:
    import subprocess
    from collections.abc import Sequence

GIT_TIMEOUT_SECONDS = 60

GIT_OUTPUT_LIMIT = 512 * 1024 * 1024
"""Most bytes of standard output PlanGate reads from one git call; more is refused."""

_OBJECT_TYPES = frozenset(("commit", "tree", "blob", "tag"))

EXACT_REF_PREFIXES = ("refs/heads/", "refs/remotes/", "refs/tags/")
"""Full ref names taken exactly as given (a person who writes one means that ref)."""

_SHORT_NAME_RULES = (
    "refs/{}",
    "refs/tags/{}",
    "refs/heads/{}",
    "refs/remotes/{}",
    "refs/remotes/{}/HEAD",
)
"""Every ref git's own lookup tries for a short name, in git's order."""

_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/+-]{0,254}")
_STEPS_RE = re.compile(r"(?:[~^][0-9]{0,6})*")


def split_revision(rev: object) -> tuple[str, str]:
    """``(name, steps)`` of a revision PlanGate accepts: a name and ``~N``/``^N`` steps.

    The name holds only letters, digits and ``._/+-``; no ``..``, ``//``, ``@{``,
    ``:`` or glob: a revision is a commit id or a ref name, never git's wider
    syntax (``main@{1}``, ``:/message``, ``HEAD:path``). Anything else raises
    ``GIT_BAD_REVISION``.
    """
    if isinstance(rev, str):
        first = min((i for i in (rev.find("~"), rev.find("^")) if i >= 0), default=len(rev))
        name, steps = rev[:first], rev[first:]
        if (_NAME_RE.fullmatch(name) and _STEPS_RE.fullmatch(steps) and ".." not in name
                and "//" not in name and not name.endswith(("/", ".", ".lock"))):
            return name, steps
    raise GitError("GIT_BAD_REVISION", f"bad revision {rev!r}",
                   "give a full commit id, HEAD, or a branch name such as main or origin/main")


class GitError(EnvironmentFailure):
    """git could not answer; the caller fails closed."""


WORKTREE_COMMANDS = frozenset((
    "add", "am", "apply", "checkout", "checkout-index", "cherry-pick", "commit", "diff",
    "hash-object", "merge", "merge-tree", "read-tree", "rebase", "reset", "restore", "revert",
    "stash",
    "status", "switch", "update-index", "worktree",
))
"""git commands that may read or write the working tree, and so run filter drivers:
every call of one of them runs with the repository's filters switched off."""

_FILTER_OFF = (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false"))
"""An empty command is no filter: git passes the bytes through unchanged."""

HARDENING_ARGS: tuple[str, ...] = (
    "--no-replace-objects",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.quotepath=off",
)
"""Global options of every git call PlanGate makes (see the module docstring)."""


def scrubbed_env() -> dict[str, str]:
    """The environment for git: inherited, minus every ``GIT_*`` variable.

    Replacement objects are switched off here too, so that a git process that
    does not take :data:`HARDENING_ARGS` (a test's own set-up) agrees.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["GIT_NO_REPLACE_OBJECTS"] = "1"
    env["LC_ALL"] = "C"
    return env


class TreeEntry(NamedTuple):
    """One ``git ls-tree`` entry."""

    mode: str
    kind: str
    object_id: str
    path: str


class GitObject(NamedTuple):
    """One object as ``git cat-file --batch`` hands it over: its id, type and exact bytes."""

    object_id: str
    kind: str
    data: bytes


class HeadState(NamedTuple):
    """Where HEAD points: a full commit id (or None when unborn) and the branch.

    ``branch`` is set only when HEAD names a local branch (``refs/heads/...``);
    a HEAD that names a tag or a remote-tracking ref has no branch, like a
    detached HEAD, and ``ref`` says what it names.
    """

    commit: str | None
    branch: str | None
    ref: str | None = None

    @property
    def unborn(self) -> bool:
        """True before the first commit."""
        return self.commit is None

    @property
    def detached(self) -> bool:
        """True when HEAD names a commit rather than a branch."""
        return self.commit is not None and self.branch is None


_COMMIT_DIFF = ("diff", "--no-ext-diff", "--no-textconv", "--no-renames",
                "--ignore-submodules=none")
"""What two commits' diff always says: both sides of a rename, submodule pointers, no
external diff or textconv driver."""

_GIT_PROGRAM: list[str] = []  # the program once found (one lookup per process)


def git_program() -> str:
    """The git PlanGate runs: found as ``ssh-keygen`` and ``bwrap`` are
    (:func:`plangate.sysbin.find_program`), in the system directories or the person's
    own ``programs.toml``, never on ``PATH``: whoever starts PlanGate (an agent's shell
    included) sets ``PATH``, and a git of theirs could print any diff. Raises
    ``GIT_MISSING`` or ``GIT_UNTRUSTED``."""
    if _GIT_PROGRAM:
        return _GIT_PROGRAM[0]
    # The hook's hot path: the lookup's module is loaded when a git call first needs it.
    from plangate.sysbin import find_program

    found, problem = find_program("git")
    if found is None:
        missing = "not installed" in problem
        raise GitError(
            "GIT_MISSING" if missing else "GIT_UNTRUSTED",
            f"no git PlanGate can trust: {problem}",
            "install git from the system's packages (root-owned, in /usr/bin), or name your "
            'own in ~/.config/plangate/programs.toml: git = "/absolute/path/to/git" (owned by '
            "you or root, writable by nobody else)",
        )
    _GIT_PROGRAM.append(found)
    return found


class Git:
    """git commands for one repository (or any directory inside one)."""

    def __init__(self, cwd: Path, *, output_limit: int = GIT_OUTPUT_LIMIT) -> None:
        # No lookup here: git is found when the first call needs it (git_program).
        self.cwd = Path(cwd)
        self.output_limit = output_limit

    def run(
        self,
        args: list[str],
        *,
        ok_codes: tuple[int, ...] = (0,),
        input_data: bytes | None = None,
        index_file: str | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        """Run ``git <args>``; raise :class:`GitError` unless the exit code is in ``ok_codes``.

        ``index_file`` makes git use that index instead of the repository's own
        (``GIT_INDEX_FILE``): a commit built from a temporary index.
        """
        import subprocess  # lazy: only the result type; see _call

        out = self._call(args, ok_codes=ok_codes, input_data=input_data, index_file=index_file)
        return subprocess.CompletedProcess(out.args, out.returncode, out.stdout, out.stderr)

    def _call(
        self,
        args: list[str],
        *,
        ok_codes: tuple[int, ...] = (0,),
        input_data: bytes | None = None,
        hardening: tuple[str, ...] = HARDENING_ARGS,
        index_file: str | None = None,
    ) -> GitOutput:
        """:meth:`run` without the :mod:`subprocess` result type (the methods below use it)."""
        program = git_program()
        argv = [program, *hardening, *args]
        env = scrubbed_env()
        if index_file is not None:
            env["GIT_INDEX_FILE"] = index_file
        if args and args[0] in WORKTREE_COMMANDS and args[:2] != ["worktree", "list"]:
            env.update(self._filters_off())  # (listing worktrees reads no file's content)
        try:
            spawned = capture(argv, self.cwd, env, input_data=input_data,
                              timeout=GIT_TIMEOUT_SECONDS, output_limit=self.output_limit,
                              cwd_as_argument="-C")
        except FileNotFoundError as exc:
            if exc.filename == program:
                raise GitError(
                    "GIT_MISSING", f"{program} is not there any more", "install git and retry"
                ) from None
            raise GitError(
                "GIT_UNAVAILABLE", f"cannot run git in {self.cwd}", "check the directory exists"
            ) from None
        except SpawnTimeout:
            raise GitError(
                "GIT_TIMEOUT", f"git {args[0]} took longer than {GIT_TIMEOUT_SECONDS}s", "retry"
            ) from None
        except SpawnOutputTooLarge:
            raise GitError(
                "GIT_OUTPUT_TOO_LARGE",
                f"git {args[0]} printed more than {self.output_limit} bytes; it was stopped",
                "the repository is larger than PlanGate reads in one call: report it",
            ) from None
        returncode, stdout, stderr_bytes = spawned
        if returncode not in ok_codes:
            stderr = stderr_bytes.decode("utf-8", "replace").strip()
            if "not a git repository" in stderr:
                raise GitError(
                    "NOT_A_GIT_REPOSITORY",
                    f"{self.cwd} is not inside a git repository",
                    "run the command inside the repository (git init creates one)",
                )
            raise GitError(
                "GIT_FAILED",
                f"git {' '.join(args[:2])} failed ({returncode}): {stderr[:300]}",
                "check the repository state",
            )
        return GitOutput(argv, returncode, stdout, stderr_bytes)

    def _filters_off(self) -> dict[str, str]:
        """``GIT_CONFIG_*`` variables that switch off every filter driver configured here.

        A clean, smudge or process filter is a program the repository's
        configuration names (``filter.<driver>.clean`` in ``.git/config``, chosen
        per path by ``.gitattributes``). git runs it when it reads or writes the
        working tree: it would run code, and a clean filter can make a changed file
        look unchanged. Driver names are free text, so they are passed as
        environment pairs rather than ``-c`` arguments. Listed before every such call:
        another process may configure a driver between two calls.
        """
        listed = self._call(
            ["config", "--null", "--name-only", "--get-regexp", r"^filter\."], ok_codes=(0, 1)
        ).stdout
        drivers = sorted({
            name[len("filter."):name.rfind(".")]
            for name in listed.decode("utf-8", "surrogateescape").split("\x00")
            if name.startswith("filter.") and name.count(".") >= 2
        })
        pairs = [(f"filter.{d}.{key}", value) for d in drivers
                 for key, value in _FILTER_OFF]
        env = {"GIT_CONFIG_COUNT": str(len(pairs))}
        for index, (key, value) in enumerate(pairs):
            env[f"GIT_CONFIG_KEY_{index}"] = key
            env[f"GIT_CONFIG_VALUE_{index}"] = value
        return env

    def _text(self, args: list[str]) -> str:
        return self._call(args).stdout.decode("utf-8", "strict").strip()

    def toplevel(self) -> Path:
        """Absolute path of the working tree root."""
        return Path(self._text(["rev-parse", "--show-toplevel"]))

    def git_dir(self) -> Path:
        """Absolute path of this worktree's git directory."""
        out = self._text(["rev-parse", "--absolute-git-dir"])
        return Path(out)

    def common_dir(self) -> Path:
        """Absolute path of the common git directory (shared by linked worktrees)."""
        out = self._text(["rev-parse", "--path-format=absolute", "--git-common-dir"])
        return Path(out)

    def configured_hooks_dir(self) -> Path:
        """The hooks directory git itself uses for this repository (``core.hooksPath`` aware).

        The one call that must see the repository's own ``core.hooksPath``: it
        only asks where hooks live (``rev-parse`` runs no hook), so the override
        that keeps hooks off in every other call is left out here.
        """
        without_hooks_override = (
            "--no-replace-objects",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.quotepath=off",
        )
        out = self._call(["rev-parse", "--git-path", "hooks"], hardening=without_hooks_override)
        path = Path(out.stdout.decode("utf-8", "strict").strip())
        return path if path.is_absolute() else self.cwd / path

    def head_state(self) -> HeadState:
        """HEAD's commit (None when unborn) and branch (None when detached)."""
        return self.toplevel_and_head_state()[1]

    def toplevel_and_head_state(self) -> tuple[Path, HeadState]:
        """:meth:`toplevel` and :meth:`head_state` from two git processes (outside a
        working tree the first raises, ``NOT_A_GIT_REPOSITORY`` included)."""
        top, commit = self.toplevel_and_head()
        branch_proc = self._call(["symbolic-ref", "--quiet", "HEAD"], ok_codes=(0, 1))
        ref = branch_proc.stdout.decode().strip() or None
        branch = ref if ref is not None and ref.startswith("refs/heads/") else None
        return top, HeadState(commit=commit, branch=branch, ref=ref)

    def head(self) -> str:
        """Full object id of HEAD; an unborn HEAD raises ``GIT_HEAD_UNBORN``.

        One git process (:meth:`head_state` runs three): outside a repository
        ``rev-parse`` itself fails with ``NOT_A_GIT_REPOSITORY``, and an unborn
        HEAD is its quiet exit 1, as in :meth:`head_state`.
        """
        proc = self._call(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], ok_codes=(0, 1))
        commit = proc.stdout.decode().strip() or None
        if commit is not None and not is_full_sha(commit):
            raise GitError("GIT_BAD_OUTPUT", f"unexpected HEAD value {commit!r}", "check git")
        if commit is None:
            raise GitError(
                "GIT_HEAD_UNBORN",
                "HEAD has no commit yet (unborn branch)",
                "commit something first; approvals bind to a commit",
            )
        return commit

    def toplevel_and_head(self) -> tuple[Path, str | None]:
        """:meth:`toplevel` and HEAD's commit (None when HEAD names no commit: unborn, where
        :meth:`head` raises ``GIT_HEAD_UNBORN``), from one git process."""
        proc = self._call(["rev-parse", "--show-toplevel", "--verify", "--quiet",
                           "HEAD^{commit}"], ok_codes=(0, 1))
        out = proc.stdout.decode("utf-8", "strict")
        commit: str | None = None
        if proc.returncode == 0:
            out, _, commit = out.rstrip("\n").rpartition("\n")
            if not is_full_sha(commit):
                raise GitError("GIT_BAD_OUTPUT", f"unexpected HEAD value {commit!r}",
                               "check git")
        top = out.strip()
        if not top:
            raise GitError("GIT_BAD_OUTPUT", "git named no working tree", "check git")
        return Path(top), commit

    def resolve_commit(self, rev: str) -> str:
        """Resolve ``rev`` to exactly one full commit id: the one resolver of every caller.

        What ``rev`` may be (:func:`split_revision`), optionally followed by ``~N`` /
        ``^N`` steps:

        - a full or abbreviated commit id, looked up in the object database only
          (never as a ref of the same name); an ambiguous or unknown prefix raises
          ``GIT_COMMIT_AMBIGUOUS`` / ``GIT_COMMIT_UNKNOWN``;
        - ``HEAD``;
        - a full ref name under ``refs/heads/``, ``refs/remotes/`` or ``refs/tags/``,
          taken exactly;
        - a short name (``main``, ``origin/main``), resolved to the one branch or
          remote-tracking branch of that name (:meth:`branch_ref_of`): a tag or
          another ref carrying the same name makes it ``GIT_REF_AMBIGUOUS``.
        """
        base, steps = split_revision(rev)
        if base == "HEAD" or base.startswith(EXACT_REF_PREFIXES):
            return self._peel_to_commit(rev, base + steps)
        if is_short_sha(base):
            if not steps:
                return self._object_commit(base)
            return self._peel_to_commit(rev, self._object_commit(base) + steps)
        return self._peel_to_commit(rev, self.branch_ref_of(base) + steps)

    def branch_ref_of(self, name: str) -> str:
        """The full ref a short branch name means: ``refs/heads/<name>`` or
        ``refs/remotes/<name>``, whichever exists, when no other ref carries the name.

        Every ref git itself would try for ``name`` is listed (``refs/<name>``,
        ``refs/tags/<name>``, ``refs/heads/<name>``, ``refs/remotes/<name>``,
        ``refs/remotes/<name>/HEAD``). None: ``GIT_COMMIT_UNKNOWN``; more than one:
        ``GIT_REF_AMBIGUOUS`` (a tag ``main`` beside the branch ``main`` could
        otherwise redirect the name); only a tag or another kind of ref:
        ``GIT_REF_NOT_A_BRANCH``.
        """
        base, steps = split_revision(name)
        if steps or base == "HEAD" or base.startswith("refs/"):
            raise GitError("GIT_BAD_REVISION", f"{name!r} is not a short branch name",
                           "give a branch name such as main or origin/main")
        candidates = [rule.format(base) for rule in _SHORT_NAME_RULES]
        out = self._call(["for-each-ref", "--format=%(refname)", "--", *candidates]).stdout
        present = [ref for ref in out.decode("utf-8", "surrogateescape").split("\n")
                   if ref in candidates]
        if not present:
            raise GitError("GIT_COMMIT_UNKNOWN", f"no branch or commit is named {base!r} here",
                           "fetch it, or give a full commit id")
        if len(present) > 1:
            raise GitError(
                "GIT_REF_AMBIGUOUS",
                f"{base!r} names {len(present)} refs ({', '.join(present)})",
                f"give the full ref name (refs/heads/{base}) or a full commit id, "
                "or delete the ref that should not carry that name",
            )
        (ref,) = present
        if not ref.startswith(("refs/heads/", "refs/remotes/")):
            raise GitError(
                "GIT_REF_NOT_A_BRANCH",
                f"{base!r} names {ref}, not a branch",
                f"give a branch, a full commit id, or the full ref name {ref} deliberately",
            )
        return ref

    def _peel_to_commit(self, rev: str, exact: str) -> str:
        """The commit ``exact`` (a full ref name, ``HEAD`` or an id, with steps) peels to."""
        proc = self._call(
            ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{exact}^{{commit}}"],
            ok_codes=(0, 1),
        )
        out = proc.stdout.decode().strip()
        if proc.returncode != 0 or not is_full_sha(out):
            raise GitError(
                "GIT_COMMIT_UNKNOWN", f"{rev} is not a commit here", "fetch it or fix it"
            )
        return out

    def _object_commit(self, rev: str) -> str:
        """The commit a full or abbreviated object id names (object database only)."""
        if is_short_sha(rev) and not is_full_sha(rev):
            candidates = self._commits_with_prefix(rev)
            if not candidates:
                raise GitError(
                    "GIT_COMMIT_UNKNOWN", f"no commit starts with {rev}", "check the commit id"
                )
            if len(candidates) > 1:
                raise GitError(
                    "GIT_COMMIT_AMBIGUOUS",
                    f"{rev} is ambiguous: {len(candidates)} commits start with it",
                    "use the full 40-character commit id",
                )
            return candidates[0]
        proc = self._call(
            ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"],
            ok_codes=(0, 1),
        )
        out = proc.stdout.decode().strip()
        if proc.returncode != 0 or not is_full_sha(out):
            raise GitError(
                "GIT_COMMIT_UNKNOWN", f"{rev} is not a commit here", "fetch it or fix it"
            )
        if is_full_sha(rev) and out != rev:
            # A full object id must itself be a commit: ^{commit} would peel an
            # annotated tag's id to its commit, while an abbreviated tag id is
            # refused above (only commits are candidates). One rule for both.
            raise GitError(
                "GIT_COMMIT_UNKNOWN",
                f"{rev} names a tag or another object, not a commit",
                "give the commit id itself (git rev-parse TAG^{commit})",
            )
        return out

    def _commits_with_prefix(self, prefix: str) -> list[str]:
        proc = self._call(["rev-parse", f"--disambiguate={prefix}"], ok_codes=(0, 1))
        objects = [line for line in proc.stdout.decode().split() if is_full_sha(line)]
        if not objects:
            return []
        answers = self.batch_check(objects)
        if answers is None:
            # Candidates git cannot type cannot be counted: never pick one of them.
            raise GitError("GIT_BAD_OUTPUT", f"cannot type the objects starting with {prefix}",
                           "check the repository with 'git fsck'")
        return sorted(a[0] for a in answers if a is not None and a[1] == "commit")

    def resolve_commits(self, revs: list[str]) -> dict[str, str | GitError]:
        """Resolve many hex commit ids with one git process (for reports over many tasks).

        Returns, for each distinct rev, the full commit id or the :class:`GitError`
        :meth:`resolve_commit` raises for it. The batch answers the common case (a
        hex id naming exactly one object, a commit); every other case (not hex,
        ambiguous, missing, not a commit) is settled by :meth:`resolve_commit`
        itself, so the semantics are identical.
        """
        unique = list(dict.fromkeys(revs))
        found: dict[str, str] = {}
        # Only full ids are batched: git reads a full-length hex as an object id,
        # but an abbreviation as a ref name first when a branch or tag carries
        # that name. Abbreviations go through resolve_commit's object lookup.
        batchable = [r for r in unique if isinstance(r, str) and is_full_sha(r)]
        if batchable:
            answers = self.batch_check(batchable)
            if answers is not None:
                for rev, answer in zip(batchable, answers, strict=True):
                    if answer == (rev, "commit"):
                        found[rev] = rev
        out: dict[str, str | GitError] = {}
        for rev in unique:
            if rev in found:
                out[rev] = found[rev]
                continue
            try:
                out[rev] = self.resolve_commit(rev)
            except GitError as exc:
                out[rev] = exc
        return out

    def batch_check(self, names: list[str]) -> list[tuple[str, str] | None] | None:
        """``cat-file --batch-check`` of object names in one git process.

        For each name, ``(object id, type)``, or None when git answers that it names no
        object (``missing``). The whole answer is None when git says anything else for
        any name (``ambiguous``, a malformed line): callers then take their exact path,
        one lookup at a time. A failing git process raises, as every call of this door.
        """
        if not names:
            return []
        output = self._cat_file(["--batch-check=%(objectname) %(objecttype)"], names)
        lines = output.decode("utf-8", "surrogateescape").split("\n")
        if len(lines) != len(names) + 1 or lines[-1] != "":
            return None
        out: list[tuple[str, str] | None] = []
        for name, line in zip(names, lines, strict=False):
            if line == f"{name} missing":
                out.append(None)
                continue
            object_id, _, kind = line.partition(" ")
            if not is_full_sha(object_id) or kind not in _OBJECT_TYPES:
                return None
            out.append((object_id, kind))
        return out

    def read_objects(self, names: list[str]) -> list[GitObject | None] | None:
        """``cat-file --batch`` of object names in one git process.

        For each name, the object (id, type, exact bytes), or None when git answers
        ``missing``. The whole answer is None when git says anything else for any name
        (``ambiguous``, a malformed header, a body of the wrong length): callers then
        take their exact path. A failing git process raises, as every call of this door.

        ``missing`` only says that git did not hand over an object by that name: a
        ``<rev>:<path>`` whose tree git cannot read is ``missing`` too. Absence of a path
        is read from the entries of a tree actually received (:func:`tree_entries_of`),
        never from ``missing``.
        """
        if not names:
            return []
        return _batch_objects(names, self._cat_file(["--batch"], names))

    def _cat_file(self, options: list[str], names: list[str]) -> bytes:
        """``git cat-file OPTIONS`` fed one object name per line; its output.

        A name that could be read as another line or as an option (empty, a newline,
        NUL, a leading ``-``) is refused before git runs.
        """
        for name in names:
            if not name or "\n" in name or "\x00" in name or name.startswith("-"):
                raise GitError("GIT_BAD_REVISION", f"bad object name {name!r}",
                               "give a commit id or ref")
        return self._call(
            ["cat-file", *options],
            input_data=("\n".join(names) + "\n").encode("utf-8", "surrogateescape"),
        ).stdout

    def commit_exists(self, rev: str) -> bool:
        """True when ``rev`` resolves to exactly one commit."""
        try:
            self.resolve_commit(rev)
        except GitError:
            return False
        return True

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """True when ``ancestor`` is an ancestor of (or equal to) ``descendant``.

        Raises ``GIT_HISTORY_UNDECIDABLE`` when grafts or a shallow history make
        the answer untrustworthy (see :meth:`check_history_decidable`).
        """
        self.check_history_decidable()
        proc = self._call(["merge-base", "--is-ancestor", ancestor, descendant], ok_codes=(0, 1))
        return proc.returncode == 0

    def check_history_decidable(self) -> None:
        """Raise ``GIT_HISTORY_UNDECIDABLE`` when the repository's history can lie.

        A graft file (``info/grafts``) rewrites parents for every history walk
        (``--no-replace-objects`` does not turn it off), and a shallow clone
        cuts history short: in both, "is X an ancestor of Y" has no trustworthy
        answer, so the caller fails closed.
        """
        # One git process answers both: where the common directory is, and whether git
        # itself counts the repository as shallow (the last line of its answer).
        answer = self._call(["rev-parse", "--path-format=absolute", "--git-common-dir",
                             "--is-shallow-repository"]).stdout.decode("utf-8", "strict")
        where, _, shallow = answer.rstrip("\n").rpartition("\n")
        if not where:
            raise GitError("GIT_BAD_OUTPUT", f"unexpected rev-parse answer {answer[:200]!r}",
                           "check git")
        common = Path(where.strip())
        grafts = common / "info" / "grafts"
        if os.path.lexists(grafts):
            raise GitError(
                "GIT_HISTORY_UNDECIDABLE",
                f"the repository has a graft file ({grafts}): its history cannot be trusted",
                "remove info/grafts (or convert and review it with "
                "'git replace --convert-graft-file'), then retry",
            )
        if shallow != "false" or os.path.lexists(common / "shallow"):
            raise GitError(
                "GIT_HISTORY_UNDECIDABLE",
                "the repository is a shallow clone: ancestry cannot be measured",
                "fetch the full history ('git fetch --unshallow') and retry",
            )

    def changed_paths(self, base: str, head: str) -> list[str]:
        """Every path that differs between two commits, sorted and unique.

        Renames count at both old and new path (``--no-renames``); mode changes,
        symlinks and submodule pointers count as changes.
        """
        proc = self._call([*_COMMIT_DIFF, "--name-only", "-z", base, head, "--"])
        return _split_z_paths(proc.stdout)

    def changed_entries(self, base: str, head: str) -> ChangedEntries:
        """:meth:`changed_paths`, with the entries a reviewer cannot read as a file: the
        symbolic links (with their object ids) and gitlinks the head side holds.

        One ``git diff --raw`` (full object ids): the new mode of each entry is in the
        diff PlanGate computed itself, never in what a pull request says of it.
        """
        proc = self._call([*_COMMIT_DIFF, "--raw", "--no-abbrev", "-z", base, head, "--"])
        return _raw_entries(proc.stdout)

    def staged_paths(self, index_file: str | None = None) -> list[str]:
        """Paths staged in the index relative to HEAD (or all staged, when unborn).

        ``index_file`` reads another index than the repository's own: the one git
        names in ``GIT_INDEX_FILE`` for a ``pre-commit`` hook of ``commit -a``,
        ``commit <paths>`` or ``--only``, which is what that commit records.
        """
        state = self.head_state()
        base = state.commit or self.empty_tree()
        proc = self._call(
            [
                "diff",
                "--cached",
                "--no-ext-diff",
                "--no-renames",
                "--ignore-submodules=none",
                "--name-only",
                "-z",
                base,
                "--",
            ],
            index_file=index_file,
        )
        return _split_z_paths(proc.stdout)

    def unstaged_paths(self, paths: list[str], index_file: str | None = None) -> list[str]:
        """Those of ``paths`` whose working-tree file differs from the index (``index_file``
        as for :meth:`staged_paths`): what a commit records is not what the tree holds."""
        if not paths:
            return []
        proc = self._call(
            ["diff", "--no-ext-diff", "--no-renames", "--name-only", "-z", "--",
             *(f":(literal){p}" for p in paths)],
            index_file=index_file,
        )
        return _split_z_paths(proc.stdout)

    def empty_tree(self) -> str:
        """Object id of the empty tree in this repository's hash algorithm."""
        proc = self._call(["hash-object", "-t", "tree", "--stdin"], input_data=b"")
        return proc.stdout.decode().strip()

    def worktree_changes(
        self, under: tuple[str, ...] = (), *, ignored: bool = False
    ) -> list[str]:
        """Paths changed in the working tree against HEAD, untracked files included.

        Both sides of a rename are reported. ``under`` limits the answer to those
        directories (literal pathspecs: no glob or magic in them is honoured);
        ``ignored`` also reports files git ignores there, each file by its own path: a
        directory git ignores as a whole is listed file by file, never as one ``dir/``
        entry (which names no file and cannot be judged). The one directory git names
        as such is a repository inside the working tree (it holds ``.git``; git never
        descends into it): ``vendor/lib/``, with the trailing slash.
        """
        args = ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"]
        if ignored:
            # 'traditional' with --untracked-files=all lists the files inside an ignored
            # directory; 'matching' would report the directory alone, as 'dir/'.
            args.append("--ignored=traditional")
        if under:
            args += ["--", *(f":(literal){d}" for d in under)]
        proc = self._call(args)
        out: list[str] = []
        for record in proc.stdout.split(b"\x00"):
            if not record:
                continue
            out.append(record[3:].decode("utf-8", "surrogateescape"))
        return sorted(set(out) | set(self.hidden_paths(under)))

    def hidden_paths(self, under: tuple[str, ...] = ()) -> list[str]:
        """Paths whose index entry tells git not to look at the working tree file.

        ``git update-index --assume-unchanged`` and ``--skip-worktree`` set bits
        that make ``status`` and ``diff`` report such a file as unchanged whatever
        it holds. PlanGate cannot vouch for those files, so
        :meth:`worktree_changes` reports them as changed: a check that needs a
        clean tree then refuses instead of judging other bytes than git's.
        """
        args = ["ls-files", "-v", "-z"]
        if under:
            args += ["--", *(f":(literal){d}" for d in under)]
        out: list[str] = []
        for record in self._call(args).stdout.split(b"\x00"):
            tag, path = record[:2], record[2:]
            # 'S' marks skip-worktree; a lower-case tag marks assume-unchanged.
            if path and (tag[:1] == b"S" or tag[:1].islower()):
                out.append(path.decode("utf-8", "surrogateescape"))
        return out

    def merge_base(self, one: str, two: str) -> str:
        """The one best common ancestor of two commits (what a three-dot diff starts from).

        Raises ``GIT_HISTORY_UNDECIDABLE`` with grafts or a shallow history, and
        ``GIT_MERGE_BASE_UNDECIDABLE`` when the commits share no history or share
        several best ancestors (criss-cross merges): then "what this side changed"
        has no single answer and the caller fails closed.
        """
        self.check_history_decidable()
        proc = self._call(["merge-base", "--all", one, two], ok_codes=(0, 1))
        bases = proc.stdout.decode("ascii", "replace").split()
        if len(bases) == 1 and is_full_sha(bases[0]):
            return bases[0]
        detail = "no common ancestor" if not bases else f"{len(bases)} best common ancestors"
        raise GitError(
            "GIT_MERGE_BASE_UNDECIDABLE",
            f"{one[:12]} and {two[:12]} have {detail}",
            "merge the base branch into the pull request so that one merge base remains",
        )

    def merges_cleanly(self, base: str, head: str) -> bool | None:
        """Would merging ``head`` into ``base`` succeed without a conflict? None: unknown.

        ``git merge-tree --write-tree`` (git 2.38 and later) merges in memory: the
        working tree, the index and the refs are left as they are, and filter drivers
        are off. A merge driver is a program the configuration names and the merged
        ``.gitattributes`` may select: with one configured, nothing is run and the
        answer is None. An older git, or any other failure, is None (unknown), never a
        clean merge.
        """
        drivers = self._call(
            ["config", "--null", "--name-only", "--get-regexp", r"^merge\..*\.driver$"],
            ok_codes=(0, 1),
        ).stdout
        if drivers.strip(b"\0"):
            return None
        try:
            proc = self._call(["merge-tree", "--write-tree", "--no-messages", base, head],
                              ok_codes=(0, 1))
        except GitError:
            return None
        return proc.returncode == 0

    def ls_tree(self, commit: str, paths: list[str] | None = None) -> list[TreeEntry]:
        """Recursive ``ls-tree`` of ``commit`` (optionally limited to ``paths``)."""
        args = ["ls-tree", "-r", "-z", "--full-tree", commit, "--"]
        if paths:
            args.extend(paths)
        return _tree_entries(self._call(args).stdout)

    def ls_tree_at_ref(self, ref: str, paths: list[str]) -> list[TreeEntry] | None:
        """:meth:`ls_tree` of the commit the full ref name ``ref`` points to now (peeled
        to a commit), limited to ``paths``; None when git cannot list it (no such ref, not
        a commit, or any other failure: the caller then takes its slower, exact path)."""
        if not ref.startswith("refs/") or "\x00" in ref or not paths:
            raise GitError("GIT_BAD_REVISION", f"bad ref name {ref!r}", "give a full ref name")
        proc = self._call(
            ["ls-tree", "-r", "-z", "--full-tree", f"{ref}^{{commit}}", "--", *paths],
            ok_codes=(0, 128),
        )
        return _tree_entries(proc.stdout) if proc.returncode == 0 else None

    def read_blob(self, commit: str, path: str, max_bytes: int) -> bytes:
        """Bytes of the regular file ``path`` at ``commit``.

        A missing path, a symlink, a submodule or a directory raises
        ``GIT_PATH_NOT_A_FILE``; a blob larger than ``max_bytes`` raises
        ``GIT_BLOB_TOO_LARGE``.
        """
        # -l: the listing carries each blob's size, so no separate ``cat-file -s``.
        listing = self._call(["ls-tree", "-r", "-z", "-l", "--full-tree", commit, "--", path])
        return self._regular_blob(_sized_tree_entries(listing.stdout), commit, path, max_bytes)

    def _regular_blob(
        self, listing: list[tuple[TreeEntry, int]], commit: str, path: str, max_bytes: int
    ) -> bytes:
        """:meth:`read_blob` from a sized listing of ``commit`` that covers ``path``."""
        entries = [(e, size) for e, size in listing if e.path == path]
        regular = ("100644", "100755")
        if len(entries) != 1 or entries[0][0].kind != "blob" or entries[0][0].mode not in regular:
            raise GitError(
                "GIT_PATH_NOT_A_FILE",
                f"{path} is not a regular file at {commit[:12]}",
                "commit the file at that path",
            )
        entry, size = entries[0]
        if size > max_bytes:
            raise GitError(
                "GIT_BLOB_TOO_LARGE", f"{path} is {size} bytes (limit {max_bytes})", "shrink it"
            )
        return self._call(["cat-file", "blob", entry.object_id]).stdout

    def listed_at(self, commit: str, paths: Sequence[str]) -> Git:
        """This repository, where :meth:`ls_tree` and :meth:`read_blob` of ``commit`` limited
        to some of ``paths`` are answered from one listing of all of them (one git process
        for the listing, one more per blob read), not one listing per call.

        The answers are :meth:`ls_tree`'s and :meth:`read_blob`'s: the listing is
        ``ls-tree`` of the same commit and paths, filtered as git limits a listing to a
        path (the entry itself, or what lies under it). When git cannot list them all
        (a tree it cannot read), nothing is taken from the failed listing: each call asks
        git on its own, and gets the answer or the failure it would have had.
        Any other commit or path is asked of git as usual.
        """
        return _ListedGit(self, commit, tuple(paths))

    def add_worktree(self, path: Path, commit: str) -> None:
        """Create a detached linked worktree of ``commit`` at ``path``."""
        self._call(["worktree", "add", "--detach", "--force", str(path), commit])

    def remove_worktree(self, path: Path) -> None:
        """Remove a linked worktree (forcefully: it is a throwaway copy)."""
        self._call(["worktree", "remove", "--force", str(path)], ok_codes=(0, 128))
        self._call(["worktree", "prune"], ok_codes=(0, 128))


class _ListedGit(Git):
    """A :class:`Git` answering reads of a few paths at one commit from one listing
    (:meth:`Git.listed_at`)."""

    def __init__(self, git: Git, commit: str, paths: tuple[str, ...]) -> None:
        super().__init__(git.cwd, output_limit=git.output_limit)
        self._at = commit
        self._paths = frozenset(paths)
        self._order = paths
        self._listing: list[tuple[TreeEntry, int]] | None = None
        self._unlisted = False  # git could not list them all: every call asks on its own

    def _listed(self, commit: str, paths: Sequence[str]) -> list[tuple[TreeEntry, int]] | None:
        """The entries of ``paths`` at ``commit`` from the one listing, or None: ask git."""
        if commit != self._at or not paths or self._unlisted or not self._paths.issuperset(paths):
            return None
        if self._listing is None:
            try:
                out = self._call(["ls-tree", "-r", "-z", "-l", "--full-tree", commit, "--",
                                  *self._order])
            except GitError:
                self._unlisted = True
                return None
            self._listing = _sized_tree_entries(out.stdout)
        under = tuple(f"{p}/" for p in paths)
        wanted = set(paths)
        return [(e, size) for e, size in self._listing
                if e.path in wanted or e.path.startswith(under)]

    def ls_tree(self, commit: str, paths: list[str] | None = None) -> list[TreeEntry]:
        listed = self._listed(commit, paths or ())
        if listed is None:
            return super().ls_tree(commit, paths)
        return [entry for entry, _size in listed]

    def read_blob(self, commit: str, path: str, max_bytes: int) -> bytes:
        listed = self._listed(commit, (path,))
        if listed is None:
            return super().read_blob(commit, path, max_bytes)
        return self._regular_blob(listed, commit, path, max_bytes)


class GitOutput:
    """What one git process returned (the fields :meth:`Git.run` callers read)."""

    __slots__ = ("args", "returncode", "stderr", "stdout")

    def __init__(self, args: list[str], returncode: int, stdout: bytes, stderr: bytes) -> None:
        self.args = args
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr


def _split_z_paths(raw: bytes) -> list[str]:
    """The NUL-separated paths of ``raw``, decoded, unique and sorted.

    One decode for the whole output (a NUL byte is never part of a UTF-8 sequence, so
    each path decodes as it would alone), de-duplicated in git's order: on git's sorted
    output the sort is a single pass.
    """
    paths = sorted(dict.fromkeys(raw.decode("utf-8", "surrogateescape").split("\x00")))
    if paths and paths[0] == "":
        del paths[0]  # the empty piece after the last NUL (it sorts first)
    return paths


class ChangedEntries(NamedTuple):
    """What :meth:`Git.changed_entries` read from one ``diff --raw``."""

    paths: list[str]
    """Every changed path, sorted and unique (as :meth:`Git.changed_paths`)."""
    links: list[tuple[str, str]]
    """(path, object id) of each entry whose new mode is a symbolic link (120000)."""
    gitlinks: list[str]
    """Paths whose new mode is a gitlink (160000): a commit of another repository."""


_LINK_MODE = "120000"
_GITLINK_MODE = "160000"
_SPECIAL_MODES = frozenset((_LINK_MODE, _GITLINK_MODE))


def _raw_entries(raw: bytes) -> ChangedEntries:
    """Parse ``diff --raw -z``: ``:<old mode> <new mode> <old id> <new id> <status>``,
    NUL, the path, NUL, per entry (no renames: one path each). Anything else is
    ``GIT_BAD_OUTPUT``: a listing PlanGate cannot read is never taken as complete."""
    parts = raw.decode("utf-8", "surrogateescape").split("\x00")
    if parts[-1] != "" or len(parts) % 2 != 1:
        raise GitError("GIT_BAD_OUTPUT", "git diff --raw ended mid-entry", "check git")
    metas, paths = parts[0:-1:2], parts[1::2]
    links: list[tuple[str, str]] = []
    gitlinks: list[str] = []
    # The new mode sits at a fixed place (modes are six octal digits); every record is
    # read in full only when it is not a plain file change or does not look like one.
    for index, meta in enumerate(metas):
        mode = meta[8:14]
        if meta[:1] == ":" and mode not in _SPECIAL_MODES:
            continue
        fields = meta[1:].split(" ")
        if meta[:1] != ":" or len(fields) != 5 or not paths[index]:
            raise GitError("GIT_BAD_OUTPUT", f"unexpected git diff --raw record {meta[:120]!r}",
                           "check git")
        if fields[1] == _LINK_MODE:
            links.append((paths[index], fields[3]))
        else:
            gitlinks.append(paths[index])
    unique = sorted(dict.fromkeys(paths))
    return ChangedEntries(unique, links, gitlinks)


_SIZE_DIGITS = 15  # a size git prints for one object (far beyond any output limit)


def _batch_objects(names: list[str], output: bytes) -> list[GitObject | None] | None:
    """The answers of ``cat-file --batch`` for ``names``, in order, or None when the
    output is not exactly one well-formed answer per name (see :meth:`Git.read_objects`)."""
    answers: list[GitObject | None] = []
    at = 0
    for name in names:
        end = output.find(b"\n", at)
        if end < 0:
            return None
        header = output[at:end]
        at = end + 1
        if header == name.encode("utf-8", "surrogateescape") + b" missing":
            answers.append(None)
            continue
        fields = header.split(b" ")
        if len(fields) != 3:
            return None
        raw_id, raw_kind, raw_size = fields
        object_id = raw_id.decode("ascii", "replace")
        kind = raw_kind.decode("ascii", "replace")
        if (not is_full_sha(object_id) or kind not in _OBJECT_TYPES
                or not raw_size.isdigit() or len(raw_size) > _SIZE_DIGITS):
            return None
        size = int(raw_size)
        if at + size >= len(output) or output[at + size] != 0x0A:
            return None
        answers.append(GitObject(object_id, kind, output[at : at + size]))
        at += size + 1
    return answers if at == len(output) else None


_TREE_MODES = frozenset((b"100644", b"100755", b"120000", b"40000", b"160000"))
"""The modes git writes in a tree: file, executable, symlink, directory, submodule."""


def tree_entries_of(tree: GitObject) -> dict[bytes, tuple[bytes, str]] | None:
    """The entries of a tree object received whole: name -> (mode, object id).

    None when ``tree`` is not a tree or its bytes are not a well-formed tree in the
    object format its own id shows (SHA-1 or SHA-256): a mode git does not write,
    an empty, repeated or slash-holding name, a truncated id. A None answer proves
    nothing; callers take their exact path.
    """
    if tree.kind != "tree" or not is_full_sha(tree.object_id):
        return None
    id_size = len(tree.object_id) // 2
    data = tree.data
    entries: dict[bytes, tuple[bytes, str]] = {}
    at = 0
    while at < len(data):
        space = data.find(b" ", at)
        nul = data.find(b"\x00", space + 1) if space >= 0 else -1
        if space < 0 or nul < 0 or nul + 1 + id_size > len(data):
            return None
        mode, name = data[at:space], data[space + 1 : nul]
        if mode not in _TREE_MODES or not name or b"/" in name or name in entries:
            return None
        entries[name] = (mode, data[nul + 1 : nul + 1 + id_size].hex())
        at = nul + 1 + id_size
    return entries


def _sized_tree_entries(output: bytes) -> list[tuple[TreeEntry, int]]:
    """The entries of ``ls-tree -r -z -l`` output with each blob's size (-1: not a blob)."""
    entries: list[tuple[TreeEntry, int]] = []
    for record in output.split(b"\x00"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, kind, object_id, size = meta.decode().split()
        path = raw_path.decode("utf-8", "surrogateescape")
        blob_size = int(size) if size.isdigit() else -1
        entries.append((TreeEntry(mode, kind, object_id, path), blob_size))
    return entries


def _tree_entries(output: bytes) -> list[TreeEntry]:
    """The entries of ``ls-tree -r -z`` output."""
    entries: list[TreeEntry] = []
    for record in output.split(b"\x00"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, kind, object_id = meta.decode().split()
        path = raw_path.decode("utf-8", "surrogateescape")
        entries.append(TreeEntry(mode, kind, object_id, path))
    return entries
