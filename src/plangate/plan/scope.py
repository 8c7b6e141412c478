"""The task's scope: the allowed and denied paths of an approved ``plan.md``, derived once.

The hooks, exec, ``ci check``, delivery and the arbiter all ask the same
question ("may this task change this path?") and get the same answer from
:func:`derive_scope` and :meth:`TaskScope.allows`: a pure function over the
exact bytes of ``plan.md`` that were verified. Every problem (unreadable, not
UTF-8, a non-canonical path, no path at all) is a scope of ``None`` with a
reason: an undefined scope allows nothing, never everything. A path the plan
says not to touch is refused even when an allowed pattern covers it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache

from plangate.canonical import digest, is_digest
from plangate.errors import PlanGateError
from plangate.paths import CanonicalPath, canonical_path, compiled_patterns, match_any
from plangate.records import NamedTuple
from plangate.verdict import Reason

SCOPE_UNDEFINED = "SCOPE_UNDEFINED"
"""Reason code of every scope problem; callers re-code it in their own vocabulary."""


class TaskScope(NamedTuple):
    """The allowed-path patterns of a plan and its denied ones, or why there are none."""

    patterns: tuple[str, ...] | None
    problem: Reason | None = None
    denied: tuple[str, ...] = ()

    @property
    def defined(self) -> bool:
        """True when the plan names at least one valid path."""
        return self.patterns is not None

    @property
    def problem_text(self) -> str:
        """The problem's message, or ``""`` for a defined scope."""
        return self.problem.message if self.problem is not None else ""

    def denies(self, path: str) -> str | None:
        """The denied pattern that matches ``path`` or a directory above it, or None.

        Matched case-insensitively: a path the plan says not to touch is refused
        under every spelling of its case, and everything under a denied path is
        denied with it. A path that is not canonical raises
        :class:`plangate.paths.PathRejected`.
        """
        if not self.denied:
            return None
        return self.denies_canonical(canonical_path(path))

    def denies_canonical(self, path: CanonicalPath) -> str | None:
        """:meth:`denies` for a path :func:`plangate.paths.canonical_path` already accepted."""
        if not self.denied:
            return None
        compiled = compiled_patterns(self.denied, casefold=True)
        if compiled is None:  # an invalid pattern: refused in match_any's order
            parts = path.split("/")
            for end in range(len(parts), 0, -1):
                hit = match_any(self.denied, "/".join(parts[:end]), casefold=True)
                if hit is not None:
                    return hit
            return None
        return compiled.first_in_prefixes(path)

    def allows(self, path: str) -> bool:
        """True when an allowed pattern matches ``path`` and no denied pattern does.

        The one matching rule of the scope: an undefined scope allows nothing, and
        :meth:`denies` wins over every allowed pattern.
        """
        if self.patterns is None or match_any(self.patterns, path) is None:
            return False
        return self.denies(path) is None

    def allows_canonical(self, path: CanonicalPath) -> bool:
        """:meth:`allows` for a path :func:`plangate.paths.canonical_path` already accepted
        (a check that validated its paths once matches them without validating again)."""
        if not self.patterns:
            return False
        compiled = compiled_patterns(self.patterns)  # case-sensitive: never over-allowing
        if compiled is None:
            return self.allows(path)
        if compiled.first_canonical(path) is None:
            return False
        return self.denies_canonical(path) is None

    @property
    def digest(self) -> str | None:
        """:func:`scope_digest` of this scope, or None when it is undefined."""
        if self.patterns is None:
            return None
        return _tuple_digest(tuple(self.patterns), tuple(self.denied))

    def outside(self, paths: object) -> list[str]:
        """The paths of ``paths`` (an iterable of canonical paths) this scope does not allow."""
        return [p for p in paths if not self.allows(p)]  # type: ignore[attr-defined]


TASK_DIR_PREFIX = "docs/working/"
"""Where every task's own directory (its Plan Package, approvals, logs) lives."""


def task_directory(task_id: str) -> str:
    """``docs/working/<task_id>/``: the prefix of every path of the task's own directory."""
    return f"{TASK_DIR_PREFIX}{task_id}/"


def belongs_to_task(path: str, task_ids: Iterable[str]) -> bool:
    """True when ``path`` lies in the own directory of one of ``task_ids``.

    A task's own directory is the task itself (its Plan Package, signatures,
    statements): judged by the task's verification, never a scope change.
    """
    return any(path.startswith(task_directory(task_id)) for task_id in task_ids)


def outside_scopes(
    paths: Iterable[str], scopes: Mapping[str, TaskScope],
    *, exempt: Callable[[str], bool] = lambda _path: False, canonical: bool = False,
) -> list[str]:
    """The changed ``paths`` that the tasks of ``scopes`` (task id -> scope) may not change (pure).

    The one answer to "is this changed path in scope" for ``ci check``, exec, the
    hooks (commits since the approved commit) and ``delivery assess``. A path is
    inside when it lies in one of the tasks' own directories
    (:func:`belongs_to_task`), when the caller ``exempt``-s it (files the tasks'
    verification covers, PlanGate's own files), or when at least one task's scope
    allows it and no task's scope denies it. An undefined scope allows nothing; with
    no scope at all, every other path is outside. ``canonical``: the caller validated every
    path already (:func:`plangate.paths.canonical_paths`), so they are matched as they are.
    """
    defined = [scope for scope in scopes.values() if scope.defined]
    own = tuple(task_directory(task_id) for task_id in scopes)  # belongs_to_task's prefixes
    if not defined:  # no scope allows anything: every path not inside or exempt is outside
        return [p for p in paths if not (own and p.startswith(own)) and not exempt(p)]
    out: list[str] = []
    for path in paths:
        if path.startswith(own) or exempt(path):
            continue
        if canonical:
            known = CanonicalPath(path)
            allowed = any(scope.allows_canonical(known) for scope in defined)
            denied = allowed and any(scope.denies_canonical(known) is not None for scope in defined)
        else:
            allowed = any(scope.allows(path) for scope in defined)
            denied = allowed and any(scope.denies(path) is not None for scope in defined)
        if not allowed or denied:
            out.append(path)
    return out


def _undefined(message: str) -> TaskScope:
    return TaskScope(None, Reason(SCOPE_UNDEFINED, message,
                                  "list the paths the task may change under "
                                  "'## Files / Components to Touch' in plan.md "
                                  "('plangate plan lint TASK' shows what is read)"))


def scope_digest(allowed: tuple[str, ...] | list[str], denied: tuple[str, ...] | list[str]) -> str:
    """``sha256:`` of the canonical JSON ``{"allowed": [...], "denied": [...]}``, in plan order.

    What a reviewer approves (``plangate review mark`` and ``plangate plan lint``
    print both lists) and what the record, the markers and every enforcing step
    compare: a different reading of the same plan bytes gives a different digest.
    """
    return digest({"allowed": list(allowed), "denied": list(denied)})


@lru_cache(maxsize=8)
def _tuple_digest(allowed: tuple[str, ...], denied: tuple[str, ...]) -> str:
    # a scope's digest is asked by the acceptor and again by the scope binding: once per scope
    return scope_digest(allowed, denied)


SCOPE_NOT_APPROVED = "SCOPE_NOT_APPROVED"
SCOPE_DIGEST_MISMATCH = "SCOPE_DIGEST_MISMATCH"
_REAPPROVE = (
    "run 'plangate plan lint TASK' to see the scope, then review and approve it again "
    "('plangate review mark', 'plangate c3 issue'): the new record carries its digest"
)


def check_scope_binding(scope: TaskScope, record: object) -> Reason | None:
    """Why ``scope`` (derived now) is not the scope the record approved, or None (pure).

    ``record`` is the parsed c3 record. A record without ``scope_digest`` (issued
    before the field existed) approves plan bytes, not a scope: refused with
    ``SCOPE_NOT_APPROVED``. A malformed or different digest is
    ``SCOPE_DIGEST_MISMATCH``. An undefined scope is left to the caller (it
    allows nothing anyway).
    """
    if scope.patterns is None:
        return None
    recorded = record.get("scope_digest") if isinstance(record, dict) else None
    if recorded is None:
        return Reason(SCOPE_NOT_APPROVED,
                      "the approval record has no scope_digest: it approved the plan's bytes "
                      "before the derived scope was part of the approval", _REAPPROVE)
    current = scope.digest
    if not is_digest(recorded) or recorded != current:
        return Reason(SCOPE_DIGEST_MISMATCH,
                      f"the scope derived from plan.md now ({current}) is not the scope the "
                      f"record approved ({recorded!r})", _REAPPROVE)
    return None


def derive_scope(plan: bytes | None) -> TaskScope:
    """The scope of the ``plan.md`` bytes given (None: the plan could not be read).

    Remembered per bytes (a pure function): one process that checks the record's
    scope digest and then enforces the scope parses the plan once.
    """
    return _derive_scope(plan)


@lru_cache(maxsize=8)
def _derive_scope(plan: bytes | None) -> TaskScope:
    from plangate.plan.loopspec import extract_scope

    if plan is None:
        return _undefined("plan.md is unreadable")
    try:
        text = plan.decode("utf-8")
    except UnicodeDecodeError:
        return _undefined("plan.md is not UTF-8")
    try:
        allowed, denied = extract_scope(text)
    except PlanGateError as exc:
        return _undefined(f"{exc.code}: {exc.message}")
    if not allowed:
        return _undefined("the plan's '## Files / Components to Touch' section lists no path")
    return TaskScope(tuple(allowed), None, tuple(denied))
