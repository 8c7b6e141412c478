"""``plangate setup``: switch PlanGate on in a repository, in one idempotent step.

What it writes, each only when missing or different (a second run changes nothing):

1. ``.plangate/protected-surfaces.toml`` from the bundled template, with the
   template's marker line removed: this explicit step is what turns the template
   into the repository's own definition (the command shows every pattern first);
2. the trust root (``.plangate/trust.toml``, ``.plangate/allowed_signers``) when
   keys are given (``--approver NAME=KEY.pub``, ``--reviewer NAME=KEY.pub``), through
   :mod:`plangate.authority.service`; ``--require-signatures`` turns signatures on;
3. ``.gitignore`` entries for what is never committed (:data:`IGNORED`: the ledger,
   locks, task sessions, exec's runs, run logs, a developer's local Claude Code settings);
4. the hook configuration of the hosts asked for (``plangate hooks install``: it
   creates the ledger and records the installation).

Steps 1 and 2 change authority; :func:`preview` says what would change so the
command can show it and ask a human before :func:`apply_setup` writes anything.
:func:`first_commits` is the order of the first commits a team makes.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from plangate.errors import InputRejected, UsageError
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
    """What :func:`apply_setup` would change."""

    surfaces: bytes | None
    """The surfaces file to write (None: the repository already has its own)."""
    surfaces_entries: tuple[tuple[str, str, str], ...]
    """``(pattern, class, reason)`` of every entry of the definition in force after setup."""
    trust_init: bool
    principals: tuple[Principal, ...]
    require_signatures: bool
    ignore_lines: tuple[str, ...]

    @property
    def changes_authority(self) -> bool:
        """Surfaces or trust root would be written: a human confirms first."""
        return (
            self.surfaces is not None
            or self.trust_init
            or bool(self.principals)
            or self.require_signatures
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


def preview(
    root: Path, principals: list[Principal], *, require_signatures: bool = False
) -> Preview:
    """What setup would change in the repository at ``root`` (nothing is written)."""
    from plangate.authority.trustpaths import SIGNERS_RELPATH, TRUST_RELPATH
    from plangate.surfaces import load_surfaces_bytes, resolve_surfaces

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
    trust_exists = (root / TRUST_RELPATH).exists() and (root / SIGNERS_RELPATH).exists()
    known: set[str] = set()
    if trust_exists and principals:
        from plangate.authority.service import load_worktree

        _config, signers = load_worktree(root)
        known = {e.principal for e in signers.entries}
    new = tuple(p for p in principals if p.name not in known)
    needs_trust = bool(new) or require_signatures
    return Preview(
        surfaces,
        entries,
        needs_trust and not trust_exists,
        new,
        require_signatures,
        _missing_ignores(root),
    )


class Step(NamedTuple):
    """One thing setup did."""

    what: str
    path: str
    action: str


def apply_setup(
    root: Path,
    env: Mapping[str, str],
    plan: Preview,
    hosts: list[str],
    *,
    python: str | None = None,
    local_python: bool = False,
) -> list[Step]:
    """Write what :func:`preview` found missing, then install the hooks of ``hosts``."""
    from plangate.fsutil import atomic_write_in

    steps: list[Step] = []
    if plan.surfaces is not None:
        atomic_write_in(root, SURFACES_RELPATH, plan.surfaces)
        steps.append(Step("protected surfaces", SURFACES_RELPATH, "written"))
    else:
        steps.append(Step("protected surfaces", SURFACES_RELPATH, "unchanged"))
    steps += _trust(root, plan)
    steps.append(_gitignore(root, plan.ignore_lines))
    if hosts:
        from plangate.hooks.install import apply

        for change in apply(
            root, hosts, install=True, python=python, env=env, local_python=local_python
        ):
            steps.append(Step(f"{change.host} hooks", change.path, change.action))
    return steps


def _trust(root: Path, plan: Preview) -> list[Step]:
    from plangate.authority import service
    from plangate.authority.trustpaths import TRUST_RELPATH

    if not (plan.trust_init or plan.principals or plan.require_signatures):
        return []
    steps: list[Step] = []
    if plan.trust_init:
        service.init(root, trust_branch="main", force=False)
        steps.append(Step("trust root", TRUST_RELPATH, "written"))
    for principal in plan.principals:
        service.add(
            root,
            principal.name,
            principal.key_line,
            roles=[principal.role],
            human=True,
            agent=False,
            namespaces=None,
            valid_after=None,
            valid_before=None,
        )
        steps.append(Step(f"trust root: {principal.role} {principal.name}", TRUST_RELPATH, "added"))
    if plan.require_signatures:
        service.set_required(root, True)
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
    )
    return [rel for rel in candidates if (root / rel).is_file()]


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
