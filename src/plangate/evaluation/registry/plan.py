"""Pre-registered evaluation plans (docs/evaluation-formats.md section 3).

A plan is written before the candidate exists. Registration reads every
fixture, the runner and the grader from the baseline commit, pins their
digests, checks the baseline manifest and the verifier set, computes the plan
digest and writes the registered plan to the ledger. Nothing about a plan is
ever read from a candidate.

Everything here is pure; :mod:`plangate.evaluation.registry.store` registers
and looks plans up in the ledger.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from plangate.canonical import digest, is_digest, sha256_digest, strict_loads_object
from plangate.errors import InputRejected
from plangate.evaluation.harness.definition import DEFAULT_DEFINITION_PATH, JUDGE_TYPES
from plangate.evaluation.run.agents import (
    COMMAND_KIND,
    AgentRunRejected,
    validate_section,
)
from plangate.paths import PathRejected, canonical_path, validate_pattern
from plangate.shapes import is_full_sha
from plangate.verdict import Reason

if TYPE_CHECKING:
    from plangate.evaluation.harness.manifest import HarnessManifest

SCHEMA_VERSION = "1"
MAX_DOCUMENT_BYTES = 1_000_000

FIXTURE_ROLES: tuple[str, ...] = (
    "known_bad",
    "negative_control",
    "sealed_positive",
    "sealed_negative",
    "known_mutant",
    "regression",
)
"""Every role must appear at least once in a plan."""

ACTIVATION_LEVELS: tuple[str, ...] = (
    "installed",
    "registered",
    "selected",
    "fired",
    "produced_evidence",
    "influenced_decision",
)
"""Runtime activation stages in ascending order."""

CRITICAL_REGRESSION_CONDITIONS: tuple[str, ...] = (
    "known_bad_not_stopped",
    "negative_control_blocked",
    "detection_below_baseline",
    "sealed_fixture_changed",
    "regression_fixture_failed",
)
"""The vocabulary of critical regression conditions (interpreted by ``eval run``)."""

DIFF_METHODS: tuple[str, ...] = ("git-diff-no-renames-v1",)
"""Actual-diff methods the evaluator implements (see docs/evaluation.md)."""

THRESHOLD_OPS: tuple[str, ...] = (">=", "<=", ">", "<", "==")

REQUIRED_ITEMS: tuple[str, ...] = (
    "schema_version",
    "plan_id",
    "covers",
    "baseline_commit",
    "baseline_manifest_ref",
    "task_profile",
    "fixtures",
    "verifier_set",
    "trials",
    "metrics",
    "threshold",
    "critical_regression_conditions",
    "actual_diff_method",
    "required_activation",
    "runner",
    "grader",
)
OPTIONAL_ITEMS: tuple[str, ...] = ("harness_definition", "trials_reason")
_COMMAND_KEYS = frozenset({"argv", "files", "timeout_seconds"})
_FIXTURE_KEYS = frozenset({"id", "role", "path", "digest"})
_THRESHOLD_KEYS = frozenset({"metric", "op", "value"})


class PlanRejected(InputRejected):
    """An evaluation plan is refused."""


# -- documents -------------------------------------------------------------


def load_document(data: bytes, what: str) -> dict[str, Any]:
    """Parse a YAML or JSON document strictly into a mapping.

    JSON (first non-blank byte ``{``) goes through the strict JSON loader.
    YAML is parsed with a safe loader that refuses duplicate keys; non-string
    keys, dates and non-finite numbers are refused by the contract checks.
    """
    stripped = data.lstrip()
    if stripped.startswith(b"{"):
        return strict_loads_object(data, what)
    if data.startswith(b"\xef\xbb\xbf"):
        raise InputRejected("DOCUMENT_BOM", f"{what} starts with a byte-order mark", "remove it")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputRejected("DOCUMENT_NOT_UTF8", f"{what} is not UTF-8", "save as UTF-8") from None
    import yaml

    class _StrictLoader(yaml.SafeLoader):
        pass

    def _mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                raise InputRejected(
                    "DOCUMENT_INVALID", f"{what}: key {key!r} is not a string", "quote the key"
                )
            if key in out:
                raise InputRejected(
                    "DOCUMENT_DUPLICATE_KEY", f"{what}: duplicate key {key!r}", "remove the repeat"
                )
            out[key] = loader.construct_object(value_node, deep=True)
        return out

    _StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
    try:
        doc = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 -- a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise InputRejected(
            "DOCUMENT_SYNTAX", f"{what} is not valid YAML: {exc}", "fix it"
        ) from None
    if not isinstance(doc, dict):
        raise InputRejected("DOCUMENT_NOT_OBJECT", f"{what} must be a mapping", "write key: value")
    return doc


# -- pure validation ---------------------------------------------------------


def _bad(message: str, hint: str = "fix the plan; see docs/evaluation-formats.md") -> PlanRejected:
    return PlanRejected("EVAL_PLAN_INVALID", message, hint)


def _text(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _bad(f"{where} must be a non-empty string")
    return value


def _text_list(value: object, where: str) -> list[str]:
    if not isinstance(value, list) or not value:
        raise _bad(f"{where} must be a non-empty list of strings")
    out = [_text(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if len(set(out)) != len(out):
        raise _bad(f"{where} lists a value twice")
    return out


def _path(value: object, where: str) -> str:
    try:
        return canonical_path(value)
    except PathRejected as exc:
        raise _bad(f"{where}: {exc.message}", exc.hint) from None


def _covers(value: object) -> list[str]:
    """The path globs of the components a plan judges (canonical, unique, non-empty)."""
    if not isinstance(value, list) or not value:
        raise PlanRejected(
            "EVAL_PLAN_ITEM_MISSING",
            "covers must list the path globs of the components this plan judges",
            'e.g. covers: ["harness/prompts/**"]; the evaluator selects a plan by what it covers',
        )
    out: list[str] = []
    for index, item in enumerate(value):
        try:
            out.append(validate_pattern(item))
        except PathRejected as exc:
            raise _bad(f"covers[{index}]: {exc.message}", exc.hint) from None
    if len(set(out)) != len(out):
        raise _bad("covers lists a pattern twice")
    return sorted(out)


def _command(value: object, where: str, registered: bool) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _bad(f"{where} must be a mapping with argv, files and timeout_seconds")
    if value.get("kind", COMMAND_KIND) != COMMAND_KIND:
        # A built-in kind (an agent host, the fixture's checks): its own keys, no files.
        try:
            return validate_section(where, value)
        except AgentRunRejected as exc:
            raise PlanRejected(exc.code, exc.message, exc.hint) from None
    value = {k: v for k, v in value.items() if k != "kind"}
    unknown = sorted(set(value) - _COMMAND_KEYS)
    if unknown:
        raise PlanRejected("EVAL_PLAN_UNKNOWN_KEY", f"{where}: unknown key(s) {unknown}", "")
    for key in sorted(_COMMAND_KEYS - set(value)):
        raise PlanRejected(
            "EVAL_PLAN_ITEM_MISSING", f"{where}.{key} is missing", f"add {where}.{key}"
        )
    argv = _text_list(value["argv"], f"{where}.argv")
    timeout = value["timeout_seconds"]
    if isinstance(timeout, bool) or not isinstance(timeout, int) or not 1 <= timeout <= 86_400:
        raise _bad(f"{where}.timeout_seconds must be an integer between 1 and 86400")
    files_in = value["files"]
    if not isinstance(files_in, list) or not files_in:
        raise _bad(f"{where}.files must list the files the command runs (pinned at the baseline)")
    files: list[Any] = []
    for index, item in enumerate(files_in):
        where_i = f"{where}.files[{index}]"
        if registered:
            if not isinstance(item, dict) or set(item) != {"path", "digest"}:
                raise _bad(f"{where_i} must be {{path, digest}} in a registered plan")
            if not is_digest(item["digest"]):
                raise _bad(f"{where_i}.digest is not a sha256: digest")
            files.append({"path": _path(item["path"], where_i), "digest": item["digest"]})
        else:
            files.append(_path(item, where_i))
    paths = [f["path"] if isinstance(f, dict) else f for f in files]
    if len(set(paths)) != len(paths):
        raise _bad(f"{where}.files lists a path twice")
    return {"argv": argv, "files": files, "timeout_seconds": timeout}


def _fixture(item: object, where: str, registered: bool) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise _bad(f"{where} must be a mapping with id, role, path")
    extra = sorted(set(item) - _FIXTURE_KEYS)
    if extra:
        raise PlanRejected("EVAL_PLAN_UNKNOWN_KEY", f"{where}: unknown key(s) {extra}", "")
    for key in ("id", "role", "path"):
        if key not in item:
            raise PlanRejected("EVAL_PLAN_ITEM_MISSING", f"{where}.{key} is missing", "")
    role = item["role"]
    if role not in FIXTURE_ROLES:
        raise _bad(f"{where}.role {role!r} is not one of {', '.join(FIXTURE_ROLES)}")
    fixture: dict[str, Any] = {
        "id": _text(item["id"], f"{where}.id"),
        "role": role,
        "path": _path(item["path"], f"{where}.path"),
    }
    if "digest" in item:
        if not is_digest(item["digest"]):
            raise _bad(f"{where}.digest is not a sha256: digest")
        fixture["digest"] = item["digest"]
    elif registered:
        raise _bad(f"{where} has no pinned digest in a registered plan")
    return fixture


def _fixtures(fixtures_in: object, registered: bool) -> list[dict[str, Any]]:
    if not isinstance(fixtures_in, list) or not fixtures_in:
        raise PlanRejected(
            "EVAL_PLAN_ITEM_MISSING", "evaluation plan lists no fixtures", "add fixtures"
        )
    fixtures = [
        _fixture(item, f"fixtures[{index}]", registered) for index, item in enumerate(fixtures_in)
    ]
    ids = [f["id"] for f in fixtures]
    if len(set(ids)) != len(ids):
        raise PlanRejected(
            "EVAL_PLAN_DUPLICATE_FIXTURE", "a fixture id appears twice", "give each fixture one id"
        )
    for role in FIXTURE_ROLES:
        if role not in {f["role"] for f in fixtures}:
            raise PlanRejected(
                "EVAL_PLAN_ITEM_MISSING",
                f"evaluation plan has no fixture with role {role!r}",
                f"add at least one {role} fixture (roles: {', '.join(FIXTURE_ROLES)})",
            )
    return sorted(fixtures, key=lambda f: f["id"])


def _trials(doc: Mapping[str, Any]) -> tuple[int, str]:
    trials = doc["trials"]
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise _bad("trials must be a positive integer")
    trials_reason = doc.get("trials_reason", "")
    if not isinstance(trials_reason, str):
        raise _bad("trials_reason must be a string")
    if trials == 1 and not trials_reason.strip():
        raise PlanRejected(
            "EVAL_PLAN_SINGLE_TRIAL_UNJUSTIFIED",
            "a single trial needs a written reason (trials_reason)",
            "explain why one trial suffices (deterministic harness?) or raise trials",
        )
    return trials, trials_reason


def _threshold(threshold_in: object, metrics: list[str]) -> list[dict[str, Any]]:
    if not isinstance(threshold_in, list) or not threshold_in:
        raise _bad("threshold must be a non-empty list of {metric, op, value}")
    threshold: list[dict[str, Any]] = []
    for index, item in enumerate(threshold_in):
        where = f"threshold[{index}]"
        if not isinstance(item, dict) or set(item) != _THRESHOLD_KEYS:
            raise _bad(f"{where} must have exactly metric, op and value")
        if item["metric"] not in metrics:
            raise _bad(f"{where}.metric {item['metric']!r} is not listed in metrics")
        if item["op"] not in THRESHOLD_OPS:
            raise _bad(f"{where}.op must be one of {' '.join(THRESHOLD_OPS)}")
        value = item["value"]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _bad(f"{where}.value must be a finite number")
        try:
            finite = math.isfinite(value)
        except OverflowError:  # an integer literal beyond a float's range
            finite = False
        if not finite:
            raise _bad(f"{where}.value must be a finite number")
        threshold.append({"metric": item["metric"], "op": item["op"], "value": value})
    return threshold


def validate_plan_object(doc: Mapping[str, Any], *, registered: bool) -> dict[str, Any]:
    """Validate a plan mapping; return its normalised form (pure).

    With ``registered=True`` the registered form is required: every fixture
    and command file carries a pinned digest. Raises :class:`PlanRejected`:
    ``EVAL_PLAN_ITEM_MISSING`` names the first missing item.
    """
    unknown = sorted(set(doc) - set(REQUIRED_ITEMS) - set(OPTIONAL_ITEMS))
    if unknown:
        raise PlanRejected(
            "EVAL_PLAN_UNKNOWN_KEY",
            f"evaluation plan has unknown key(s) {', '.join(unknown)}",
            "remove them; the plan contract is closed (docs/evaluation-formats.md)",
        )
    for item in REQUIRED_ITEMS:
        if item not in doc or doc[item] is None:
            raise PlanRejected(
                "EVAL_PLAN_ITEM_MISSING",
                f"evaluation plan lacks the pre-registration item {item!r}",
                f"add {item}; every pre-registration item is fixed before the candidate exists",
            )
    if doc["schema_version"] != SCHEMA_VERSION:
        raise _bad('schema_version must be the string "1"')
    baseline_commit = doc["baseline_commit"]
    if not isinstance(baseline_commit, str) or not is_full_sha(baseline_commit):
        raise _bad("baseline_commit must be a full lowercase commit id (40 or 64 hex)")
    if not is_digest(doc["baseline_manifest_ref"]):
        raise _bad("baseline_manifest_ref must be a sha256: digest (the baseline harness_id)")
    definition = _path(doc.get("harness_definition", DEFAULT_DEFINITION_PATH), "harness_definition")

    fixtures = _fixtures(doc["fixtures"], registered)

    verifier_set = _text_list(doc["verifier_set"], "verifier_set")

    trials, trials_reason = _trials(doc)
    metrics = _text_list(doc["metrics"], "metrics")
    threshold = _threshold(doc["threshold"], metrics)
    conditions = _text_list(doc["critical_regression_conditions"], "critical_regression_conditions")
    for cond in conditions:
        if cond not in CRITICAL_REGRESSION_CONDITIONS:
            raise _bad(
                f"critical regression condition {cond!r} is unknown",
                f"use: {', '.join(CRITICAL_REGRESSION_CONDITIONS)}",
            )
    method = doc["actual_diff_method"]
    if method not in DIFF_METHODS:
        raise PlanRejected(
            "EVAL_PLAN_UNKNOWN_DIFF_METHOD",
            f"actual_diff_method {method!r} is not implemented by the evaluator",
            f"use {', '.join(DIFF_METHODS)}",
        )
    activation = doc["required_activation"]
    if activation not in ACTIVATION_LEVELS:
        raise _bad(f"required_activation must be one of {', '.join(ACTIVATION_LEVELS)}")
    return {
        "schema_version": SCHEMA_VERSION,
        "plan_id": _text(doc["plan_id"], "plan_id"),
        "covers": _covers(doc["covers"]),
        "baseline_commit": baseline_commit,
        "baseline_manifest_ref": doc["baseline_manifest_ref"],
        "harness_definition": definition,
        "task_profile": _text(doc["task_profile"], "task_profile"),
        "fixtures": fixtures,
        "verifier_set": verifier_set,
        "trials": trials,
        "trials_reason": trials_reason,
        "metrics": metrics,
        "threshold": threshold,
        "critical_regression_conditions": conditions,
        "actual_diff_method": method,
        "required_activation": activation,
        "runner": _command(doc["runner"], "runner", registered),
        "grader": _command(doc["grader"], "grader", registered),
    }


@dataclass(frozen=True)
class PlanDraft:
    """A plan as written by its author (digests may be missing), plus its bytes."""

    plan: Mapping[str, Any]
    raw: bytes
    source: str


def parse_plan(data: bytes, source: str = "plan") -> PlanDraft:
    """Parse plan bytes (YAML or JSON) into a validated draft (pure)."""
    if len(data) > MAX_DOCUMENT_BYTES:
        raise _bad(f"{source} is larger than {MAX_DOCUMENT_BYTES} bytes")
    doc = load_document(data, source)
    return PlanDraft(validate_plan_object(doc, registered=False), data, source)


def check_verifier_set(plan_set: list[str], manifest: HarnessManifest) -> None:
    """Refuse a plan verifier set naming non-judges or narrower than the baseline's (pure)."""
    types = {c["id"]: c["type"] for c in manifest.components()}
    for cid in plan_set:
        if types.get(cid) not in JUDGE_TYPES:
            raise PlanRejected(
                "EVAL_PLAN_VERIFIER_SET_UNKNOWN",
                f"verifier_set names {cid!r}, which is not a verifier or gate of the baseline",
                "list only verifier/gate component ids of the baseline manifest",
            )
    missing = [cid for cid in manifest.verifier_set if cid not in plan_set]
    if missing:
        raise PlanRejected(
            "EVAL_PLAN_VERIFIER_SET_NARROWER",
            f"verifier_set omits baseline verifier(s) {', '.join(missing)}",
            "the plan's verifier set must include every stage of the baseline manifest",
        )


def pin_plan(draft: Mapping[str, Any], blobs: Mapping[str, bytes]) -> dict[str, Any]:
    """Return the registered form: every fixture/runner/grader file pinned (pure).

    ``blobs`` maps each path to its bytes at the baseline commit. A digest the
    author wrote that differs from the bytes is refused.
    """
    plan = dict(draft)
    fixtures = []
    for fixture in draft["fixtures"]:
        data = blobs.get(fixture["path"])
        if data is None:
            raise PlanRejected(
                "EVAL_PLAN_FIXTURE_UNREADABLE",
                f"fixture {fixture['id']!r} ({fixture['path']}) is not a regular file at the "
                "baseline commit",
                "commit the fixture before registering the plan",
            )
        pinned = sha256_digest(data)
        if "digest" in fixture and fixture["digest"] != pinned:
            raise PlanRejected(
                "EVAL_PLAN_FIXTURE_DIGEST_MISMATCH",
                f"fixture {fixture['id']!r} has digest {pinned} at the baseline, "
                f"not {fixture['digest']}",
                "the fixture changed; fix the plan or the fixture",
            )
        fixtures.append({**fixture, "digest": pinned})
    plan["fixtures"] = fixtures
    for key in ("runner", "grader"):
        command = dict(draft[key])
        pinned_files = []
        for path in command["files"]:
            data = blobs.get(path)
            if data is None:
                raise PlanRejected(
                    "EVAL_PLAN_FILE_UNREADABLE",
                    f"{key} file {path} is not a regular file at the baseline commit",
                    f"the {key} runs from the baseline commit; commit it there",
                )
            pinned_files.append({"path": path, "digest": sha256_digest(data)})
        command["files"] = pinned_files
        plan[key] = command
    return validate_plan_object(plan, registered=True)


FIXTURE_TELLTALES: tuple[str, ...] = ("mutant", "fixture", "sealed", "known bad", "known-bad")
"""Words that tell an input is an evaluation fixture, whatever its role."""


def fixture_tells(fixture: Mapping[str, Any], data: bytes) -> list[str]:
    """What in a fixture's bytes names it as an evaluation input (pure; empty: nothing).

    Harness code under evaluation reads the fixture: bytes naming the fixture's id,
    its role or a fixture word let it behave strictly only when it is being judged.
    """
    text = data.decode("utf-8", "replace").casefold()
    role = str(fixture.get("role", ""))
    words = {
        str(fixture.get("id", "")).casefold(),
        role.casefold(),
        role.replace("_", " ").casefold(),
        role.replace("_", "-").casefold(),
        *FIXTURE_TELLTALES,
    }
    return sorted(w for w in words if len(w) >= 3 and w in text)


def fixture_warnings(plan: Mapping[str, Any], blobs: Mapping[str, bytes]) -> list[Reason]:
    """``EVAL_FIXTURE_SELF_NAMING`` for every fixture whose bytes tell what it is (pure)."""
    warnings: list[Reason] = []
    for fixture in plan["fixtures"]:
        data = blobs.get(str(fixture["path"]))
        tells = fixture_tells(fixture, data) if data is not None else []
        if tells:
            warnings.append(
                Reason(
                    "EVAL_FIXTURE_SELF_NAMING",
                    f"fixture {fixture['id']!r} ({fixture['path']}) names itself in its bytes: "
                    + ", ".join(repr(t) for t in tells),
                    "write fixtures as the real inputs they stand for (no id, role or note): "
                    "harness code can otherwise be strict only on recognised fixtures",
                )
            )
    return warnings


def plan_digest(registered_plan: Mapping[str, Any]) -> str:
    """The plan digest: canonical digest of the registered plan object."""
    return digest(dict(registered_plan))


def plan_paths(plan: Mapping[str, Any]) -> list[str]:
    """Every path a plan pins: fixtures, runner and grader files."""
    paths = [f["path"] for f in plan["fixtures"]]
    for key in ("runner", "grader"):
        for item in plan[key]["files"]:
            paths.append(item["path"] if isinstance(item, dict) else item)
    return sorted(set(paths))
