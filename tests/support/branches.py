"""How often a property test's examples reach the branch it names.

A property of the form "whenever X, then Y" proves nothing when the generator never
produces X. Each such test runs its Hypothesis body inside a plain test, counts every
example and every example that reaches the named branch (also reported as a Hypothesis
event), and then asserts the branch took at least a tenth of the examples.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import event

MIN_SHARE = 0.10


class Branches:
    """Counts of the examples a property test ran and of those reaching each branch."""

    def __init__(self) -> None:
        self.examples = 0
        self.hits: Counter[str] = Counter()

    def example(self) -> None:
        """Count one example (call first thing in the Hypothesis body)."""
        self.examples += 1

    def reached(self, name: str, condition: bool) -> bool:
        """``condition``, counted under ``name`` when true."""
        if condition:
            self.hits[name] += 1
            event(f"branch: {name}")
        return condition

    def share(self, name: str) -> float:
        """The fraction of the examples that reached ``name``."""
        return self.hits[name] / self.examples if self.examples else 0.0

    def assert_share(self, name: str, at_least: float = MIN_SHARE) -> None:
        """Fail unless ``name`` was reached in at least ``at_least`` of the examples."""
        assert self.examples > 0, "the property ran no example"
        # Shown with `pytest -s` (and on a failure): the measured frequency.
        print(f"branch {name!r}: {self.hits[name]} of {self.examples} examples")
        assert self.share(name) >= at_least, (
            f"branch {name!r} reached in {self.hits[name]} of {self.examples} examples "
            f"({self.share(name):.0%}), fewer than {at_least:.0%}: the generator misses it"
        )
