"""trust.toml: strict keys, never-empty roles, conflicting roles refused."""

from __future__ import annotations

import pytest

from plangate.authority.trustfile import parse_trust, render_trust
from plangate.errors import InputRejected
from support.keys import trust_toml

R = ["alice@example.com", "bob@example.com"]
A = ["carol@example.com"]


def _code(data: bytes) -> str:
    with pytest.raises(InputRejected) as info:
        parse_trust(data)
    return info.value.code


def test_a_valid_file_and_its_rendering_round_trip() -> None:
    config = parse_trust(trust_toml(R, A, humans=[*R, *A], agents=["bot@example.com"]))
    assert config.require_signatures is True
    assert config.trust_branch == "main"
    assert config.holders("reviewer") == tuple(R)
    assert config.holders("override") == ()
    assert config.roles_of("carol@example.com") == ("approver",)
    assert parse_trust(render_trust(config)) == config


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (
            b"version = 1\nrequire_signatures = true\nrequire_signature = true\n",
            "AUTH_TRUST_UNKNOWN_KEY",
        ),
        (b"version = 1\n", "AUTH_TRUST_MISSING_KEY"),
        (b"require_signatures = false\n", "AUTH_TRUST_MISSING_KEY"),
        (b"version = 2\nrequire_signatures = false\n", "AUTH_TRUST_BAD_VALUE"),
        (b"version = true\nrequire_signatures = false\n", "AUTH_TRUST_BAD_VALUE"),
        (b'version = 1\nrequire_signatures = "yes"\n', "AUTH_TRUST_BAD_VALUE"),
        (b'version = 1\nrequire_signatures = false\ntrust_branch = "-x"\n', "AUTH_TRUST_BAD_VALUE"),
        (
            b'version = 1\nrequire_signatures = false\ntrust_branch = "a..b"\n',
            "AUTH_TRUST_BAD_VALUE",
        ),
        (b"version = 1\nrequire_signatures = false\nroles = 3\n", "AUTH_TRUST_BAD_VALUE"),
        (
            b"version = 1\nrequire_signatures = false\n[roles]\nreviewer = []\n",
            "AUTH_TRUST_ROLE_EMPTY",
        ),
        (b"version = 1\nrequire_signatures = false\nhumans = []\n", "AUTH_TRUST_ROLE_EMPTY"),
        (
            b'version = 1\nrequire_signatures = false\n[roles]\nreviewer = "a@x"\n',
            "AUTH_TRUST_BAD_VALUE",
        ),
        (
            b'version = 1\nrequire_signatures = false\n[roles]\nreviewer = ["*"]\n',
            "AUTH_TRUST_BAD_PRINCIPAL",
        ),
        (
            b'version = 1\nrequire_signatures = false\n[roles]\nreviewer = ["a b"]\n',
            "AUTH_TRUST_BAD_PRINCIPAL",
        ),
        (
            b"version = 1\nrequire_signatures = false\n[roles]\nreviewer = [1]\n",
            "AUTH_TRUST_BAD_PRINCIPAL",
        ),
        (
            b'version = 1\nrequire_signatures = false\n[roles]\nreviewer = ["a@x", "a@x"]\n',
            "AUTH_TRUST_DUPLICATE",
        ),
        (
            b'version = 1\nrequire_signatures = false\n[roles]\nadmin = ["a@x"]\n',
            "AUTH_TRUST_UNKNOWN_ROLE",
        ),
        (b"version = 1\nrequire_signatures = false\n[roles\n", "AUTH_TRUST_MALFORMED"),
        (b"version = 1\nrequire_signatures = false\n\xff", "AUTH_TRUST_MALFORMED"),
        (b"#" * (64 * 1024 + 1), "AUTH_TRUST_MALFORMED"),
    ],
)
def test_bad_files(data: bytes, code: str) -> None:
    assert _code(data) == code


def test_conflicting_roles() -> None:
    # The approver also reviews.
    assert _code(trust_toml(R, ["alice@example.com"])) == "AUTH_TRUST_ROLE_CONFLICT"
    # ... unless the file says so deliberately.
    allowed = parse_trust(trust_toml(R, ["alice@example.com"], extra="approver_may_review = true"))
    assert allowed.holders("approver") == ("alice@example.com",)
    # An agent holds a role, or is declared human.
    assert _code(trust_toml(R, A, agents=["bob@example.com"])) == "AUTH_TRUST_ROLE_CONFLICT"
    assert _code(trust_toml(R, A, humans=["bot@x"], agents=["bot@x"])) == "AUTH_TRUST_ROLE_CONFLICT"


def test_required_signatures_need_two_reviewers_and_an_approver() -> None:
    assert _code(trust_toml(R[:1], A)) == "AUTH_TRUST_ROLES_INSUFFICIENT"
    assert _code(trust_toml(R, [])) == "AUTH_TRUST_ROLES_INSUFFICIENT"
    # Without required signatures a partial team is a valid start.
    assert parse_trust(trust_toml(R[:1], [], require=False)).holders("approver") == ()
