"""The one decision every hook asks: may this action happen now?

:func:`decide` is pure. It sees facts the service layer has already read
(protected surfaces, the active task and its verification, the task's allowed
paths, which Plan Packages are locked by a record, active override grants) and
an action with canonical target paths, and returns a :class:`Result` whose
verdict is ``ALLOW`` or ``DENY``. It opens no file, runs no git, reads no clock.

Rules, in the order their reasons are listed (every failing rule of every
target is reported, not just the first):

1. an undecidable fact (no task id, unreadable surfaces) denies every write;
2. a shell command that skips git's hooks denies, always (``HOOK_SHELL_SKIPS_HOOKS``); one
   that commits inside exec's observed box denies (``HOOK_BOX_COMMIT``: the workspace's
   ``.git`` is read-only there, PlanGate records the workspace after the run); a
   command the classifier cannot read (``HOOK_SHELL_UNCLASSIFIABLE``) or one that runs
   project code (``HOOK_SHELL_RUNS_CODE``) denies unless the operating system confines
   it (:attr:`Facts.confinement`: exec's isolated run or a host sandbox the hook saw on);
3. per target:
   a. a target that did not resolve to a canonical repository path denies;
   b. PlanGate's own state, git directories at any depth and hook configuration
      are guarded by construction, whatever the surfaces file says;
   c. a protected surface denies, task or not (case-folded match);
   d. any ``approvals/`` file of any task denies;
   e. a file of a locked Plan Package (its task has a record) denies;
   f. with no active task, only the planning files of a task may be written;
   g. with an active task, its record must verify against HEAD and the target
      must lie inside the task's LoopSpec allowed paths (case-sensitive match).
   h. a target that may be a directory or a link (it is not an existing regular
      file) and stands above a path b, c or d guard is judged as writing that path
      (:func:`ancestor_of`): ``mv d .claude`` writes ``.claude/settings.json``. A
      directory ``mkdir`` creates is empty and is exempt.
   A directory a command creates (``mkdir``) passes f and g when it is a parent of a
   path those rules allow.
4. an active override grant whose patterns match a target lifts rules f and g
   for that target only; it never lifts a, b, c, d or e.

A commit or push that adopts PlanGate (:attr:`Facts.adoption`: its base has no
protected-surfaces file and it changes only the adoption files, ``ci check``'s rule) is
allowed: before it, nothing is PlanGate's to guard, and CI sends its pull request to a
human. A tool call is never an adoption.

For effect checks, files PlanGate never blames (:mod:`plangate.ownfiles`) are no
changes, and an approval part that verifies for its own task
(:mod:`plangate.approval.parts`) is no edit; one that does not verify is reported
(``HOOK_APPROVAL_PART_UNVERIFIED``) beside the rules it breaks.

For effect checks (PostToolUse, Stop, pre-commit, pre-push) the active task's
own ``approvals/c3.json`` and six planning files are not "edits" when its
record verifies: the verification proved they are the approved bytes, so no
rule applies to them (the bundled surfaces protect ``**/approvals/**``, and a
fresh record is usually uncommitted while the agent runs).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from enum import StrEnum
from functools import lru_cache
from typing import TYPE_CHECKING

from plangate.ownfiles import HISTORY, WORKTREE, never_blamed
from plangate.paths import PathRejected, match_any
from plangate.plan.scope import TaskScope
from plangate.records import NamedTuple
from plangate.verdict import Reason, Result

if TYPE_CHECKING:
    from plangate.surfaces import ProtectedPattern, ResolvedSurfaces

ALLOW = "ALLOW"
DENY = "DENY"

PLANNING_FILES: tuple[str, ...] = (
    "pbi-input.md",
    "plan.md",
    "todo.md",
    "test-cases.md",
    "review-self.md",
    "review-external.md",
)
"""The six Plan Package artifacts: the only files writable without an active task."""

RECORD_NAME = "approvals/c3.json"
_TASK_FILE_RE = re.compile(r"docs/working/(TASK-[0-9]{4})/(.+)")
_APPROVALS_RE = re.compile(r"docs/working/[^/]+/approvals(?:/.*)?", re.IGNORECASE)

GUARDED: tuple[tuple[str, str, str], ...] = (
    (".plangate/**", "HOOK_PLANGATE_STATE", "PlanGate's own state (ledger, surfaces, config)"),
    ("**/.git", "HOOK_GIT_INTERNALS", "git's internal directory"),
    ("**/.git/**", "HOOK_GIT_INTERNALS", "git's internal directory (hooks, refs, index)"),
    (".claude/settings.json", "HOOK_CONFIG_FILE", "Claude Code hook configuration"),
    (".claude/settings.local.json", "HOOK_CONFIG_FILE", "Claude Code hook configuration"),
    (".codex/hooks.json", "HOOK_CONFIG_FILE", "Codex hook configuration"),
    (".codex/config.toml", "HOOK_CONFIG_FILE", "Codex configuration"),
    (".cursor/hooks.json", "HOOK_CONFIG_FILE", "Cursor hook configuration"),
)
"""Paths no agent action may write, independent of the protected-surfaces file.

``.git`` is guarded at every depth: a nested repository's ``config`` or ``hooks/``
(or a ``.git`` file pointing elsewhere) runs code at the next git command there."""

APPROVALS_PATTERN = "docs/working/*/approvals/**"
"""The approval records of every task, as a pattern (for the ancestor rule)."""

LIFTABLE = frozenset(
    {"HOOK_NO_ACTIVE_TASK", "HOOK_OUTSIDE_SCOPE", "HOOK_SCOPE_UNDEFINED", "HOOK_TASK_NOT_VERIFIED"}
)
"""Reason codes an override grant may lift (never a protected or guarded path)."""


DOCTOR_PROBE_ENV = "PLANGATE_DOCTOR_PROBE"
"""Set (to ``1``) by ``plangate doctor`` for the hook commands it probes with canaries."""

PROBE_FIELD = "probe"
"""The ``hook_decision`` payload field that marks a decision as a probe, at its source."""

DOCTOR_PROBE = "doctor"
"""The value of :data:`PROBE_FIELD` for doctor's canaries: the report and status count
such a decision as a probe, never as a refusal of an agent (the decision itself is the
same: a probed hook denies what it would deny anyway)."""


class ActionKind(StrEnum):
    """What the agent (or git) is about to do."""

    READ = "read"
    WRITE = "write"
    SHELL = "shell"
    EFFECT = "effect"
    COMMIT = "commit"
    PUSH = "push"


class Target(NamedTuple):
    """One target: the raw text and its canonical path, or why it has none."""

    raw: str
    path: str | None
    rejection: Reason | None = None
    directory: bool = False
    """A directory the action creates: the parent of an allowed path is allowed."""
    regular_file: bool = False
    """The path is an existing regular file (not a link, not a directory): nothing lies
    beneath it, so the ancestor rule does not apply. Unknown counts as False."""


class Action(NamedTuple):
    """An action to judge: its kind, its targets and, for shell, what was unreadable."""

    kind: ActionKind
    targets: tuple[Target, ...] = ()
    unclassifiable: tuple[str, ...] = ()
    label: str = ""
    unclassifiable_code: str = "HOOK_SHELL_UNCLASSIFIABLE"
    """``HOOK_SHELL_UNCLASSIFIABLE``, ``HOOK_TOOL_UNKNOWN`` or ``HOOK_PATCH_UNREADABLE``."""
    runs_code: tuple[str, ...] = ()
    """Why the shell command runs project code (allowed only when confined)."""
    skips_hooks: tuple[str, ...] = ()
    """Hook-skipping flags in the shell command (always denied)."""
    commits: bool = False
    """The shell command records a commit (``git commit``)."""


UNCLASSIFIABLE_TEXT: dict[str, tuple[str, str]] = {
    "HOOK_SHELL_UNCLASSIFIABLE": (
        "the shell command cannot be classified, so its writes are unknown",
        "use the editor tools for writes or plain commands with literal words; run anything "
        "else inside 'plangate exec' (the isolated run) or the host sandbox",
    ),
    "HOOK_TOOL_UNKNOWN": (
        "the tool is not one PlanGate can judge, so its writes are unknown",
        "use the host's own file tools; a human declares read-only MCP tools in "
        ".plangate/tools.toml or runs other tools outside the agent",
    ),
    "HOOK_TOOL_POLICY_INVALID": (
        "the repository's tool policy cannot be read, so no MCP tool is declared read-only",
        "a human fixes .plangate/tools.toml ([mcp] read_only = [names or globs])",
    ),
    "HOOK_PATCH_UNREADABLE": (
        "the patch names no file PlanGate can read, so its writes are unknown",
        "send a well-formed apply_patch text ('*** Begin Patch' and file headers)",
    ),
    "HOOK_STDIN_UNJUDGEABLE": (
        "text typed into a running program cannot be judged, so its writes are unknown",
        "run each command as its own shell call (exec_command) so the hook sees it whole",
    ),
    "HOOK_AGENT_UNHOOKED": (
        "the agent would run where this repository's hooks do not judge its calls",
        "start the agent without isolation, or let a human run it outside the agent session",
    ),
}


class TaskFacts(NamedTuple):
    """The active task as the service found it."""

    task_id: str
    source: str
    verified: bool
    verification_codes: tuple[str, ...] = ()
    verification_message: str = ""
    allowed_paths: tuple[str, ...] | None = None
    scope_problem: str = ""
    denied_paths: tuple[str, ...] = ()


class OverrideGrant(NamedTuple):
    """An active, human-granted override (already filtered for expiry and revocation)."""

    grant_id: str
    patterns: tuple[str, ...]
    one_shot: bool = False


class Facts(NamedTuple):
    """Everything :func:`decide` may use, read once by the service layer.

    The fact and action types are ``NamedTuple`` rather than dataclasses on
    purpose: creating a dataclass costs about twenty times more at import, and
    the hooks pay every import on every tool call.
    """

    surfaces: ResolvedSurfaces | None
    """The protected surfaces to match (``None`` when none could be resolved)."""
    surfaces_problem: str = ""
    task: TaskFacts | None = None
    task_problem: Reason | None = None
    locked_tasks: frozenset[str] = frozenset()
    overrides: tuple[OverrideGrant, ...] = ()
    confinement: str = ""
    """The operating-system confinement the hook established for this call
    (``exec:bubblewrap``, ``claude-sandbox``), or ``""``: none is assumed."""
    box_run: str = ""
    """The run id of exec's isolated run the hook observed itself in (``""``: none)."""
    adoption: bool = False
    """For a commit or push: the change adopts PlanGate (``ci check``'s rule,
    :func:`plangate.delivery.ci.adoption_change`), which a person commits and CI sends to a
    human reviewer."""
    approval_parts: Mapping[str, Reason | None] = {}
    """For effect checks: approval parts among the targets (:mod:`plangate.approval.parts`),
    each None when it verified for its own task, else why it did not."""


class _Collector:
    """Reasons by code in first-seen order, each with its evidence once, in first-seen order.

    Evidence is kept in a dict used as an ordered set, so collecting stays linear
    in the number of targets.
    """

    def __init__(self) -> None:
        self.reasons: dict[str, dict[str, None]] = {}
        self.messages: dict[str, tuple[str, str]] = {}

    def add(self, code: str, message: str, hint: str, evidence: str) -> None:
        if code not in self.reasons:
            self.reasons[code] = {}
            self.messages[code] = (message, hint)
        if evidence:
            self.reasons[code][evidence] = None

    def result_reasons(self) -> tuple[Reason, ...]:
        out = []
        for code, seen in self.reasons.items():
            evidence = list(seen)
            message, hint = self.messages[code]
            if evidence:
                message = f"{message}: {', '.join(evidence[:8])}" + (
                    f" (+{len(evidence) - 8} more)" if len(evidence) > 8 else ""
                )
            out.append(Reason(code, message, hint, tuple(evidence)))
        return tuple(out)


def planning_file_task(path: str) -> str | None:
    """Task id when ``path`` is one of the six planning files of a task, else None."""
    match = _TASK_FILE_RE.fullmatch(path)
    if match is None or match.group(2) not in PLANNING_FILES:
        return None
    return match.group(1)


def is_approvals_path(path: str) -> bool:
    """True for ``docs/working/<anything>/approvals`` and everything under it."""
    return _APPROVALS_RE.fullmatch(path) is not None


def effect_exempt(path: str, kind: ActionKind = ActionKind.EFFECT) -> bool:
    """True when ``path`` is not counted as a change by an effect-like check of ``kind``:
    the files PlanGate never blames (:func:`plangate.ownfiles.never_blamed`). A working
    tree check skips PlanGate's runtime state and host-local settings; a commit or push
    skips only PlanGate's committed ignore file. Tool calls (READ, WRITE, SHELL) never."""
    if kind is ActionKind.EFFECT:
        return never_blamed(path, WORKTREE)
    if kind in (ActionKind.COMMIT, ActionKind.PUSH):
        return never_blamed(path, HISTORY)
    return False


def _parent_of_match(patterns: Iterable[str], path: str) -> bool:
    """True when ``path`` is a directory some path matching one of ``patterns`` lies in."""
    depth = path.count("/") + 1
    for pattern in patterns:
        segments = pattern.split("/")
        head = segments[:depth]
        if len(segments) <= depth and "**" not in head:
            continue
        if "**" in head:
            head = head[: head.index("**") + 1]
            if match_any(("/".join(head),), path) or match_any(("/".join(head[:-1]),), path):
                return True
            continue
        if match_any(("/".join(head),), path) is not None:
            return True
    return False


_WILDCARDS = frozenset("*?[]{}")


@lru_cache(maxsize=64)
def _ancestor_table(
    patterns: tuple[str, ...],
) -> tuple[dict[int, tuple[tuple[str, ...], dict[str, str]]], dict[str, str]]:
    """For the ancestor rule: per depth, the leading segments of each pattern that
    anchors deeper at the root (``.github/workflows/**`` gives ``.github`` at depth 1
    and ``.github/workflows`` at 2); and the literal directory segments that follow a
    ``**`` (``**/.claude/**`` gives ``.claude``), case-folded. Each maps to its pattern."""
    heads: dict[int, dict[str, str]] = {}
    names: dict[str, str] = {}
    for pattern in patterns:
        segments = pattern.split("/")
        for depth in range(1, len(segments)):
            if segments[depth - 1] == "**":
                break
            heads.setdefault(depth, {}).setdefault("/".join(segments[:depth]), pattern)
        after_globstar = False
        for segment in segments[:-1]:
            if segment == "**":
                after_globstar = True
            elif after_globstar and not _WILDCARDS.intersection(segment):
                names.setdefault(segment.casefold(), pattern)
    return {depth: (tuple(by_head), by_head) for depth, by_head in heads.items()}, names


def ancestor_of(patterns: tuple[str, ...], path: str) -> str | None:
    """The pattern ``path`` stands above, or None (the ancestor rule, docs/agents.md).

    ``path`` is a proper ancestor of a path a pattern anchors at the repository root
    (``.claude`` for ``.claude/settings.json``; ``docs/working/TASK-0001`` for
    ``docs/working/*/approvals/**``), or its last segment is a literal directory
    segment of a pattern that protects at any depth (``src/.claude`` for
    ``**/.claude/**``). Matching is case-folded; a pattern that cannot be matched
    counts as a hit.
    """
    heads, names = _ancestor_table(patterns)
    hit = names.get(path.rsplit("/", 1)[-1].casefold())
    if hit is not None:
        return hit
    at_depth = heads.get(path.count("/") + 1)
    if at_depth is None:
        return None
    candidates, pattern_of = at_depth
    try:
        head = match_any(candidates, path, casefold=True)
    except PathRejected:
        return pattern_of[candidates[0]]
    return None if head is None else pattern_of[head]


_PLANNING_PATTERNS = tuple(f"docs/working/TASK-*/{name}" for name in PLANNING_FILES)


_GUARDED_PATTERNS = tuple(pattern for pattern, _code, _what in GUARDED)
_ANCESTOR_HINT = (
    "a directory or link at this path would put files under it that no target names: "
    "a human creates, moves or replaces it outside the agent session"
)


@lru_cache(maxsize=16)
def _surface_patterns(entries: tuple[ProtectedPattern, ...]) -> tuple[str, ...]:
    return tuple(entry.pattern for entry in entries)


def _ancestor_reasons(facts: Facts, path: str) -> list[tuple[str, str, str]]:
    """Rule 3h: a directory, link or new path above a guarded path, a protected
    surface or an approval record writes what lies beneath it."""
    out: list[tuple[str, str, str]] = []
    guarded = ancestor_of(_GUARDED_PATTERNS, path)
    if guarded is not None:
        code, what = next((c, w) for p, c, w in GUARDED if p == guarded)
        out.append((code, f"the target stands above {what} ({guarded})", _ANCESTOR_HINT))
    if facts.surfaces is not None:
        protected = ancestor_of(_surface_patterns(facts.surfaces.entries), path)
        if protected is not None:
            out.append(
                (
                    "HOOK_PROTECTED_SURFACE",
                    f"the target stands above a protected surface ({protected})",
                    _ANCESTOR_HINT,
                )
            )
    if ancestor_of((APPROVALS_PATTERN,), path) is not None:
        out.append(
            (
                "HOOK_APPROVAL_FILE",
                "the target stands above approval records",
                _ANCESTOR_HINT,
            )
        )
    return out


def _target_reasons(
    facts: Facts,
    action: Action,
    path: str,
    directory: bool = False,
    regular_file: bool = False,
) -> list[tuple[str, str, str]]:
    """(code, message, hint) for every rule ``path`` breaks."""
    out: list[tuple[str, str, str]] = []
    effect_like = action.kind in (ActionKind.EFFECT, ActionKind.COMMIT, ActionKind.PUSH)
    active = facts.task
    own_verified_task = (
        active.task_id if active is not None and active.verified and effect_like else None
    )
    task_match = _TASK_FILE_RE.fullmatch(path)
    task_of_path = task_match.group(1) if task_match else None
    own_file = own_verified_task is not None and task_of_path == own_verified_task
    planning_task = planning_file_task(path)
    own_record = f"docs/working/{own_verified_task}/{RECORD_NAME}"
    if own_file and (planning_task is not None or path == own_record):
        # The verification that made the task active proved these exact bytes are
        # the approved package and its record: as effects they are not edits.
        return out
    part = facts.approval_parts.get(path, False) if effect_like else False
    if part is None:
        # It verified as a part of its own task's approval (a record that verifies,
        # a signature or statement that verifies under the trust root): not an edit.
        return out
    if isinstance(part, Reason):
        out.append((part.code, part.message, part.hint))
    for pattern, code, what in GUARDED:
        if match_any((pattern,), path, casefold=True):
            out.append(
                (
                    code,
                    f"writes to {what} are never allowed from an agent",
                    "a human changes these files outside the agent session",
                )
            )
            break
    if facts.surfaces is None:
        out.append(
            (
                "HOOK_SURFACES_UNAVAILABLE",
                "protected surfaces could not be resolved"
                + (f" ({facts.surfaces_problem})" if facts.surfaces_problem else ""),
                "add .plangate/protected-surfaces.toml ('plangate surfaces' shows the state)",
            )
        )
    elif facts.surfaces.protecting(path) is not None:
        out.append(
            (
                "HOOK_PROTECTED_SURFACE",
                "the target is a protected surface",
                "protected surfaces change only through a human-reviewed change",
            )
        )
    if is_approvals_path(path):
        out.append(
            (
                "HOOK_APPROVAL_FILE",
                "approval records are written only by plangate commands a human runs",
                "never edit approvals/ from an agent",
            )
        )
    if not (directory or regular_file):
        seen = {code for code, _m, _h in out}
        out += [r for r in _ancestor_reasons(facts, path) if r[0] not in seen]
    if planning_task is not None and planning_task in facts.locked_tasks:
        out.append(
            (
                "HOOK_PLAN_PACKAGE_LOCKED",
                "the Plan Package of an approved task is locked",
                "a human re-gates the plan: remove the record, revise, review, re-issue",
            )
        )
    if active is None:
        if directory and _parent_of_match(_PLANNING_PATTERNS, path):
            return out
        if planning_task is None and not is_approvals_path(path):
            out.append(
                (
                    "HOOK_NO_ACTIVE_TASK",
                    "no active task: only planning files may be written",
                    "get the plan approved, then run the agent through 'plangate exec'",
                )
            )
        return out
    if not active.verified:
        out.append(
            (
                "HOOK_TASK_NOT_VERIFIED",
                f"the record of {active.task_id} does not verify against HEAD"
                + (f" ({active.verification_message})" if active.verification_message else ""),
                "run 'plangate c3 verify' to see why; stale or tampered records block writes",
            )
        )
    if not active.allowed_paths:
        out.append(
            (
                "HOOK_SCOPE_UNDEFINED",
                f"the allowed paths of {active.task_id} are unknown or empty"
                + (f" ({active.scope_problem})" if active.scope_problem else ""),
                "declare the allowed paths in plan.md and re-approve",
            )
        )
    elif match_any(active.allowed_paths, path) is None and not (
        directory and _parent_of_match(active.allowed_paths, path)
    ):
        out.append(
            (
                "HOOK_OUTSIDE_SCOPE",
                f"the target is outside the allowed paths of {active.task_id}",
                "stay inside the LoopSpec scope, or ask a human for an override",
            )
        )
    else:
        denied = TaskScope(active.allowed_paths, None, active.denied_paths).denies(path)
        if denied is not None:
            out.append(
                (
                    "HOOK_DENIED_BY_PLAN",
                    f"the plan of {active.task_id} says not to touch {denied!r}",
                    "leave the path alone, or revise the plan and get it re-approved",
                )
            )
    return out


def _grant_for(overrides: Iterable[OverrideGrant], path: str) -> OverrideGrant | None:
    for grant in overrides:
        if match_any(grant.patterns, path) is not None:
            return grant
    return None


def decide(facts: Facts, action: Action) -> Result:
    """ALLOW or DENY ``action`` given ``facts`` (see the module docstring)."""
    base_facts: dict[str, object] = {
        "action": action.kind.value,
        "label": action.label,
        "task": facts.task.task_id if facts.task else None,
        "targets": [t.path if t.path is not None else t.raw for t in action.targets],
    }
    if action.kind is ActionKind.READ:
        return Result(ALLOW, (), base_facts)
    if facts.adoption and action.kind in (ActionKind.COMMIT, ActionKind.PUSH):
        # The repository has no PlanGate yet: its adoption is the one commit that writes
        # PlanGate's own files, and CI hands its pull request to a human (CI_ADOPTS_PLANGATE).
        return Result(ALLOW, (), {**base_facts, "adopts_plangate": True})
    collector = _Collector()
    if facts.task_problem is not None:
        problem = facts.task_problem
        collector.add(problem.code, problem.message, problem.hint, "")
    if action.kind is ActionKind.SHELL and action.skips_hooks:
        collector.add(
            "HOOK_SHELL_SKIPS_HOOKS",
            "the command skips git's hooks",
            "commit and push with the hooks on; a human decides about skipping them",
            "; ".join(action.skips_hooks),
        )
    if action.kind is ActionKind.SHELL and action.commits and facts.box_run:
        collector.add(
            "HOOK_BOX_COMMIT",
            "inside plangate exec's box the workspace's .git is read-only: no commit can be made",
            "leave the changes uncommitted: PlanGate records the workspace after the run and "
            "commits an accepted result itself",
            "git commit",
        )
    confined = action.kind is ActionKind.SHELL and bool(facts.confinement)
    if (
        action.kind is ActionKind.SHELL
        and action.unclassifiable
        and not (confined and action.unclassifiable_code == "HOOK_SHELL_UNCLASSIFIABLE")
    ):
        code = action.unclassifiable_code
        message, hint = UNCLASSIFIABLE_TEXT.get(
            code, UNCLASSIFIABLE_TEXT["HOOK_SHELL_UNCLASSIFIABLE"]
        )
        collector.add(code, message, hint, "; ".join(action.unclassifiable))
    if action.kind is ActionKind.SHELL and action.runs_code and not confined:
        collector.add(
            "HOOK_SHELL_RUNS_CODE",
            "the command runs project code, whose writes no rule can see",
            "run it inside 'plangate exec' (the isolated run) or with the host "
            "sandbox on (docs/agents.md, 'Host sandboxes')",
            "; ".join(action.runs_code),
        )
    used: dict[str, None] = {}
    for target in action.targets:
        if target.path is None:
            rejection = target.rejection or Reason("HOOK_TARGET_INVALID", "unresolvable target")
            collector.add(
                rejection.code,
                rejection.message,
                rejection.hint or "write only inside the repository",
                target.raw,
            )
            continue
        if effect_exempt(target.path, action.kind):
            continue
        broken = _target_reasons(
            facts, action, target.path, target.directory, target.regular_file
        )
        if broken and all(code in LIFTABLE for code, _m, _h in broken):
            grant = _grant_for(facts.overrides, target.path)
            if grant is not None:
                used[grant.grant_id] = None
                continue
        for code, message, hint in broken:
            collector.add(code, message, hint, target.path)
    reasons = collector.result_reasons()
    out_facts = dict(base_facts)
    if facts.confinement:
        out_facts["confinement"] = facts.confinement
    if used:
        out_facts["overrides_used"] = list(used)
    if reasons:
        return Result(DENY, reasons, out_facts)
    if action.kind is ActionKind.WRITE and not action.targets:
        # A write with no target at all is undecidable: never "all clear".
        return Result(
            DENY,
            (
                Reason(
                    "HOOK_NO_TARGET",
                    "the write names no target path",
                    "the tool input must carry the file path",
                ),
            ),
            out_facts,
        )
    return Result(ALLOW, (), out_facts)
