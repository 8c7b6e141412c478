"""Settings of a short-lived PlanGate process, applied first by each entry point."""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 20_000
"""Allocations between two collections of the youngest generation (Python's default: 700)."""


def tune_collector() -> None:
    """Collect the youngest generation every :data:`YOUNG_THRESHOLD` allocations.

    A command or a hook imports 30 to 60 modules and builds their classes and tables.
    With the default threshold the cyclic collector runs hundreds of times over objects
    that all stay alive: 3-5 ms of a process whose whole budget is a few tens of
    milliseconds. Cycles are still collected, a little later; the older generations keep
    their thresholds. A threshold already higher (set by the embedding program) is kept.
    """
    young, older, oldest = gc.get_threshold()
    if 0 < young < YOUNG_THRESHOLD:
        gc.set_threshold(YOUNG_THRESHOLD, older, oldest)
