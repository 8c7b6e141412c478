"""The arbiter's IO edge: read the input, decide, record the decision, optionally issue.

Two forms, one function each:

- :func:`decide_input_form`: an arbiter input document (a file or stdin) and the
  protected surfaces (``--surfaces`` or the repository's), then the pure
  :func:`plangate.approval.arbiter.decide`;
- :func:`decide_task_form`: the input built from the repository
  (:mod:`plangate.approval.arbiter_input`), the decision, and with ``issue`` the
  c3-prime record through :func:`plangate.approval.service.issue_record` from the
  same task snapshot the input was built from.

Every decision is appended to the ledger (kind ``arbiter_decision``) unless
``ledger`` is false. A ledger that cannot be written is a warning in
:attr:`ArbiterOutcome.warnings` and never changes the decision.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from plangate.approval.arbiter import (
    ISSUED_BY,
    LITE_AXES,
    POLICY_REF,
    decide,
    parse_input,
    parse_input_bytes,
    provenance_record,
)
from plangate.clock import is_utc_timestamp, utc_now_text
from plangate.errors import InputRejected, PlanGateError, UsageError
from plangate.fsutil import read_regular_file
from plangate.shapes import is_task_id
from plangate.snapshot import find_repo_root
from plangate.verdict import Reason, Result

if TYPE_CHECKING:
    from plangate.approval.arbiter_input import BuiltInput

MAX_INPUT_BYTES = 1024 * 1024
"""Size bound of an arbiter input document (file or stdin)."""

LEDGER_KIND = "arbiter_decision"


@dataclass(frozen=True)
class ArbiterOutcome:
    """A decision, what it adds to the printed record, and the exit code."""

    result: Result
    exit_code: int
    extra: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    document: dict[str, Any] | None = None  # the built input (``print_input``), no decision


def check_timestamp(value: str | None) -> str:
    """``--timestamp`` or now (UTC); a malformed value is a usage error."""
    if value is None:
        return utc_now_text()
    if not is_utc_timestamp(value):
        raise UsageError("ARBITER_TIMESTAMP_INVALID",
                         f"--timestamp {value!r} is not YYYY-MM-DDTHH:MM:SSZ",
                         "e.g. --timestamp 2026-01-31T12:00:00Z")
    return value


def lite_axes(text: str) -> tuple[str, ...]:
    """``--lite``: a comma list of lite axes, or ``all``."""
    if text.strip() == "all":
        return LITE_AXES
    axes = tuple(a.strip() for a in text.split(",") if a.strip())
    unknown = [a for a in axes if a not in LITE_AXES]
    if unknown:
        raise UsageError("ARBITER_LITE_AXIS_UNKNOWN", f"unknown lite axis {unknown}",
                         f"use {', '.join(LITE_AXES)} or 'all'")
    return axes


def record_decision(repo_root: Path, env: Mapping[str, str], subject: str,
                    payload: dict[str, Any]) -> str | None:
    """Append the decision to the ledger; the warning to print when that is impossible."""
    if not (repo_root / ".git").exists():
        return ("plangate: warning: ARBITER_LEDGER_UNAVAILABLE: not inside a git repository; "
                "the decision was not written to the ledger")
    try:
        from plangate.ledger import open_ledger

        with open_ledger(repo_root, env) as ledger:
            ledger.append(LEDGER_KIND, subject, payload)
    except (PlanGateError, ImportError, OSError) as exc:
        code = getattr(exc, "code", type(exc).__name__)
        return (f"plangate: warning: ARBITER_LEDGER_UNAVAILABLE: {code}: {exc}; "
                "the decision stands but is not in the ledger")
    return None


def _read_input(cwd: Path, name: str, stdin: BinaryIO) -> bytes:
    if name == "-":
        data = stdin.read(MAX_INPUT_BYTES + 1)
        if len(data) > MAX_INPUT_BYTES:
            raise InputRejected("ARBITER_INPUT_UNREADABLE",
                                f"stdin input is larger than {MAX_INPUT_BYTES} bytes", "")
        return bytes(data)
    read = read_regular_file(cwd / name, MAX_INPUT_BYTES)
    if not read.ok or read.data is None:
        raise InputRejected("ARBITER_INPUT_UNREADABLE",
                            f"input file {name} {read.detail or read.state.value}",
                            "give a readable regular JSON file or '-' for stdin")
    return read.data


def _subject(document: Mapping[str, Any], fallback: str) -> str:
    run = document.get("run")
    if isinstance(run, dict) and isinstance(run.get("task_id"), str) \
            and is_task_id(run["task_id"]):
        return str(run["task_id"])
    return fallback


def decide_input_form(cwd: Path, env: Mapping[str, str], *, input_name: str, stdin: BinaryIO,
                      surfaces: str | None, timestamp: str | None,
                      ledger: bool) -> ArbiterOutcome:
    """``plangate arbiter --input FILE|-``: decide from an input document."""
    from plangate.surfaces import resolve_surfaces

    repo_root = find_repo_root(cwd)
    stamp = check_timestamp(timestamp)
    inp = parse_input_bytes(_read_input(cwd, input_name, stdin))
    resolved = resolve_surfaces(repo_root, cwd / surfaces if surfaces else None)
    result = decide(inp, resolved, timestamp=stamp)
    warnings: tuple[str, ...] = ()
    if ledger:
        warning = record_decision(repo_root, env, _subject(inp.document, inp.target_sha),
                                  provenance_record(result))
        warnings = (warning,) if warning else ()
    return ArbiterOutcome(result, int(result.exit_code), warnings=warnings)


@dataclass(frozen=True)
class TaskForm:
    """``plangate arbiter TASK ...`` after argument parsing (values as given)."""

    task_id: str
    target_sha: str
    base: str
    reviewers_file: str
    actors: tuple[str, str]
    cls: str
    lite: str = ""
    breakdown: str | None = None
    reject_category: str | None = None
    model_c: str | None = None
    model_d: str | None = None
    run_id: str | None = None
    round_index: int | None = None
    cost_cap: int | None = None
    surfaces: str | None = None
    timestamp: str | None = None
    print_input: bool = False
    issue: bool = False
    force: bool = False
    ledger: bool = True


def _run_block(form: TaskForm) -> dict[str, Any] | None:
    if form.run_id is None and form.round_index is None and form.cost_cap is None:
        return None
    if form.run_id is None or form.round_index is None:
        raise UsageError("ARBITER_TASK_ARGS_MISSING",
                         "a run needs both --run-id and --round-index",
                         "e.g. --run-id run-7 --round-index 2 --cost-cap 3")
    return {"run_id": form.run_id, "round_index": form.round_index, "task_id": form.task_id,
            "repair_action": None, "cost_cap": form.cost_cap}


def decide_task_form(cwd: Path, env: Mapping[str, str], form: TaskForm) -> ArbiterOutcome:
    """``plangate arbiter TASK``: build the input from the repository, decide, record, issue."""
    from plangate.approval.arbiter_input import TaskArbiterRequest, build_task_input
    from plangate.approval.service import read_reviewers

    stamp = check_timestamp(form.timestamp)
    reviewers = read_reviewers(cwd / form.reviewers_file, form.reviewers_file)
    run = _run_block(form)
    repo_root = find_repo_root(cwd)
    request = TaskArbiterRequest(
        task_id=form.task_id, target_sha=form.target_sha, base=form.base, reviewers=reviewers,
        maker=form.actors[0], checker=form.actors[1], lite=lite_axes(form.lite),
        cls=form.cls, breakdown=form.breakdown, reject_category=form.reject_category,
        model_c=form.model_c, model_d=form.model_d, run=run,
        explicit_surfaces=(cwd / form.surfaces) if form.surfaces else None,
    )
    built = build_task_input(repo_root, request)
    if form.print_input:
        return ArbiterOutcome(Result("ACCEPTED", (), {}), 0, document=built.document)
    result = decide(parse_input(built.document), built.surfaces, timestamp=stamp)
    extra: dict[str, Any] = {
        "task_id": form.task_id,
        "base_sha": built.base_full,
        "derived_loopspec_hash": built.derived_loopspec_hash,
        "plan_package_problems": [r.to_json() for r in built.package_problems],
    }
    warnings: tuple[str, ...] = ()
    if form.ledger:
        warning = record_decision(repo_root, env, form.task_id,
                                  provenance_record(result) | extra)
        warnings = (warning,) if warning else ()
    outcome = ArbiterOutcome(result, int(result.exit_code), extra, warnings)
    if not form.issue:
        return outcome
    issued = _issue(repo_root, env, form, built=built, reviewers=reviewers, result=result,
                    timestamp=stamp)
    extra["issue"] = issued.to_json()
    return outcome if issued.accepted else replace(outcome, exit_code=int(issued.exit_code))


def _issue(repo_root: Path, env: Mapping[str, str], form: TaskForm, *, built: BuiltInput,
           reviewers: Mapping[str, Any], result: Result, timestamp: str) -> Result:
    """Write approvals/c3.json with the arbiter's decision through the c3-prime producer."""
    from plangate.approval.service import IssueRequest, issue_record

    request = IssueRequest(
        task_id=form.task_id, target_sha=built.target_full, reviewers=reviewers,
        decision=result.verdict, policy_ref=POLICY_REF, issued_at=timestamp,
        issued_by=ISSUED_BY, force=form.force,
        derived_loopspec_hash=built.derived_loopspec_hash,
    )
    try:
        return issue_record(repo_root, request, env, snapshot=built.snapshot)
    except PlanGateError as exc:
        return Result("REJECTED", (Reason(exc.code, exc.message, exc.hint),),
                      {"task_id": form.task_id})
