"""The pull request as a CI event names it: pure reading of a GitHub event file.

``plangate delivery assess`` needs no hand-written snapshot: in a workflow run
for a pull request, GitHub writes the event to the file named by
``GITHUB_EVENT_PATH`` (its name is ``GITHUB_EVENT_NAME``). :func:`parse_event`
reads from it what only the forge knows (the pull request's number, title,
body, base and head commits, its mergeable flag and, for a review event, the
review's state and commit); git supplies the rest (the changed paths, see
:mod:`plangate.delivery.service`). :func:`snapshot_object` puts both together
as the snapshot the state machine judges, validated by the snapshot's own
contract (:mod:`plangate.delivery.pr_snapshot`).

Every problem is a usage error (exit 2) with its reason code:
``DELIVERY_EVENT_INVALID`` (not JSON, a field missing or of the wrong type, a
commit id that is not a full one) and ``DELIVERY_EVENT_WRONG_TYPE`` (an event
that is not about a pull request, such as ``push``). Nothing is guessed: an
event without a review is not an approved review, and a mergeable flag GitHub
has not computed yet (``null``) is measured with git by the caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plangate.canonical import StrictJSONError, strict_loads_object
from plangate.errors import UsageError
from plangate.records import NamedTuple
from plangate.shapes import is_full_sha

PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target", "pull_request_review")
"""The event names that describe one pull request (``GITHUB_EVENT_NAME``)."""

REVIEW_EVENT = "pull_request_review"

MAX_EVENT_BYTES = 16 * 1024 * 1024
"""Largest event file read (GitHub's own payloads stay far below it)."""

MAX_PR_TEXT = 65536
"""Longest title or body kept (GitHub's own limit for a body)."""

_HINT = ("pass the file GitHub names in GITHUB_EVENT_PATH for a pull_request or "
         "pull_request_review workflow run, or give --base, --head and --pr")


class PullRequestEvent(NamedTuple):
    """What a pull-request event says about its pull request.

    ``mergeable`` is True, False or None (not computed yet); ``review_state`` and
    ``review_sha`` are empty unless the event is a review.
    """

    name: str
    number: int
    title: str
    body: str
    base_sha: str
    head_sha: str
    mergeable: bool | None = None
    review_state: str = ""
    review_sha: str = ""


def _invalid(message: str) -> UsageError:
    return UsageError("DELIVERY_EVENT_INVALID", f"the CI event is malformed: {message}", _HINT)


def _wrong_type(message: str) -> UsageError:
    return UsageError("DELIVERY_EVENT_WRONG_TYPE", message, _HINT)


def check_event_name(name: str | None) -> str | None:
    """``name`` when it is a pull-request event name (or None: not given), else the refusal."""
    if name is None or name == "" or name in PULL_REQUEST_EVENTS:
        return name or None
    raise _wrong_type(
        f"the CI event is {name!r}, not a pull-request event ({', '.join(PULL_REQUEST_EVENTS)})"
    )


def _object(obj: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = obj.get(key)
    if not isinstance(value, dict):
        raise _invalid(f"{where}{key} must be an object")
    return value


def _sha(obj: dict[str, Any], key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not is_full_sha(value):
        raise _invalid(f"{where}{key} must be a full lowercase commit id, got {value!r:.60}")
    return value


def _number(event: dict[str, Any], pull: dict[str, Any]) -> int:
    numbers = [v for v in (event.get("number"), pull.get("number")) if v is not None]
    if not numbers or any(
        not isinstance(n, int) or isinstance(n, bool) or n < 1 for n in numbers
    ):
        raise _invalid("the pull request's number must be a positive integer")
    if len(set(numbers)) != 1:
        raise _invalid(f"number {numbers[0]} and pull_request.number {numbers[1]} differ")
    return int(numbers[0])


def _text(pull: dict[str, Any], key: str, *, nullable: bool) -> str:
    value = pull.get(key)
    if value is None and nullable:
        return ""
    if not isinstance(value, str):
        raise _invalid(f"pull_request.{key} must be a string")
    return value[:MAX_PR_TEXT]


def _mergeable(pull: dict[str, Any]) -> bool | None:
    value = pull.get("mergeable")
    if value is not None and not isinstance(value, bool):
        raise _invalid("pull_request.mergeable must be true, false or null")
    return value


def _review(event: dict[str, Any]) -> tuple[str, str]:
    review = _object(event, "review", "")
    state = review.get("state")
    if not isinstance(state, str) or not state:
        raise _invalid("review.state must be a non-empty string")
    return state.lower(), _sha(review, "commit_id", "review.")


def parse_event(data: bytes, name: str | None = None) -> PullRequestEvent:
    """The pull request an event file describes (see the module docstring); pure.

    ``name`` is the event's name when the CI system gives it (``GITHUB_EVENT_NAME``);
    without it, an event with a ``review`` object is a review, any other event with
    a ``pull_request`` object a pull-request event.
    """
    name = check_event_name(name)
    try:
        event = strict_loads_object(data, "the CI event")
    except StrictJSONError as exc:
        raise _invalid(f"{exc.code}: {exc.message}") from None
    if not isinstance(event.get("pull_request"), dict):
        raise _wrong_type(
            "the CI event has no pull_request object: it is not about a pull request "
            "(a push or a scheduled run has none)"
        )
    pull = event["pull_request"]
    if name is None:
        name = REVIEW_EVENT if "review" in event else "pull_request"
    review_state, review_sha = _review(event) if name == REVIEW_EVENT else ("", "")
    return PullRequestEvent(
        name=name,
        number=_number(event, pull),
        title=_text(pull, "title", nullable=False),
        body=_text(pull, "body", nullable=True),
        base_sha=_sha(_object(pull, "base", "pull_request."), "sha", "pull_request.base."),
        head_sha=_sha(_object(pull, "head", "pull_request."), "sha", "pull_request.head."),
        mergeable=_mergeable(pull),
        review_state=review_state,
        review_sha=review_sha,
    )


def parse_check(text: str) -> tuple[str, str]:
    """``NAME=CONCLUSION`` of ``--check`` (a check that ran on the head), or the refusal."""
    name, sep, conclusion = text.partition("=")
    if not sep or not name.strip() or not conclusion.strip():
        raise UsageError(
            "DELIVERY_CHECK_INVALID",
            f"--check {text!r} is not NAME=CONCLUSION",
            "e.g. --check tests=success (in a workflow: --check tests=${{ needs.tests.result }})",
        )
    return name.strip(), conclusion.strip().lower()


def snapshot_object(
    event: PullRequestEvent,
    task_id: str,
    changed_files: Sequence[str],
    *,
    mergeable: bool | None,
    checks: Sequence[tuple[str, str]] = (),
    dod_evaluated: bool = False,
) -> dict[str, Any]:
    """The snapshot the state machine judges, from the event and what git measured (pure).

    ``checks`` ran on the head commit; without a review in the event the review is
    ``none`` (never an approval); the findings are those recorded nowhere else (none).
    """
    merge_state = {True: "MERGEABLE", False: "CONFLICTING", None: "UNKNOWN"}[mergeable]
    return {
        "task_id": task_id,
        "pr_number": event.number,
        "head_sha": event.head_sha,
        "mergeable": merge_state,
        "checks": [
            {"name": name, "sha": event.head_sha, "conclusion": conclusion}
            for name, conclusion in checks
        ],
        "review": {
            "state": event.review_state or "none",
            "sha": event.review_sha or event.head_sha,
        },
        "findings": [],
        "changed_files": list(changed_files),
        "escalation_flags": [],
        "dod_evaluated": dod_evaluated,
    }
