"""The process settings every entry point applies first."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator

import pytest

from plangate.startup import YOUNG_THRESHOLD, tune_collector


@pytest.fixture
def restored_threshold() -> Iterator[None]:
    saved = gc.get_threshold()
    yield
    gc.set_threshold(*saved)


def test_the_young_generation_is_collected_less_often(restored_threshold: None) -> None:
    gc.set_threshold(700, 11, 12)
    tune_collector()
    assert gc.get_threshold() == (YOUNG_THRESHOLD, 11, 12)


def test_a_higher_threshold_or_a_disabled_collector_is_kept(restored_threshold: None) -> None:
    gc.set_threshold(YOUNG_THRESHOLD * 2, 10, 10)
    tune_collector()
    assert gc.get_threshold() == (YOUNG_THRESHOLD * 2, 10, 10)
    gc.set_threshold(0, 10, 10)  # 0 switches collection off: left as the embedder chose
    tune_collector()
    assert gc.get_threshold() == (0, 10, 10)


@pytest.mark.parametrize("module", ["plangate", "plangate.hooks"])
def test_each_entry_point_applies_it(module: str) -> None:
    probe = (
        "import gc, runpy, sys\n"
        "def report(code=0):\n"
        "    print(gc.get_threshold()[0])\n"
        "    raise SystemExit(0)\n"
        "sys.exit = report\n"
        f"sys.argv = ['{module}', '--version']\n"
        f"runpy.run_module('{module}', run_name='__main__')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False,
        stdin=subprocess.DEVNULL, timeout=60,
    )
    assert out.stdout.strip().splitlines()[-1] == str(YOUNG_THRESHOLD), out.stderr
