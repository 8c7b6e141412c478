"""Installing PlanGate as a team pins it: the release artifacts, a fresh install, the demo by path.

- ``plangate demo`` run by its absolute path, with a ``PATH`` that lacks its directory (a
  virtual environment nobody activated), finds its own ``plangate-hook`` for the hooks it
  installs and proves with doctor's canaries;
- ``scripts/build-dist.sh`` builds the wheel and the sdist a release publishes, refuses a
  tag that does not name the version, and the wheel installs into a fresh virtual
  environment whose ``plangate --version`` and ``plangate demo`` work by path, its HTML
  report drawing its charts with no extra installed (slow: a real build and install).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import sysconfig
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

import plangate

ROOT = Path(__file__).resolve().parents[3]
BARE_PATH = "/usr/bin:/bin"
"""A PATH with git and bubblewrap but no PlanGate."""


def _console_script() -> Path:
    for directory in (sysconfig.get_path("scripts"), str(Path(sys.executable).parent)):
        candidate = Path(directory) / "plangate"
        if candidate.is_file() and (Path(directory) / "plangate-hook").is_file():
            return candidate
    pytest.fail("no plangate console script next to the test interpreter: pip install -e .")


def _bare_env(home: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    return {"PATH": BARE_PATH, "HOME": str(home), "LANG": "C.UTF-8"}


def test_the_demo_invoked_by_path_finds_its_own_hook_entry_point(tmp_path: Path) -> None:
    plangate_bin = _console_script()
    env = _bare_env(tmp_path / "home")
    assert subprocess.run(["sh", "-c", "command -v plangate-hook"], env=env,
                          capture_output=True, check=False).returncode != 0
    proc = subprocess.run([str(plangate_bin), "demo", "--only", "hooks"], env=env,
                          capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "HOOK_PLANGATE_NOT_FOUND" not in proc.stdout
    assert "plangate doctor: PASS" in proc.stdout  # every canary denied by this installation
    assert "Demo complete" in proc.stdout


def test_a_tag_that_does_not_name_the_version_builds_nothing(tmp_path: Path) -> None:
    out = tmp_path / "dist"
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "build-dist.sh"), str(out),
                           "--tag", "v0.0.0-not-this"], capture_output=True, text=True,
                          check=False, cwd=ROOT)
    assert proc.returncode == 1
    assert f"expected v{plangate.__version__}" in proc.stderr
    assert not out.exists()


@pytest.mark.slow
def test_the_wheel_installs_fresh_and_runs_by_path(tmp_path: Path) -> None:
    if importlib.util.find_spec("build") is None:
        pytest.fail("the 'build' package is missing: pip install -e '.[dev]'")
    out = tmp_path / "dist"
    version = plangate.__version__
    built = subprocess.run(["bash", str(ROOT / "scripts" / "build-dist.sh"), str(out),
                            "--tag", f"v{version}"], capture_output=True, text=True,
                           check=False, cwd=ROOT, timeout=600)
    assert built.returncode == 0, built.stderr[-3000:]
    wheel = out / f"plangate-{version}-py3-none-any.whl"
    sdist = out / f"plangate-{version}.tar.gz"
    sums = (out / "SHA256SUMS").read_text()
    assert wheel.name in sums and sdist.name in sums
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(f"plangate-{version}.dist-info/METADATA").decode()
        entry_points = archive.read(f"plangate-{version}.dist-info/entry_points.txt").decode()
    assert "plangate/schemas/candidate.schema.json" in names
    assert any(n.startswith("plangate/resources/") for n in names)
    # The committed hook line's plangate-hook is the sh launcher; the Python entry point
    # it hands calls to sits beside it.
    assert "plangate-hook-python = plangate.hooks.entry:main" in entry_points
    assert f"plangate-{version}.data/scripts/plangate-hook" in names
    # The charts' library is a dependency, not an extra's.
    assert re.search(r"^Requires-Dist: leather>=0\.4$", metadata, flags=re.MULTILINE)
    with tarfile.open(sdist) as archive:
        assert any(n.endswith("src/plangate/hooks/native/hookd_client.c")
                   for n in archive.getnames())

    fresh = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(fresh)
    installed = subprocess.run([str(fresh / "bin" / "python"), "-m", "pip", "install", "-q",
                                "--disable-pip-version-check", str(wheel)],
                               capture_output=True, text=True, check=False, timeout=600)
    assert installed.returncode == 0, installed.stderr[-3000:]
    env = _bare_env(tmp_path / "home")
    shown = subprocess.run([str(fresh / "bin" / "plangate"), "--version"], env=env,
                           capture_output=True, text=True, check=False)
    assert shown.stdout.strip() == f"plangate {version}", shown.stderr
    demo = subprocess.run([str(fresh / "bin" / "plangate"), "demo"], env=env,
                          capture_output=True, text=True, check=False, timeout=600)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-2000:]
    reports = re.findall(r"report: (\S+\.html)", demo.stdout)
    assert reports, demo.stdout[-2000:]
    for report in reports:
        assert "<svg" in Path(report).read_text(encoding="utf-8")
