"""Properties of the Promotion Decision over arbitrary judgements, gate verdicts, prior
decisions and activation levels.

Kept apart from the decision's unit tests, which stay deterministic (they guard the
module under mutation testing).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.evaluation.run.decision import decide
from support.run_decision import GOOD, evaluation, trials

JUDGEMENT = st.sampled_from(["passed", "stopped"])


@settings(max_examples=150, deadline=None)
@given(
    table=st.fixed_dictionaries({k: st.tuples(JUDGEMENT, JUDGEMENT) for k in GOOD}),
    gate=st.sampled_from(["AUTO_APPROVED", "DENIED", "HUMAN_REQUIRED", "INCONCLUSIVE"]),
    prior=st.lists(st.sampled_from(["PASS", "FAIL", "INCONCLUSIVE"]), max_size=2),
    level=st.sampled_from(["registered", "fired", "influenced_decision"]),
)
def test_no_promotion_and_pass_only_when_clean(
    table: dict[str, tuple[str, str]], gate: str, prior: list[str], level: str
) -> None:
    result = decide(
        evaluation(
            trials=trials(table, level=level), policy_verdict=gate, prior_verdicts=tuple(prior)
        )
    )
    assert result.facts["production_promotion_executed"] is False
    assert result.verdict in ("PASS", "FAIL", "INCONCLUSIVE")
    if result.verdict == "PASS":
        assert gate == "AUTO_APPROVED"
        assert "INCONCLUSIVE" not in prior and "FAIL" not in prior
        assert table["kb"] == ("passed", "stopped")
        assert table["nc"] == ("passed", "passed")
        assert level == "influenced_decision"
    if "INCONCLUSIVE" in prior:
        assert result.verdict == "INCONCLUSIVE"
