"""Properties of the Promotion Decision over arbitrary judgements, gate verdicts, prior
decisions and activation levels.

Kept apart from the decision's unit tests, which stay deterministic (they guard the
module under mutation testing).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.evaluation.run.decision import decide
from support.branches import Branches
from support.run_decision import GOOD, evaluation, trials

JUDGEMENT = st.sampled_from(["passed", "stopped"])
ANY_CASE = st.tuples(
    st.fixed_dictionaries({k: st.tuples(JUDGEMENT, JUDGEMENT) for k in GOOD}),
    st.sampled_from(["AUTO_APPROVED", "DENIED", "HUMAN_REQUIRED", "INCONCLUSIVE"]),
    st.one_of(
        st.lists(st.sampled_from(["PASS", "FAIL", "INCONCLUSIVE"]), max_size=2),
        # an inconclusive prior decision at any place in the history
        st.permutations(["INCONCLUSIVE", "PASS"]),
        st.permutations(["INCONCLUSIVE", "FAIL"]),
    ),
    st.sampled_from(["registered", "fired", "influenced_decision"]),
)
# The clean case (the known-bad fixture stopped and the negative control passed by the
# candidate, the gate approving, only passing priors, the decisive activation level), so
# that the PASS branch is reached; every other fixture is judged as a good candidate
# judges it, or alike on both sides.
CLEAN_CASE = st.tuples(
    st.fixed_dictionaries(
        {
            k: st.just(GOOD[k])
            if k in ("kb", "nc")
            else st.sampled_from([GOOD[k], ("passed", "passed"), ("stopped", "stopped")])
            for k in GOOD
        }
    ),
    st.just("AUTO_APPROVED"),
    st.lists(st.just("PASS"), max_size=2),
    st.just("influenced_decision"),
)


def test_no_promotion_and_pass_only_when_clean() -> None:
    seen = Branches()

    @settings(max_examples=150, deadline=None)
    @given(st.one_of(ANY_CASE, CLEAN_CASE))
    def check(case: tuple[dict[str, tuple[str, str]], str, list[str], str]) -> None:
        seen.example()
        table, gate, prior, level = case
        result = decide(
            evaluation(
                trials=trials(table, level=level), policy_verdict=gate, prior_verdicts=tuple(prior)
            )
        )
        assert result.facts["production_promotion_executed"] is False
        assert result.verdict in ("PASS", "FAIL", "INCONCLUSIVE")
        if seen.reached("PASS", result.verdict == "PASS"):
            assert gate == "AUTO_APPROVED"
            assert "INCONCLUSIVE" not in prior and "FAIL" not in prior
            assert table["kb"] == ("passed", "stopped")
            assert table["nc"] == ("passed", "passed")
            assert level == "influenced_decision"
        if seen.reached("prior INCONCLUSIVE", "INCONCLUSIVE" in prior):
            assert result.verdict == "INCONCLUSIVE"

    check()
    seen.assert_share("PASS")
    seen.assert_share("prior INCONCLUSIVE")
