"""Demo verifier (pipeline stage): the deterministic tests of a delivery run.

check(fixture) -> "pass" | "fail" | "unavailable". The demo fixtures carry
``tests_pass``; a missing field is "unavailable" (never a pass).
"""

ENABLED = True


def check(fixture: dict[str, object]) -> str:
    value = fixture.get("tests_pass")
    if value is None:
        return "unavailable"
    return "pass" if value else "fail"
