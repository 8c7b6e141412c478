"""Properties of the pure policy gate over generated observed diffs.

Kept apart from the gate's unit tests, which stay deterministic (they guard the
module under mutation testing).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.evaluation.gate.rules import decide
from support.branches import Branches
from support.gate_rules import facts

segment = st.text(alphabet="abcXYZ.-_", min_size=1, max_size=5).filter(
    lambda s: s not in (".", "..")
)
paths = st.lists(segment, min_size=1, max_size=4).map("/".join)
# Paths inside the candidate's allowed scope (harness/prompts/**), so that the approving
# branch is reached; mixed with arbitrary paths, which mostly fall outside it.
prompt_paths = paths.map(lambda p: f"harness/prompts/{p}")
diffs = st.one_of(
    st.lists(prompt_paths, min_size=1, max_size=6, unique=True),
    st.lists(st.one_of(paths, prompt_paths), min_size=1, max_size=6, unique=True),
)


def test_property_verdict_is_never_more_lenient_than_its_parts() -> None:
    """Adding a protected path to any diff makes it DENIED; approval needs an in-scope diff."""
    seen = Branches()

    @settings(max_examples=80, deadline=None)
    @given(diffs)
    def check(diff: list[str]) -> None:
        seen.example()
        base = decide(facts(diff))
        tainted = decide(facts(sorted({*diff, "eval/grader.py"})))
        assert tainted.verdict == "DENIED"
        if seen.reached("AUTO_APPROVED", base.verdict == "AUTO_APPROVED"):
            assert all(p.startswith("harness/prompts/") for p in diff)

    check()
    seen.assert_share("AUTO_APPROVED")
