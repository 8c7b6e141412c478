"""The installed ``plangate-hook`` launcher: the committed hook line's entry point.

A wheel of this checkout is built and installed into a throwaway virtual environment, as a
team installs PlanGate; its ``bin`` holds ``plangate-hook`` (a POSIX sh script) and the Python
entry point ``plangate-hook-python`` beside it. Every case compares the launcher's bytes and
exit code with what the Python entry point prints for the same payload, on a deny wherever a
wrong "allow" could hide. Which route the launcher took is seen from outside: in the
"marker" cases the Python entry point is replaced by a script that exits 99 (its first line,
which names the interpreter, kept), so a launcher that handed the call over shows 99.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import time
import venv
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from support.hookd import allow_payload, deny_payload, runtime_env
from support.hooks import approved_repo, hook_env
from support.native import FAKE_HELPER

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the helper needs SO_PEERCRED (Linux)"
)

MARKER_EXIT = 99


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with this checkout's wheel installed (no dependencies
    downloaded: the test interpreter's site packages provide them, appended by a ``.pth``
    after the environment's own)."""
    base = tmp_path_factory.mktemp("launcher")
    dist = base / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(ROOT)],
        capture_output=True, text=True, check=False, timeout=600,
    )
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    wheel = next(dist.glob("plangate-*.whl"))
    fresh = base / "venv"
    venv.EnvBuilder(with_pip=False).create(fresh)
    python = fresh / "bin" / "python"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
         "--no-index", "--disable-pip-version-check", str(wheel)],
        capture_output=True, text=True, check=False, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    site = Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True).stdout.strip())
    (site / "zz-test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return fresh


@pytest.fixture
def repo(git_repo: Path) -> Path:
    return approved_repo(git_repo)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    base = {k: v for k, v in hook_env("TASK-0001").items()
            if not k.startswith("PYTHON") or k in ("PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE")}
    return runtime_env(base, tmp_path / "run")


def run(command: Path | str, repo: Path, payload: bytes, env: dict[str, str],
        host: str = "claude") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([str(command), host], cwd=repo, input=payload, env=env,
                          capture_output=True, check=False, timeout=120)


def answer(proc: subprocess.CompletedProcess[bytes]) -> tuple[int, bytes, bytes]:
    return proc.returncode, proc.stdout, proc.stderr


def reference(installed: Path, repo: Path, payload: bytes, env: dict[str, str],
              host: str = "claude") -> tuple[int, bytes, bytes]:
    """The Python entry point, never asking a helper: today's in-process answer."""
    return answer(run(installed / "bin" / "plangate-hook-python", repo, payload,
                      {**env, "PLANGATE_HOOKD": "off"}, host))


@contextmanager
def entry_replaced_by_marker(installed: Path) -> Iterator[None]:
    entry = installed / "bin" / "plangate-hook-python"
    saved = entry.read_bytes()
    first = saved.split(b"\n", 1)[0]
    entry.write_bytes(first + b"\nimport sys\nsys.exit(%d)\n" % MARKER_EXIT)
    try:
        yield
    finally:
        entry.write_bytes(saved)


@contextmanager
def helper(installed: Path, repo: Path, env: dict[str, str], python: str | None = None,
           mode: str | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """A real helper of the installed package (or of ``python``'s), or a fake one in
    ``mode`` speaking for the installed package."""
    interpreter = python or str(installed / "bin" / "python")
    if mode is None:
        argv = [interpreter, "-P", "-m", "plangate", "hookd", "run", "--idle-seconds", "120"]
        expect = b"ready "
    else:
        argv = [interpreter, "-P", "-c", FAKE_HELPER, mode, str(repo), "-", "1"]
        expect = b"ready"
    proc = subprocess.Popen(argv, cwd=repo, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith(expect), proc.stderr.read() if proc.stderr else line
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


def served(installed: Path, repo: Path, env: dict[str, str]) -> int:
    import json

    state = subprocess.run([str(installed / "bin" / "plangate"), "hookd", "status", "--json"],
                           cwd=repo, env=env, capture_output=True, check=False, timeout=60)
    return int(json.loads(state.stdout)["requests"])


# -- what is installed -------------------------------------------------------------------


def test_the_launcher_is_a_sh_script_beside_the_python_entry_point(installed: Path):
    launcher = (installed / "bin" / "plangate-hook").read_bytes()
    entry = (installed / "bin" / "plangate-hook-python").read_bytes()
    assert launcher.startswith(b"#!/bin/sh\n")
    assert entry.startswith(b"#!" + str(installed / "bin" / "python").encode())
    assert os.access(installed / "bin" / "plangate-hook", os.X_OK)


# -- without a helper ----------------------------------------------------------------------


@pytest.mark.parametrize("which", ["allow", "deny"])
def test_without_a_helper_the_launcher_decides_in_its_own_process(
    installed: Path, repo: Path, env: dict[str, str], which: str
):
    payload = allow_payload(repo) if which == "allow" else deny_payload(repo)
    expected = reference(installed, repo, payload, env)
    assert expected[0] == (0 if which == "allow" else 2)
    with entry_replaced_by_marker(installed):
        got = answer(run(installed / "bin" / "plangate-hook", repo, payload, env))
    assert got == expected  # not 99: the Python entry point was never started


def test_a_git_hook_through_the_launcher_is_the_python_entry_points(
    installed: Path, repo: Path, env: dict[str, str]
):
    expected = reference(installed, repo, b"", env, host="git-pre-commit")
    with entry_replaced_by_marker(installed):
        got = answer(run(installed / "bin" / "plangate-hook", repo, b"", env,
                         host="git-pre-commit"))
    assert got == expected


def test_an_unknown_host_is_the_same_usage_block(installed: Path, repo: Path,
                                                  env: dict[str, str]):
    expected = reference(installed, repo, b"{}", env, host="nonsense")
    assert expected[0] == 2
    assert answer(run(installed / "bin" / "plangate-hook", repo, b"{}", env,
                      host="nonsense")) == expected


@pytest.mark.parametrize(
    "variable",
    [("PYTHONPATH", "/nonexistent"), ("PYTHONIOENCODING", "latin-1"), ("PYTHONUTF8", "0"),
     ("PYTHONOPTIMIZE", "1"), ("PYTHONSAFEPATH", "1")],
)
def test_a_python_variable_that_isolation_would_drop_hands_over_to_the_python_entry_point(
    installed: Path, repo: Path, env: dict[str, str], variable: tuple[str, str]
):
    name, value = variable
    changed = {**env, name: value}
    with entry_replaced_by_marker(installed):
        handed = run(installed / "bin" / "plangate-hook", repo, deny_payload(repo), changed)
    assert handed.returncode == MARKER_EXIT
    got = answer(run(installed / "bin" / "plangate-hook", repo, deny_payload(repo), changed))
    assert got == reference(installed, repo, deny_payload(repo), changed)


@pytest.mark.parametrize(
    "line",
    ["include-system-site-packages = true", "Include-System-Site-Packages=TRUE", ""],
    ids=["true", "spelled-otherwise", "no-line-means-true"],
)
def test_an_environment_with_the_system_site_packages_hands_over(
    installed: Path, repo: Path, env: dict[str, str], line: str
):
    """site.venv() reads the key case-insensitively and takes a missing one as "true"."""
    config = installed / "pyvenv.cfg"
    saved = config.read_text()
    assert "include-system-site-packages = false" in saved
    config.write_text(saved.replace("include-system-site-packages = false", line))
    try:
        with entry_replaced_by_marker(installed):
            handed = run(installed / "bin" / "plangate-hook", repo, deny_payload(repo), env)
    finally:
        config.write_text(saved)
    assert handed.returncode == MARKER_EXIT


def test_a_link_to_the_launcher_elsewhere_finds_its_own_installation(
    installed: Path, repo: Path, env: dict[str, str], tmp_path: Path
):
    """pipx and similar tools put links to the entry points into another directory."""
    exposed = tmp_path / "exposed"
    exposed.mkdir()
    (exposed / "plangate-hook").symlink_to(installed / "bin" / "plangate-hook")
    expected = reference(installed, repo, deny_payload(repo), env)
    with entry_replaced_by_marker(installed):
        got = answer(run(exposed / "plangate-hook", repo, deny_payload(repo), env))
    assert got == expected
    # Found on PATH by the committed line's shell, as a host runs it.
    line = subprocess.run(["/bin/sh", "-c", "plangate-hook claude || exit 2"], cwd=repo,
                          input=deny_payload(repo), capture_output=True, check=False,
                          env={**env, "PATH": f"{exposed}:/usr/bin:/bin"})
    assert answer(line) == expected


def test_a_launcher_without_its_python_entry_point_blocks(
    installed: Path, repo: Path, env: dict[str, str], tmp_path: Path
):
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy2(installed / "bin" / "plangate-hook", alone / "plangate-hook")
    line = subprocess.run(["/bin/sh", "-c", f"'{alone}/plangate-hook' claude || exit 2"],
                          cwd=repo, input=allow_payload(repo), capture_output=True,
                          check=False, env=env)
    assert line.returncode == 2
    assert line.stdout == b""


# -- with a helper ---------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["allow", "deny"])
def test_through_the_helper_the_launcher_answers_byte_for_byte_the_same(
    installed: Path, repo: Path, env: dict[str, str], which: str
):
    payload = allow_payload(repo) if which == "allow" else deny_payload(repo)
    expected = reference(installed, repo, payload, env)
    with helper(installed, repo, env):
        before = served(installed, repo, env)
        with entry_replaced_by_marker(installed):
            got = answer(run(installed / "bin" / "plangate-hook", repo, payload, env))
        assert served(installed, repo, env) == before + 1
    assert got == expected


def test_a_fake_helper_with_every_check_right_is_used_by_the_launcher(
    installed: Path, repo: Path, env: dict[str, str]
):
    """The control for the faults below: the launcher does take a helper's answer."""
    with helper(installed, repo, env, mode="valid"):
        got = answer(run(installed / "bin" / "plangate-hook", repo, deny_payload(repo), env))
    assert got == (0, b"out\xff", b"err\n")


@pytest.mark.parametrize(
    "mode", ["garbage", "wrong-package", "wrong-payload", "trailing", "bad-code", "refuse",
             "hang", "closed"],
)
def test_a_helper_answering_wrongly_gives_the_in_process_answer(
    installed: Path, repo: Path, env: dict[str, str], mode: str
):
    timed = {**env, "PLANGATE_HOOKD_TIMEOUT": "1"}
    expected = reference(installed, repo, deny_payload(repo), env)
    with helper(installed, repo, env, mode=mode):
        started = time.monotonic()
        got = answer(run(installed / "bin" / "plangate-hook", repo, deny_payload(repo), timed))
        took = time.monotonic() - started
    assert got == expected
    assert got[0] == 2
    assert took < 30


def test_a_helper_of_another_installation_is_not_used(
    installed: Path, repo: Path, env: dict[str, str]
):
    """A stale helper: another package (this checkout's), so another digest."""
    expected = reference(installed, repo, deny_payload(repo), env)
    with helper(installed, repo, env, python=sys.executable):
        got = answer(run(installed / "bin" / "plangate-hook", repo, deny_payload(repo), env))
    assert got == expected


# -- doctor ----------------------------------------------------------------------------------


def test_doctor_says_which_way_a_call_goes(installed: Path, repo: Path, env: dict[str, str]):
    import json

    def route(**extra: str) -> dict:
        proc = subprocess.run(
            [str(installed / "bin" / "plangate"), "doctor", "--json"], cwd=repo,
            env={**env, "PATH": f"{installed / 'bin'}:/usr/bin:/bin", **extra},
            capture_output=True, text=True, check=False, timeout=300)
        return json.loads(proc.stdout)["facts"]["hook_route"]

    fast = route()
    assert fast["route"] == "launcher", fast
    assert fast["native"] is None
    assert fast["command"] == str(installed / "bin" / "plangate-hook")
    assert fast["package"] == str(next((installed / "lib").glob("python3.*")) /
                                  "site-packages" / "plangate")
    handed = route(PYTHONPATH="/nonexistent")
    assert handed["route"] == "python-entry-point"
    assert "PYTHON" in handed["reason"]
    assert route(PATH="/usr/bin:/bin")["route"] == "not-found"


def test_modules_planted_in_the_repository_are_never_imported(
    installed: Path, repo: Path, env: dict[str, str]
):
    """The agent writes the repository: a module there named like one the launcher or the
    decision imports must not run (``-I``: no working directory on ``sys.path``)."""
    expected = reference(installed, repo, deny_payload(repo), env)
    plant = "import sys\nsys.stdout.write('planted')\nsys.exit(0)\n"
    (repo / "plangate").mkdir()
    (repo / "plangate" / "__init__.py").write_text(plant)
    for name in ("hookd_client", "site", "sitecustomize", "json", "typing", "pathlib"):
        (repo / f"{name}.py").write_text(plant)
    for command in ("plangate-hook", "plangate-hook-python"):
        got = answer(run(installed / "bin" / command, repo, deny_payload(repo), env))
        assert got == expected
        assert b"planted" not in got[1]


@pytest.mark.parametrize("closed", ["<&-", ">&-", "2>&-"])
@pytest.mark.parametrize("which", ["allow", "deny"])
def test_a_closed_standard_stream_gives_the_python_entry_points_answer(
    installed: Path, repo: Path, env: dict[str, str], closed: str, which: str
):
    """A deny that cannot be delivered blocks (exit 2) on both paths, with a helper too."""
    payload = allow_payload(repo) if which == "allow" else deny_payload(repo)

    def line(command: str, extra: dict[str, str]) -> tuple[int, bytes, bytes]:
        return answer(subprocess.run(
            ["/bin/sh", "-c", f"'{installed / 'bin' / command}' claude {closed}"], cwd=repo,
            input=payload, capture_output=True, check=False, env={**env, **extra}, timeout=120))

    expected = line("plangate-hook-python", {"PLANGATE_HOOKD": "off"})
    assert line("plangate-hook", {}) == expected
    with helper(installed, repo, env):
        assert line("plangate-hook", {}) == expected


# -- the native client beside the launcher -----------------------------------------------------


@contextmanager
def native_linked(installed: Path, repo: Path, env: dict[str, str], cache: Path,
                  digest: str | None = None) -> Iterator[str]:
    """``plangate-hook-native`` linked beside the launcher, as ``hookd start`` links it
    (built with the real compiler into ``cache``); removed afterwards."""
    cache.mkdir(mode=0o700, exist_ok=True)
    code = ("import sys; from plangate.hooks.native_build import link_beside_launcher; "
            "b = link_beside_launcher(sys.argv[1], {'XDG_CACHE_HOME': sys.argv[2], "
            "'PATH': '/usr/local/bin:/usr/bin:/bin'}, digest=sys.argv[3] or None); "
            "print(b.code, b.path, b.detail)")
    done = subprocess.run([str(installed / "bin" / "python"), "-P", "-c", code, str(repo),
                           str(cache), digest or ""], capture_output=True, text=True,
                          check=False, env=env, timeout=300)
    assert done.stdout.startswith("HOOKD_NATIVE_LINKED "), done.stdout + done.stderr
    link = installed / "bin" / "plangate-hook-native"
    assert link.is_symlink()
    try:
        yield os.readlink(link)
    finally:
        link.unlink()


@contextmanager
def entry_interpreter_broken(installed: Path) -> Iterator[None]:
    """The Python route cannot start at all: a launcher that still answers did not take it."""
    entry = installed / "bin" / "plangate-hook-python"
    saved = entry.read_bytes()
    entry.write_bytes(b"#!/nonexistent/python3\n" + saved.split(b"\n", 1)[1])
    try:
        yield
    finally:
        entry.write_bytes(saved)


@pytest.mark.parametrize("which", ["allow", "deny"])
def test_the_native_client_beside_the_launcher_answers_through_the_helper(
    installed: Path, repo: Path, env: dict[str, str], tmp_path: Path, which: str
):
    payload = allow_payload(repo) if which == "allow" else deny_payload(repo)
    expected = reference(installed, repo, payload, env)
    with native_linked(installed, repo, env, tmp_path / "cache"), helper(installed, repo, env):
        before = served(installed, repo, env)
        with entry_interpreter_broken(installed):
            got = answer(run(installed / "bin" / "plangate-hook", repo, payload, env))
            kept = answer(run(installed / "bin" / "plangate-hook", repo, payload,
                              {**env, "PYTHONUNBUFFERED": "1"}))
        assert served(installed, repo, env) == before + 2
    assert got == expected
    assert kept == expected


@pytest.mark.parametrize("stale", [False, True], ids=["no-helper", "stale-binary"])
def test_the_native_client_beside_the_launcher_decides_in_process_on_a_miss(
    installed: Path, repo: Path, env: dict[str, str], tmp_path: Path, stale: bool
):
    """No helper, or a binary baked with another package digest (the helper refuses it):
    the native client's own fallback decides, as the Python entry point does."""
    expected = reference(installed, repo, deny_payload(repo), env)
    digest = "sha256:" + "0" * 64 if stale else None
    with native_linked(installed, repo, env, tmp_path / "cache", digest), \
            entry_replaced_by_marker(installed):
        if stale:
            with helper(installed, repo, env):
                got = answer(run(installed / "bin" / "plangate-hook", repo,
                                 deny_payload(repo), env))
        else:
            got = answer(run(installed / "bin" / "plangate-hook", repo, deny_payload(repo),
                             env))
    assert got == expected


def test_a_python_variable_bypasses_the_native_client(
    installed: Path, repo: Path, env: dict[str, str], tmp_path: Path
):
    changed = {**env, "PYTHONIOENCODING": "latin-1"}
    with native_linked(installed, repo, env, tmp_path / "cache"), helper(installed, repo, env):
        with entry_replaced_by_marker(installed):
            handed = run(installed / "bin" / "plangate-hook", repo, deny_payload(repo), changed)
        assert handed.returncode == MARKER_EXIT
        got = answer(run(installed / "bin" / "plangate-hook", repo, deny_payload(repo), changed))
    assert got == reference(installed, repo, deny_payload(repo), changed)


def test_hookd_start_links_the_native_client_and_doctor_knows_the_launcher(
    installed: Path, repo: Path, env: dict[str, str], tmp_path: Path
):
    import json

    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    started_env = {**env, "XDG_CACHE_HOME": str(cache), "PATH": "/usr/local/bin:/usr/bin:/bin"}
    plangate_bin = str(installed / "bin" / "plangate")
    proc = subprocess.run([plangate_bin, "hookd", "start", "--json"], cwd=repo, env=started_env,
                          capture_output=True, text=True, check=False, timeout=300)
    link = installed / "bin" / "plangate-hook-native"
    try:
        state = json.loads(proc.stdout)
        assert state["launcher_native"]["code"] == "HOOKD_NATIVE_LINKED", state
        assert link.is_symlink()
        assert os.readlink(link).startswith(str(cache / "plangate" / "bin" / "hookd-client-"))
        assert answer(run(installed / "bin" / "plangate-hook", repo, deny_payload(repo), env)
                      ) == reference(installed, repo, deny_payload(repo), env)
        doctor = subprocess.run([plangate_bin, "doctor", "--json"], cwd=repo,
                                env={**env, "PATH": f"{installed / 'bin'}:/usr/bin:/bin"},
                                capture_output=True, text=True, check=False, timeout=300)
        route = json.loads(doctor.stdout)["facts"]["hook_route"]
        assert route["route"] == "launcher"
        assert route["native"] == os.path.realpath(link)
    finally:
        subprocess.run([plangate_bin, "hookd", "stop"], cwd=repo, env=started_env,
                       capture_output=True, check=False, timeout=60)
        link.unlink(missing_ok=True)
    skipped = subprocess.run([plangate_bin, "hookd", "start", "--json", "--no-native"], cwd=repo,
                             env=started_env, capture_output=True, text=True, check=False,
                             timeout=300)
    subprocess.run([plangate_bin, "hookd", "stop"], cwd=repo, env=started_env,
                   capture_output=True, check=False, timeout=60)
    assert "launcher_native" not in json.loads(skipped.stdout)
    assert not link.exists()
