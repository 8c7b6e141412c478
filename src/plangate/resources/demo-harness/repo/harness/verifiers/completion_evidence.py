"""Demo verifier: does the run carry evidence that verification actually ran?

At the baseline it is registered but not enforcing (ENFORCE_MISSING = False):
the "verification skipped" incident reaches MERGE_READY. A verifier candidate
turns enforcement on.
"""

ENABLED = True
ENFORCE_MISSING = False


def check(fixture: dict[str, object]) -> str:
    if fixture.get("verification_present"):
        return "pass"
    return "unavailable" if ENFORCE_MISSING else "pass"
