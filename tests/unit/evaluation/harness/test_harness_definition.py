"""Strict parsing of the harness definition."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.errors import InputRejected
from plangate.evaluation.harness.definition import PROTECTED_SURFACES_PATH, parse_definition

DEF = b"""
schema_version = "1"
[[components]]
id = "prompt:p"
type = "prompt"
paths = ["h/p.md"]
[[components]]
id = "verifier:v"
type = "verifier"
paths = ["h/v/*.py"]
[registry]
enabled = ["prompt:p"]
[verifier_set]
[[verifier_set.stages]]
component = "verifier:v"
"""


def _code(exc: pytest.ExceptionInfo[InputRejected]) -> str:
    return exc.value.code


def test_definition_defaults_and_implicit_surfaces_policy_file() -> None:
    d = parse_definition(DEF)
    assert [c.id for c in d.components] == ["prompt:p", "verifier:v"]
    assert d.stages[0].blocking == "block"
    assert d.stages[0].on_unavailable == "block"
    assert d.stages[0].applies_to == ("**",)
    assert d.policy_files == (PROTECTED_SURFACES_PATH,)
    assert d.verifier_set_ids == ("verifier:v",)


@pytest.mark.parametrize(
    ("mutation", "code"),
    [
        (lambda t: t + b"\nsurprise = 1\n", "HARNESS_DEFINITION_UNKNOWN_KEY"),
        (
            lambda t: t.replace(b'type = "prompt"', b'type = "prompt"\nextra = 1'),
            "HARNESS_DEFINITION_UNKNOWN_KEY",
        ),
        (
            lambda t: t.replace(b'type = "prompt"', b'type = "wizard"'),
            "HARNESS_DEFINITION_BAD_TYPE",
        ),
        (
            lambda t: t.replace(b'id = "verifier:v"', b'id = "prompt:p"'),
            "HARNESS_DEFINITION_DUPLICATE_ID",
        ),
        (
            lambda t: t.replace(b'component = "verifier:v"', b'component = "prompt:p"'),
            "HARNESS_DEFINITION_BAD_STAGE",
        ),
        (
            lambda t: t.replace(
                b'component = "verifier:v"', b'component = "verifier:v"\nblocking = "maybe"'
            ),
            "HARNESS_DEFINITION_BAD_STAGE",
        ),
        (
            lambda t: t.replace(b'enabled = ["prompt:p"]', b'enabled = ["ghost"]'),
            "HARNESS_DEFINITION_UNKNOWN_COMPONENT",
        ),
        (lambda t: t.split(b"[verifier_set]")[0], "HARNESS_DEFINITION_NO_VERIFIER_SET"),
        (lambda t: t.replace(b'paths = ["h/p.md"]', b"paths = []"), "HARNESS_DEFINITION_INVALID"),
        (
            lambda t: t.replace(b'paths = ["h/p.md"]', b'paths = ["../p.md"]'),
            "HARNESS_DEFINITION_BAD_PATH",
        ),
        (
            lambda t: t.replace(b'paths = ["h/p.md"]', b'paths = ["h/**p.md"]'),
            "HARNESS_DEFINITION_BAD_PATH",
        ),
        (
            lambda t: t.replace(b'schema_version = "1"', b"schema_version = 1"),
            "HARNESS_DEFINITION_VERSION",
        ),
        (lambda t: t + b"[[", "HARNESS_DEFINITION_SYNTAX"),
        (lambda t: b"\xef\xbb\xbf" + t, "HARNESS_DEFINITION_BOM"),
        (lambda t: t + b"\xff", "HARNESS_DEFINITION_NOT_UTF8"),
    ],
)
def test_definition_refusals(mutation: Any, code: str) -> None:
    with pytest.raises(InputRejected) as info:
        parse_definition(mutation(DEF))
    assert _code(info) == code


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="abcdefgh_", min_size=1, max_size=8))
def test_definition_any_unknown_top_level_key_is_refused(key: str) -> None:
    allowed = {"schema_version", "name", "components", "registry", "verifier_set", "policy_profile"}
    if key in allowed:
        return
    with pytest.raises(InputRejected) as info:
        parse_definition(f"{key} = 1\n".encode() + DEF)
    assert _code(info) == "HARNESS_DEFINITION_UNKNOWN_KEY"
