"""``.plangate/policy.toml``: what a pull request without a task may change (strict parse, pure).

Without this file a pull request that touches no task is refused
(``CI_NO_TASK``): every change needs an approved task. A repository may
name, by glob, the changes it lets through without one, and whether a human
must approve them:

.. code-block:: toml

    [[taskless]]
    name = "docs"                        # named in the verdict
    paths = ["docs/**", "*.md"]          # the glob patterns of scopes and surfaces
    human = false                        # no reviewer needed (default: true)

    [[taskless]]
    name = "dependencies"
    paths = ["pyproject.toml", "requirements*.txt", "uv.lock"]
    human = true                         # HUMAN_REQUIRED: a reviewer approves it

``ci check`` reads the file at the pull request's **base** commit: a pull
request never judges itself by its own version. A change to the file is a
human's decision (``CI_POLICY_CHANGED``). The patterns never reach PlanGate's
own files (``.plangate/``) nor a task's directory, and they never lift a
protected surface: a protected path a rule allows still needs a human.

Every key is checked: an unknown key is ``PR_POLICY_UNKNOWN_KEY``; a value of
the wrong type, a pattern that is not a repository glob (absolute, ``..``, a
backslash) or a file that is not TOML is ``PR_POLICY_INVALID``.
:func:`parse_policy` checks the bytes; :func:`taskless_rule_for` matches a path.
"""

from __future__ import annotations

from collections.abc import Mapping

from plangate.errors import InputRejected
from plangate.paths import match_any, validate_pattern
from plangate.records import NamedTuple

POLICY_RELPATH = ".plangate/policy.toml"
"""The repository's pull-request policy, read at the pull request's base commit."""

MAX_POLICY_BYTES = 64 * 1024

POLICY_INVALID = "PR_POLICY_INVALID"
POLICY_UNKNOWN_KEY = "PR_POLICY_UNKNOWN_KEY"

NEVER_TASKLESS = (".plangate/**", "docs/working/**")
"""Paths no rule lets through without a task: PlanGate's own files and the tasks."""

_TOP_KEYS = ("taskless",)
_RULE_KEYS = ("name", "paths", "human")
_HINT = f"fix {POLICY_RELPATH} (see docs/agents.md, 'A pull request without a task')"


class TasklessRule(NamedTuple):
    """One kind of change a pull request may make without a task."""

    name: str
    paths: tuple[str, ...]
    human: bool = True


class PullRequestPolicy(NamedTuple):
    """The policy in force; the default (no file) lets nothing through without a task."""

    taskless: tuple[TasklessRule, ...] = ()


STRICT = PullRequestPolicy()
"""No policy file: every change needs an approved task."""


def _bad(where: str, detail: str, code: str = POLICY_INVALID, hint: str = _HINT) -> InputRejected:
    return InputRejected(code, f"{where}: {detail}", hint)


def _unknown(where: str, table: Mapping[str, object], known: tuple[str, ...], what: str) -> None:
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise _bad(where, f"unknown key(s) {', '.join(unknown)} {what}", POLICY_UNKNOWN_KEY,
                   f"known keys {what}: {', '.join(known)}")


def _pattern(where: str, name: str, value: object) -> str:
    try:
        pattern = validate_pattern(value)
    except InputRejected as exc:
        raise _bad(where, f"taskless {name!r}: {exc.code}: {exc.message}",
                   hint="write repository globs: 'docs/**', '*.md' (no '/' at either end, "
                   "no '..')") from None
    return pattern


def _rule(where: str, index: int, entry: object) -> TasklessRule:
    if not isinstance(entry, dict):
        raise _bad(where, f"taskless entry {index + 1} is not a table")
    _unknown(where, entry, _RULE_KEYS, f"in taskless entry {index + 1}")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip() or not name.isprintable():
        raise _bad(where, f"taskless entry {index + 1}: name must be a non-empty string")
    paths = entry.get("paths")
    if not isinstance(paths, list) or not paths:
        raise _bad(where, f"taskless {name!r}: paths must be a non-empty list of patterns")
    human = entry.get("human", True)
    if not isinstance(human, bool):
        raise _bad(where, f"taskless {name!r}: human must be true or false")
    return TasklessRule(name, tuple(_pattern(where, name, p) for p in paths), human)


def parse_policy(data: bytes, where: str = POLICY_RELPATH) -> PullRequestPolicy:
    """The policy in ``data``; anything malformed, unknown or ambiguous is refused.

    ``where`` names the file in messages (e.g. ``.plangate/policy.toml@<commit>``).
    """
    import tomllib  # only when a policy is committed: most CI jobs' processes never parse one

    if len(data) > MAX_POLICY_BYTES:
        raise _bad(where, f"{len(data)} bytes (limit {MAX_POLICY_BYTES})")
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise _bad(where, f"not valid TOML: {exc}") from None
    _unknown(where, table, _TOP_KEYS, "at the top level")
    entries = table.get("taskless", [])
    if not isinstance(entries, list):
        raise _bad(where, "taskless must be an array of tables ([[taskless]])")
    rules = tuple(_rule(where, i, e) for i, e in enumerate(entries))
    names = [r.name for r in rules]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise _bad(where, f"taskless name(s) {', '.join(map(repr, twice))} given twice")
    return PullRequestPolicy(rules)


def taskless_rule_for(policy: PullRequestPolicy, path: str) -> TasklessRule | None:
    """The first rule that lets ``path`` (canonical) change without a task, or None.

    PlanGate's own files and the task directories (:data:`NEVER_TASKLESS`) never match.
    """
    if match_any(NEVER_TASKLESS, path) is not None:
        return None
    for rule in policy.taskless:
        if match_any(rule.paths, path) is not None:
            return rule
    return None


SUGGESTED_POLICY = f"""\
# {POLICY_RELPATH}: what a pull request that touches no task may change.
# Without this file every change needs an approved task (CI_NO_TASK).
# ci check reads it at the pull request's base commit; a change to it goes to a human.
# Protected surfaces still need a human, whatever a rule here allows.

[[taskless]]
name = "docs"
paths = ["docs/**", "*.md"]
human = false

[[taskless]]
name = "dependencies"
paths = ["pyproject.toml", "requirements*.txt", "requirements/**", "uv.lock", "poetry.lock"]
human = true
"""
"""The common set a team starts from (``plangate setup`` prints it)."""
