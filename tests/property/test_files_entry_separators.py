"""The Files section's entry separators on any text: the scan agrees with its pattern."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from plangate.plan import files_section as fs
from support.entry_separators import entry_spans_by_pattern


@settings(max_examples=500, deadline=None)
@given(text=st.text(st.sampled_from(list("ab{},;/+ \t\n\u3000\u3001\uff0c\uff1b\uff0b\uff0f\u00a0")),
                    max_size=40))
def test_entry_separators_agree_with_their_pattern_on_any_text(text: str) -> None:
    assert fs._entry_spans(text) == entry_spans_by_pattern(text)
