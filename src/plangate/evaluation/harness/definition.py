"""The harness definition: ``.plangate/harness.toml`` (docs/evaluation-formats.md section 1).

The definition names the harness components (id, type, the paths that make it
up), the runtime registry, the verifier set (the verifier/gate pipeline with
its blocking rules) and the policy profile (policy files, always including the
protected-surfaces definition). It is parsed strictly: unknown keys, wrong
types, duplicate ids and dangling references are refused with a reason code.

Parsing is pure (bytes in, model out); :mod:`plangate.evaluation.harness.service`
reads the blob from a commit, never from the working tree.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from typing import Any

from plangate.canonical import sha256_digest
from plangate.errors import InputRejected
from plangate.paths import PathRejected, canonical_path, validate_pattern

DEFAULT_DEFINITION_PATH = ".plangate/harness.toml"
"""Where the harness definition lives in a repository."""

PROTECTED_SURFACES_PATH = ".plangate/protected-surfaces.toml"
"""The protected-surfaces definition; always part of the policy profile."""

MAX_DEFINITION_BYTES = 1_000_000

COMPONENT_TYPES: tuple[str, ...] = (
    "skill",
    "agent",
    "flow",
    "verifier",
    "prompt",
    "context",
    "routing",
    "eval",
    "hook",
    "gate",
    "policy",
)
"""Component types of a harness, including ``gate`` and ``policy``."""

JUDGE_TYPES: frozenset[str] = frozenset({"verifier", "gate"})
"""Types that may be stages of the verifier set (and whose participation the gate checks)."""

BLOCKING_RANK: dict[str, int] = {"off": 0, "warn": 1, "block": 2}
"""Strength of a stage's blocking rule; a lower rank in the candidate is a relaxation."""

UNAVAILABLE_RANK: dict[str, int] = {"pass": 0, "block": 1}
"""Strength of a stage's ``on_unavailable`` rule; ``pass`` would fail open."""

_TOP_KEYS = frozenset(
    {"schema_version", "name", "components", "registry", "verifier_set", "policy_profile"}
)
_COMPONENT_KEYS = frozenset({"id", "type", "paths"})
_STAGE_KEYS = frozenset({"component", "blocking", "on_unavailable", "applies_to"})


class DefinitionRejected(InputRejected):
    """The harness definition cannot be used."""


@dataclass(frozen=True)
class ComponentDef:
    """One harness component as declared."""

    id: str
    type: str
    paths: tuple[str, ...]


@dataclass(frozen=True)
class StageDef:
    """One stage of the verifier/gate pipeline with its blocking rules."""

    component: str
    blocking: str
    on_unavailable: str
    applies_to: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """The normalised JSON form (defaults filled) used for ``verifier_set_sha``."""
        return {
            "component": self.component,
            "blocking": self.blocking,
            "on_unavailable": self.on_unavailable,
            "applies_to": list(self.applies_to),
        }


@dataclass(frozen=True)
class HarnessDefinition:
    """A parsed harness definition plus the exact bytes it came from."""

    name: str
    components: tuple[ComponentDef, ...]
    registry_enabled: tuple[str, ...]
    stages: tuple[StageDef, ...]
    policy_files: tuple[str, ...]
    raw: bytes
    source: str

    @property
    def sha256(self) -> str:
        """``sha256:`` of the raw definition bytes."""
        return sha256_digest(self.raw)

    def component(self, component_id: str) -> ComponentDef | None:
        """The component with ``component_id``, or None."""
        for comp in self.components:
            if comp.id == component_id:
                return comp
        return None

    @property
    def verifier_set_ids(self) -> tuple[str, ...]:
        """Stage component ids in pipeline order."""
        return tuple(stage.component for stage in self.stages)


def _reject(code: str, message: str, hint: str) -> DefinitionRejected:
    return DefinitionRejected(code, message, hint)


def _check_keys(table: dict[str, Any], allowed: frozenset[str], where: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise _reject(
            "HARNESS_DEFINITION_UNKNOWN_KEY",
            f"{where}: unknown key(s) {', '.join(unknown)}",
            f"allowed keys: {', '.join(sorted(allowed))}",
        )


def _string(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _reject(
            "HARNESS_DEFINITION_INVALID", f"{where} must be a non-empty string", "fix the value"
        )
    return value


def _string_list(value: object, where: str, *, allow_empty: bool = False) -> tuple[str, ...]:
    if not isinstance(value, list) or (not value and not allow_empty):
        raise _reject(
            "HARNESS_DEFINITION_INVALID",
            f"{where} must be a {'' if allow_empty else 'non-empty '}list of strings",
            "write a TOML array of strings",
        )
    out = tuple(_string(item, f"{where}[{i}]") for i, item in enumerate(value))
    if len(set(out)) != len(out):
        raise _reject(
            "HARNESS_DEFINITION_INVALID", f"{where} lists a value twice", "remove the duplicate"
        )
    return out


def _patterns(value: object, where: str) -> tuple[str, ...]:
    items = _string_list(value, where)
    for item in items:
        try:
            validate_pattern(item)
        except PathRejected as exc:
            raise _reject(
                "HARNESS_DEFINITION_BAD_PATH", f"{where}: {exc.message}", exc.hint
            ) from None
    return items


def _load_toml(data: bytes, source: str) -> dict[str, Any]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _reject(
            "HARNESS_DEFINITION_NOT_UTF8", f"{source} is not UTF-8", "save it as UTF-8"
        ) from None
    if text.startswith("\ufeff"):
        raise _reject("HARNESS_DEFINITION_BOM", f"{source} starts with a BOM", "remove the BOM")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _reject(
            "HARNESS_DEFINITION_SYNTAX", f"{source} is not valid TOML: {exc}", "fix the TOML syntax"
        ) from None
    _check_keys(doc, _TOP_KEYS, source)
    if doc.get("schema_version") != "1":
        raise _reject(
            "HARNESS_DEFINITION_VERSION",
            f'{source}: schema_version must be the string "1"',
            'add schema_version = "1"',
        )
    return doc


def _component(table: object, where: str) -> ComponentDef:
    if not isinstance(table, dict):
        raise _reject("HARNESS_DEFINITION_INVALID", f"{where} must be a table", "")
    _check_keys(table, _COMPONENT_KEYS, where)
    for key in sorted(_COMPONENT_KEYS - set(table)):
        raise _reject(
            "HARNESS_DEFINITION_MISSING_KEY", f"{where} lacks {key!r}", f"add {key} = ..."
        )
    comp_id = _string(table["id"], f"{where}.id")
    comp_type = _string(table["type"], f"{where}.type")
    if comp_type not in COMPONENT_TYPES:
        raise _reject(
            "HARNESS_DEFINITION_BAD_TYPE",
            f"{where}: type {comp_type!r} is not a component type",
            f"use one of {', '.join(COMPONENT_TYPES)}",
        )
    return ComponentDef(comp_id, comp_type, _patterns(table["paths"], f"{where}.paths"))


def _components(doc: dict[str, Any], source: str) -> list[ComponentDef]:
    raw_components = doc.get("components")
    if not isinstance(raw_components, list) or not raw_components:
        raise _reject(
            "HARNESS_DEFINITION_NO_COMPONENTS",
            f"{source} declares no components",
            "add [[components]] tables with id, type and paths",
        )
    components: list[ComponentDef] = []
    seen: set[str] = set()
    for index, table in enumerate(raw_components):
        where = f"{source}: components[{index}]"
        comp = _component(table, where)
        if comp.id in seen:
            raise _reject(
                "HARNESS_DEFINITION_DUPLICATE_ID",
                f"{where}: component id {comp.id!r} is declared twice",
                "a shadow copy could hide a change; give each component one entry",
            )
        seen.add(comp.id)
        components.append(comp)
    return components


def _registry(doc: dict[str, Any], source: str, by_id: dict[str, ComponentDef]) -> tuple[str, ...]:
    registry = doc.get("registry", {})
    if not isinstance(registry, dict):
        raise _reject("HARNESS_DEFINITION_INVALID", f"{source}: [registry] must be a table", "")
    _check_keys(registry, frozenset({"enabled"}), f"{source}: [registry]")
    enabled = _string_list(
        registry.get("enabled", []), f"{source}: registry.enabled", allow_empty=True
    )
    for comp_id in enabled:
        if comp_id not in by_id:
            raise _reject(
                "HARNESS_DEFINITION_UNKNOWN_COMPONENT",
                f"{source}: registry.enabled names unknown component {comp_id!r}",
                "declare the component or remove it from the registry",
            )
    return enabled


def _stage(table: object, where: str, by_id: dict[str, ComponentDef]) -> StageDef:
    if not isinstance(table, dict):
        raise _reject("HARNESS_DEFINITION_INVALID", f"{where} must be a table", "")
    _check_keys(table, _STAGE_KEYS, where)
    comp_id = _string(table.get("component"), f"{where}.component")
    comp = by_id.get(comp_id)
    if comp is None or comp.type not in JUDGE_TYPES:
        raise _reject(
            "HARNESS_DEFINITION_BAD_STAGE",
            f"{where}: {comp_id!r} is not a declared verifier or gate component",
            "stages name components of type verifier or gate",
        )
    blocking = table.get("blocking", "block")
    if blocking not in BLOCKING_RANK:
        raise _reject(
            "HARNESS_DEFINITION_BAD_STAGE",
            f"{where}: blocking must be one of {', '.join(BLOCKING_RANK)}",
            "",
        )
    on_unavailable = table.get("on_unavailable", "block")
    if on_unavailable not in UNAVAILABLE_RANK:
        raise _reject(
            "HARNESS_DEFINITION_BAD_STAGE",
            f"{where}: on_unavailable must be one of {', '.join(UNAVAILABLE_RANK)}",
            "",
        )
    applies_to = _patterns(table.get("applies_to", ["**"]), f"{where}.applies_to")
    return StageDef(comp_id, blocking, on_unavailable, applies_to)


def _stages(doc: dict[str, Any], source: str, by_id: dict[str, ComponentDef]) -> list[StageDef]:
    verifier_set = doc.get("verifier_set")
    if not isinstance(verifier_set, dict):
        raise _reject(
            "HARNESS_DEFINITION_NO_VERIFIER_SET",
            f"{source} has no [verifier_set] table",
            "declare the verifier/gate pipeline with [[verifier_set.stages]]",
        )
    _check_keys(verifier_set, frozenset({"stages"}), f"{source}: [verifier_set]")
    raw_stages = verifier_set.get("stages")
    if not isinstance(raw_stages, list) or not raw_stages:
        raise _reject(
            "HARNESS_DEFINITION_NO_VERIFIER_SET",
            f"{source}: verifier_set.stages is empty",
            "an empty verifier set would judge nothing; list at least one stage",
        )
    stages: list[StageDef] = []
    for index, table in enumerate(raw_stages):
        where = f"{source}: verifier_set.stages[{index}]"
        # The component is checked before a repeat: a bad stage reports what is wrong with it.
        stage = _stage(table, where, by_id)
        if stage.component in {s.component for s in stages}:
            raise _reject(
                "HARNESS_DEFINITION_BAD_STAGE", f"{where}: {stage.component!r} appears twice", ""
            )
        stages.append(stage)
    return stages


def _policy_files(doc: dict[str, Any], source: str) -> tuple[str, ...]:
    profile = doc.get("policy_profile", {})
    if not isinstance(profile, dict):
        raise _reject(
            "HARNESS_DEFINITION_INVALID", f"{source}: [policy_profile] must be a table", ""
        )
    _check_keys(profile, frozenset({"files"}), f"{source}: [policy_profile]")
    files = list(
        _string_list(profile.get("files", []), f"{source}: policy_profile.files", allow_empty=True)
    )
    for path in files:
        try:
            canonical_path(path)
        except PathRejected as exc:
            raise _reject(
                "HARNESS_DEFINITION_BAD_PATH", f"{source}: {exc.message}", exc.hint
            ) from None
    if PROTECTED_SURFACES_PATH not in files:
        files.append(PROTECTED_SURFACES_PATH)
    return tuple(sorted(files))


def parse_definition(data: bytes, source: str = DEFAULT_DEFINITION_PATH) -> HarnessDefinition:
    """Parse and validate harness definition bytes (pure).

    Raises :class:`DefinitionRejected` with a ``HARNESS_DEFINITION_*`` code.
    """
    doc = _load_toml(data, source)
    name = doc.get("name", "")
    if not isinstance(name, str):
        raise _reject("HARNESS_DEFINITION_INVALID", f"{source}: name must be a string", "")
    components = _components(doc, source)
    by_id = {c.id: c for c in components}
    enabled = _registry(doc, source, by_id)
    stages = _stages(doc, source, by_id)
    return HarnessDefinition(
        name=name,
        components=tuple(sorted(components, key=lambda c: c.id)),
        registry_enabled=enabled,
        stages=tuple(stages),
        policy_files=_policy_files(doc, source),
        raw=data,
        source=source,
    )
