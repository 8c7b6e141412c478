"""``plangate setup``: switch PlanGate on in a repository, in one idempotent step.

What it writes, each only when missing or different (a second run changes nothing):

1. ``.plangate/protected-surfaces.toml`` from the bundled template, with the
   template's marker line removed: this explicit step is what turns the template
   into the repository's own definition (the command shows every pattern first);
2. the trust root (``.plangate/trust.toml``, ``.plangate/allowed_signers``) when
   keys are given (``--approver NAME=KEY.pub``, ``--reviewer NAME=KEY.pub``), computed
   in memory through :mod:`plangate.authority.service` and checked as a reader checks
   it; ``require_signatures`` turned on when asked (the command asks when an approver
   is given);
3. ``.gitignore`` entries for what is never committed (:data:`IGNORED`: the ledger,
   locks, task sessions, exec's runs, run logs, a developer's local Claude Code settings);
4. with ``--git`` beside ``.pre-commit-config.yaml``: PlanGate's ``repo: local`` entry
   in it (:mod:`plangate.hooks.precommit`); the framework keeps git's hooks;
5. this clone's ledger and the hook configuration of the hosts asked for
   (``plangate hooks install``: it creates the ledger and records the installation).

:func:`preview` computes every write and checks every precondition (the surfaces,
the trust root, ``.gitignore``, the framework's configuration, each host's file,
git's hooks, a ledger lost on this clone) before :func:`apply_setup` writes anything:
a refusal writes nothing, and a write that still fails names what was written before
it. Steps 1, 2 and 4 change what decides: the command shows them and asks a human
first. :func:`next_steps` is the order of a team's first commits, or, on a clone of
a repository that already adopted PlanGate, a teammate's next steps.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from plangate.errors import InputRejected, PlanGateError, UsageError
from plangate.ownfiles import setup_ignore_lines
from plangate.records import NamedTuple

SURFACES_RELPATH = ".plangate/protected-surfaces.toml"
GITIGNORE = ".gitignore"
IGNORE_HEADER = "# PlanGate: local state, never committed (written by 'plangate setup')"
IGNORED: tuple[str, ...] = setup_ignore_lines()
"""What ``setup`` adds to ``.gitignore``: every local file PlanGate never blames
(:mod:`plangate.ownfiles`), so none of them can slip into a commit."""


class Principal(NamedTuple):
    """A key given on the command line: who, the public key line, their role."""

    name: str
    key_line: str
    role: str


class Preview(NamedTuple):
    """Everything :func:`apply_setup` would write, computed and checked before any write."""

    surfaces: bytes | None
    """The surfaces file to write (None: the repository already has its own)."""
    surfaces_entries: tuple[tuple[str, str, str], ...]
    """``(pattern, class, reason)`` of every entry of the definition in force after setup."""
    trust_init: bool
    principals: tuple[Principal, ...]
    require_signatures: bool
    ignore_lines: tuple[str, ...]
    trust_files: tuple[bytes, bytes] | None = None
    """``trust.toml`` and ``allowed_signers`` to write (None: the trust root is unchanged)."""
    trust_branch: str = "main"
    pre_commit: bytes | None = None
    """``.pre-commit-config.yaml`` with PlanGate's entry (None: unchanged or not used)."""
    framework: bool = False
    """The pre-commit framework runs this repository's git hooks: ``--git`` goes through it."""
    ledger_new: bool = False
    """This clone has no ledger yet: setup creates its own."""
    adopted: bool = False
    """HEAD already holds the protected surfaces: a clone of an adopted repository."""

    @property
    def changes_authority(self) -> bool:
        """Surfaces, trust root or the framework's hook list would change: a human confirms."""
        return (
            self.surfaces is not None
            or self.trust_files is not None
            or self.pre_commit is not None
        )


def template_without_marker() -> bytes:
    """The bundled template with its marker line removed (the repository's own copy)."""
    from plangate.surfaces import TEMPLATE_MARKER, bundled_template_path

    text = Path(bundled_template_path()).read_bytes().decode("utf-8")
    kept = [line for line in text.splitlines(keepends=True) if TEMPLATE_MARKER not in line]
    return "".join(kept).encode("utf-8")


def parse_keys(values: list[str], role: str) -> list[Principal]:
    """``NAME=PATH`` arguments read into principals (the public key file's first line)."""
    from plangate.fsutil import read_regular_file

    out: list[Principal] = []
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise UsageError(
                "SETUP_KEY_INVALID",
                f"{value!r} is not NAME=KEY.pub",
                f"pass --{role} alice=~/.ssh/id_ed25519.pub",
            )
        read = read_regular_file(Path(path).expanduser(), 64 * 1024)
        if not read.ok or read.data is None:
            raise InputRejected(
                "SETUP_KEY_UNREADABLE",
                f"{path} {read.detail}",
                "name an existing public key file (KEY.pub)",
            )
        line = read.data.decode("utf-8", "replace").strip().splitlines()
        if not line:
            raise InputRejected(
                "SETUP_KEY_UNREADABLE", f"{path} is empty", "name a public key file (KEY.pub)"
            )
        out.append(Principal(name, line[0], role))
    return out


def _missing_ignores(root: Path) -> tuple[str, ...]:
    from plangate.fsutil import FileState, read_regular_file

    read = read_regular_file(root / GITIGNORE, 1024 * 1024)
    if read.state is FileState.MISSING:
        return IGNORED
    if not read.ok or read.data is None:
        raise InputRejected(
            "SETUP_GITIGNORE_UNREADABLE",
            f"{GITIGNORE} {read.detail}",
            "make .gitignore a regular file",
        )
    present = {line.strip() for line in read.data.decode("utf-8", "replace").splitlines()}
    return tuple(line for line in IGNORED if line not in present)


def _planned_trust(
    root: Path, principals: list[Principal], require_signatures: bool
) -> tuple[tuple[bytes, bytes] | None, tuple[Principal, ...], bool, str]:
    """(the trust root's files after setup or None, the principals new to it, whether it is
    created, its branch): computed in memory and checked as a reader checks them."""
    from plangate.authority import service
    from plangate.authority.signers import AllowedSigners
    from plangate.authority.source import recorded_trust_branch
    from plangate.authority.trustfile import TrustConfig
    from plangate.authority.trustpaths import SIGNERS_RELPATH, TRUST_RELPATH

    if not principals and not require_signatures:
        return None, (), False, "main"
    present = [os.path.lexists(root / rel) for rel in (TRUST_RELPATH, SIGNERS_RELPATH)]
    exists = all(present)
    branch = recorded_trust_branch(root)
    if any(present):
        # Both files are read (one alone is AUTH_TRUST_INCOMPLETE): never overwritten blind.
        exists = True
        config, signers = service.load_worktree(root)
    else:
        config, signers = TrustConfig(False, branch, False, {}, (), ()), AllowedSigners(())
    known = {e.principal for e in signers.entries}
    new = tuple(p for p in principals if p.name not in known)
    turn_on = require_signatures and not config.require_signatures
    if not new and not turn_on:
        return None, (), False, branch
    for principal in new:
        config, signers = service.with_principal(
            config, signers, principal.name, principal.key_line,
            roles=[principal.role], human=True, agent=False,
        )
    if turn_on:
        config = config._replace(require_signatures=True)
    return service.root_files(config, signers), new, not exists, branch


def signatures_can_be_required(root: Path, principals: list[Principal]) -> bool:
    """Would the trust root after setup name the two reviewers and the approver that
    ``require_signatures = true`` needs?"""
    from plangate.authority import service
    from plangate.authority.trustpaths import SIGNERS_RELPATH, TRUST_RELPATH

    roles: dict[str, set[str]] = {"reviewer": set(), "approver": set()}
    if (root / TRUST_RELPATH).exists() and (root / SIGNERS_RELPATH).exists():
        config, _signers = service.load_worktree(root)
        for role in roles:
            roles[role] |= set(config.roles.get(role, ()))
    for principal in principals:
        roles.setdefault(principal.role, set()).add(principal.name)
    return len(roles["reviewer"]) >= 2 and bool(roles["approver"])


def signatures_required(root: Path) -> bool:
    """The working tree's trust root already requires signatures."""
    from plangate.authority import service
    from plangate.authority.trustpaths import SIGNERS_RELPATH, TRUST_RELPATH

    if not ((root / TRUST_RELPATH).exists() and (root / SIGNERS_RELPATH).exists()):
        return False
    return service.load_worktree(root)[0].require_signatures


def _committed_at_head(root: Path, rel: str) -> bool:
    from plangate.git import Git, GitError

    git = Git(root)
    try:
        return bool(git.ls_tree(git.resolve_commit("HEAD"), [rel]))
    except GitError:
        return False


def _check_hosts(
    root: Path, env: Mapping[str, str], hosts: list[str], framework: bool, local_python: bool
) -> bool:
    """Refuse, before anything is written, what would stop the hooks' installation half-way;
    whether this clone's ledger is new (it is created then)."""
    from plangate.hooks.install import check_git_hooks, check_host_configs
    from plangate.ledger import open_ledger
    from plangate.ledger.base import EmptyLedger

    if "git" in hosts and not framework:
        check_git_hooks(root)
    check_host_configs(root, hosts, local_python=local_python)
    if not hosts:
        return False  # no hooks to install: the ledger is left alone
    # A ledger lost on this clone refuses here (LEDGER_MISSING, with its hint); a new
    # clone's absent ledger reads as empty and is created by apply_setup.
    with open_ledger(root, env, create=False) as ledger:
        return isinstance(ledger, EmptyLedger)


def preview(
    root: Path,
    principals: list[Principal],
    *,
    require_signatures: bool = False,
    hosts: list[str] | None = None,
    env: Mapping[str, str] | None = None,
    local_python: bool = False,
) -> Preview:
    """Everything setup would write in the repository at ``root``, with every precondition
    checked (nothing is written; a refusal here leaves the repository as it was)."""
    from plangate.hooks import precommit
    from plangate.surfaces import load_surfaces_bytes, resolve_surfaces

    hosts = list(hosts or [])
    own = resolve_surfaces(root)
    surfaces: bytes | None = None
    if own.provenance == "bundled_template" or not own.entries:
        if (root / SURFACES_RELPATH).exists() and own.provenance != "bundled_template":
            raise InputRejected(
                "SETUP_SURFACES_INVALID",
                f"{SURFACES_RELPATH} exists but cannot be used: "
                + (own.problem.message if own.problem else "no entries"),
                "fix it by hand (setup never overwrites a definition it cannot read)",
            )
        surfaces = template_without_marker()
        resolved = load_surfaces_bytes(surfaces, "downstream", SURFACES_RELPATH)
        if resolved.problem is not None:
            raise InputRejected(
                resolved.problem.code,
                resolved.problem.message,
                "the bundled template is broken: report the bug",
            )
    else:
        resolved = own
    entries = tuple((e.pattern, e.cls, e.reason) for e in resolved.entries)
    trust_files, new, trust_init, branch = _planned_trust(root, principals, require_signatures)
    framework_config = precommit.read_config(root)
    framework = "git" in hosts and framework_config.present
    pre_commit: bytes | None = None
    if framework:
        from plangate.fsutil import read_below

        read = read_below(root, precommit.CONFIG_RELPATH, precommit.MAX_CONFIG_BYTES)
        if not read.ok or read.data is None:
            raise InputRejected(
                "SETUP_PRE_COMMIT_CONFIG_UNEDITABLE",
                f"{precommit.CONFIG_RELPATH} {read.detail}; nothing was written",
                "make it a regular file",
            )
        pre_commit = precommit.planned_config(read.data)
    ledger_new = _check_hosts(root, env or {}, hosts, framework, local_python)
    return Preview(
        surfaces,
        entries,
        trust_init,
        new,
        trust_files is not None and require_signatures,
        _missing_ignores(root),
        trust_files,
        branch,
        pre_commit,
        framework,
        ledger_new,
        surfaces is None and _committed_at_head(root, SURFACES_RELPATH),
    )


class Step(NamedTuple):
    """One thing setup did."""

    what: str
    path: str
    action: str


class _Writes:
    """The writes done so far: a failure names them (the rest was not written)."""

    def __init__(self) -> None:
        self.steps: list[Step] = []

    def failed(self, exc: PlanGateError) -> PlanGateError:
        done = [f"{s.path} ({s.what})" for s in self.steps if s.action != "unchanged"]
        said = ("written before it: " + ", ".join(done)) if done else "nothing was written"
        return type(exc)(exc.code, f"{exc.message}; {said}", exc.hint)


def apply_setup(
    root: Path,
    env: Mapping[str, str],
    plan: Preview,
    hosts: list[str],
    *,
    python: str | None = None,
    local_python: bool = False,
) -> list[Step]:
    """Write what :func:`preview` planned, then install the hooks of ``hosts``.

    Every precondition was checked by :func:`preview`; a write that still fails (a full
    disk, a file changed meanwhile) raises its error with what was written before it.
    """
    writes = _Writes()
    try:
        _write_all(root, env, plan, hosts, writes, python=python, local_python=local_python)
    except PlanGateError as exc:
        raise writes.failed(exc) from None
    return writes.steps


def _write_all(
    root: Path,
    env: Mapping[str, str],
    plan: Preview,
    hosts: list[str],
    writes: _Writes,
    *,
    python: str | None,
    local_python: bool,
) -> None:
    from plangate.fsutil import atomic_write_in
    from plangate.hooks import precommit

    steps = writes.steps
    if plan.surfaces is not None:
        atomic_write_in(root, SURFACES_RELPATH, plan.surfaces)
        steps.append(Step("protected surfaces", SURFACES_RELPATH, "written"))
    else:
        steps.append(Step("protected surfaces", SURFACES_RELPATH, "unchanged"))
    steps += _trust(root, plan)
    steps.append(_gitignore(root, plan.ignore_lines))
    if plan.pre_commit is not None:
        atomic_write_in(root, precommit.CONFIG_RELPATH, plan.pre_commit)
        steps.append(Step("PlanGate in the pre-commit framework", precommit.CONFIG_RELPATH,
                          "written"))
    if not hosts:
        return
    from plangate.hooks.install import apply, ensure_ledger
    from plangate.ledger import resolve_location

    direct = [h for h in hosts if not (plan.framework and h == "git")]
    # Installing creates this clone's ledger first (the hooks never create one).
    ledger = Step("this clone's own ledger" if plan.ledger_new else "ledger",
                  resolve_location(root, env).display,
                  "created" if plan.ledger_new else "unchanged")
    ensure_ledger(root, env, hosts)
    steps.append(ledger)
    if direct:
        for change in apply(root, direct, install=True, python=python, env=env,
                            local_python=local_python, record=False):
            steps.append(Step(f"{change.host} hooks", change.path, change.action))


def _trust(root: Path, plan: Preview) -> list[Step]:
    from plangate.authority import service
    from plangate.authority.source import record_trust_branch
    from plangate.authority.trustpaths import TRUST_RELPATH

    if plan.trust_files is None:
        return []
    steps: list[Step] = []
    if plan.trust_init:
        # The local trust branch is recorded in the git directory, where no commit reaches.
        record_trust_branch(root, plan.trust_branch)
    service.write_root_files(root, *plan.trust_files)
    if plan.trust_init:
        steps.append(Step("trust root", TRUST_RELPATH, "written"))
    for principal in plan.principals:
        steps.append(Step(f"trust root: {principal.role} {principal.name}", TRUST_RELPATH, "added"))
    if plan.require_signatures:
        steps.append(Step("trust root: signatures required", TRUST_RELPATH, "written"))
    return steps


def _gitignore(root: Path, lines: tuple[str, ...]) -> Step:
    from plangate.fsutil import atomic_write_in, read_regular_file

    if not lines:
        return Step("ignored local state", GITIGNORE, "unchanged")
    read = read_regular_file(root / GITIGNORE, 1024 * 1024)
    current = read.data if read.ok and read.data is not None else b""
    if current and not current.endswith(b"\n"):
        current += b"\n"
    block = "\n".join((IGNORE_HEADER, *lines)) + "\n"
    separator = b"\n" if current else b""
    atomic_write_in(root, GITIGNORE, current + separator + block.encode("utf-8"))
    return Step("ignored local state", GITIGNORE, "written")


def committed_files(root: Path) -> list[str]:
    """The adoption files present in the repository, in the order a reviewer reads them."""
    from plangate.authority.trustpaths import REVOKED_RELPATH, SIGNERS_RELPATH, TRUST_RELPATH

    candidates = (
        SURFACES_RELPATH,
        ".plangate/tools.toml",
        TRUST_RELPATH,
        SIGNERS_RELPATH,
        REVOKED_RELPATH,
        ".plangate/.gitignore",
        GITIGNORE,
        ".claude/settings.json",
        ".codex/hooks.json",
        ".cursor/hooks.json",
        ".pre-commit-config.yaml",
    )
    return [rel for rel in candidates if (root / rel).is_file()]


def _framework_step(root: Path, plan: Preview) -> list[str]:
    from plangate.hooks import precommit
    from plangate.hooks.install import git_hooks_dir

    if not plan.framework or all(precommit.framework_hooks(git_hooks_dir(root)).values()):
        return []
    return [f"{precommit.INSTALL_COMMAND}   # git runs the team's hooks and PlanGate's through "
            "the pre-commit framework (once per clone)"]


def next_steps(root: Path, plan: Preview, steps: list[Step]) -> tuple[str, list[str]]:
    """What the person does next: a clone of an adopted repository (``plan.adopted``) gets a
    teammate's steps, a repository being adopted the order of the first commits."""
    if not plan.adopted:
        return "The first commits, in this order:", _framework_step(root, plan) + first_commits(
            root)
    shared = set(committed_files(root))
    changed = sorted({s.path if not Path(s.path).is_absolute()
                      else str(Path(s.path).relative_to(root))
                      for s in steps if s.action == "written"
                      and (not Path(s.path).is_absolute() or Path(s.path).is_relative_to(root))}
                     & shared)
    out = _framework_step(root, plan)
    if changed:
        out.append(f"this clone now differs from the team's files ({' '.join(changed)}): "
                   "propose the change through a pull request, or 'git checkout' them back")
    out.append("plangate doctor   # proves the installed hooks deny what they must and allow "
               "what they may")
    if signatures_required(root):
        out.append("approvals and reviews are signed here: your public key must be in "
                   ".plangate/allowed_signers (a maintainer adds it with 'plangate trust add' "
                   "through a reviewed pull request; docs/authority.md)")
    out.append("first task: plangate init TASK-NNNN, write and review the plan, approve it "
               "('plangate c3 issue'), commit it, then 'plangate task start TASK-NNNN' for an "
               "IDE agent or 'plangate exec TASK-NNNN -- <agent>'")
    return ("PlanGate is already adopted here; this clone is set up. Next:", out)


def first_commits(root: Path) -> list[str]:
    """The order of a team's first commits, with this repository's own file names."""
    files = " ".join(committed_files(root))
    return [
        "git switch -c adopt-plangate",
        f"git add {files}",
        "git commit -m 'Adopt PlanGate'   # the git hooks let the adoption through (its base "
        "has no PlanGate and it changes only these files); CI sends it to a human",
        "git push -u origin adopt-plangate, then open a pull request: 'plangate ci check' "
        "reports HUMAN_REQUIRED (exit 3, CI_ADOPTS_PLANGATE: adopts PlanGate: a human "
        "reviews the trust root and surfaces); a human reviews and merges it",
        "every developer: install PlanGate, pull, run 'plangate setup' with their hosts "
        "(their own ledger and git hooks), then 'plangate doctor'",
        "first task: plangate init TASK-0001, write and review the plan, approve it "
        "('plangate c3 issue'), commit it, then 'plangate task start TASK-0001' for an IDE "
        "agent or 'plangate exec TASK-0001 -- <agent>'",
    ]
