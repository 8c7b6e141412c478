"""Connection passwords never appear in what PlanGate prints: every place a password
can sit in a PostgreSQL URL or libpq string, and the literal secrets of the configured URL."""

from __future__ import annotations

import pytest

from plangate.ledger.chain import LedgerError
from plangate.ledger.credentials import MASK, redact_credentials, url_secrets

SECRET = "Hunter2-xyzzy"

# (text containing SECRET, the part that must survive)
CASES = [
    (f"postgresql://alice:{SECRET}@db.internal:5432/plangate", "alice:"),
    (f"postgres://alice:{SECRET}@db/plangate?sslmode=require", "sslmode=require"),
    (f"POSTGRESQL://alice:{SECRET}@db/plangate", "@db/plangate"),
    (f"postgresql://alice@db/plangate?password={SECRET}&sslmode=require", "sslmode=require"),
    (f"postgresql://alice@db/plangate?sslmode=require&sslpassword={SECRET}", "alice@db"),
    (f"host=db user=alice password={SECRET} dbname=plangate", "dbname=plangate"),
    (f"host=db password = '{SECRET} with space' dbname=x", "dbname=x"),
    (f"host=db PASSWORD={SECRET}", "host=db"),
    (f"connection failed: 'postgresql://a:{SECRET}@h/d': timeout", "timeout"),
    (f'invalid dsn: "password={SECRET}"', "invalid dsn"),
    (f"PGPASSWORD={SECRET} psql", "psql"),
    (f"options password%3D{SECRET} end", "end"),
    (f"postgresql://alice:{SECRET}@h1,h2:5433/d", "h1,h2"),
]


@pytest.mark.parametrize(("text", "kept"), CASES)
def test_every_password_form_is_masked(text: str, kept: str) -> None:
    out = redact_credentials(text)
    assert SECRET not in out
    assert MASK in out
    assert kept in out


def test_a_password_containing_at_signs_is_masked_whole() -> None:
    out = redact_credentials("postgresql://u:p@ss@w0rd@host/db")
    assert out == "postgresql://u:***@host/db"


def test_quoted_value_with_escaped_quote_is_masked_whole() -> None:
    out = redact_credentials("password='a b\\' secretpart' dbname=x")
    assert "secretpart" not in out
    assert out.endswith("dbname=x")


def test_unterminated_quote_masks_the_rest() -> None:
    assert "tail-secret" not in redact_credentials("password='tail-secret and more")


def test_text_without_credentials_is_unchanged() -> None:
    for text in ("postgresql://u@h/d", "host=h dbname=x", "ledger /tmp/l.sqlite3 is missing", ""):
        assert redact_credentials(text) == text


def test_known_secrets_are_masked_anywhere_raw_and_decoded() -> None:
    url = "postgresql://u:s3cr%40tpass@h/d"
    secrets = url_secrets(url)
    assert "s3cr@tpass" in secrets
    assert "s3cr%40tpass" in secrets
    # A driver message quoting the decoded password outside any URL form.
    out = redact_credentials("authentication failed for s3cr@tpass (user u)", secrets)
    assert "s3cr@tpass" not in out
    assert "user u" in out


def test_secrets_of_key_value_strings_are_found() -> None:
    assert url_secrets("host=h password='x y z1' user=u") == ("x y z1",)
    assert url_secrets("postgresql://u@h/d?password=qq11") == ("qq11",)
    assert url_secrets("postgresql://u@h/d") == ()


def test_ledger_errors_never_carry_a_password() -> None:
    err = LedgerError(
        "LEDGER_UNAVAILABLE",
        f"ledger postgresql://u:{SECRET}@h/d is unavailable",
        f"check password={SECRET}",
    )
    assert SECRET not in err.message
    assert SECRET not in err.hint
    assert SECRET not in str(err)
