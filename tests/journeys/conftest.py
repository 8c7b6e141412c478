"""The journey tier: the pinned real hosts (Claude Code, Codex) driven by a scripted
model against PlanGate as installed, in fresh homes and real repositories.

Every test here carries the ``journeys`` marker (select with ``-m journeys``,
deselect with ``-m 'not journeys'``). The hosts come from scripts/install-hosts.sh
(scripts/test.sh runs it and exports PLANGATE_HOSTS_BIN); when they are missing the
tests fail with a message naming the script, they never skip.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from support.journey import Journey, find_hosts_bin

# Read before any test's environment isolation replaces HOME and drops PLANGATE_*.
_HOSTS_BIN, _HOSTS_MISSING = find_hosts_bin(dict(os.environ))
_HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test of this directory ``journeys``."""
    for item in items:
        if _HERE in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.journeys)


@pytest.fixture(scope="session")
def hosts_bin() -> Path:
    """The bin directory of the pinned hosts; missing hosts fail the test (never skip)."""
    if _HOSTS_BIN is None:
        pytest.fail(_HOSTS_MISSING, pytrace=False)
    return _HOSTS_BIN


@pytest.fixture
def switched_on(tmp_path: Path, hosts_bin: Path) -> Journey:
    """A fresh home and repository where PlanGate is switched on for Claude Code and
    Codex (setup at a terminal, the adoption committed); no task planned yet."""
    journey = Journey(tmp_path / "journey", hosts_bin)
    journey.create_repo()
    journey.switch_on()
    return journey


@pytest.fixture
def journey(switched_on: Journey) -> Journey:
    """``switched_on`` with TASK-0001 (``src/app.py``, ``tests/test_app.py``) approved
    and started: the hooks judge every tool call against it."""
    switched_on.approve()
    switched_on.start()
    return switched_on
