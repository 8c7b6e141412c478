"""The hook helper's native client (``hooks/native/hookd_client.c``), built with the real
compiler, against real helpers, fake helpers and real sockets.

Every fallback case runs the native client against a helper that must not be used and
checks that it printed exactly what today's in-process hook prints for the same payload:
the payload is a deny, and every fake helper answers "allow", so a client that trusted it
would turn the deny into an allow. The request the native client sends is compared byte for
byte with the Python client's (environment, stream encodings, every field).
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.hookd import (
    LAUNCH,
    allow_payload,
    deny_payload,
    in_process,
    requests_served,
    run_client,
    running_helper,
    runtime_env,
    same,
)
from support.hooks import approved_repo, hook_env
from support.native import build_native, native_binary_fixture, run_native, start_fake_helper

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the native client is built on Linux only"
)
SOURCE = Path(__file__).resolve().parents[3] / "src" / "plangate" / "hooks" / "native"
SANITIZERS = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all",
              "-fno-omit-frame-pointer")


@pytest.fixture(scope="session")
def native(tmp_path_factory: pytest.TempPathFactory) -> str:
    return native_binary_fixture(tmp_path_factory)


@pytest.fixture
def repo(git_repo: Path) -> Path:
    return approved_repo(git_repo)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return runtime_env(hook_env("TASK-0001"), tmp_path / "run")


# -- SHA-256 -----------------------------------------------------------------------------

HARNESS = r"""
#define main client_main
#include "hookd_client.c"
#undef main
int main(void) {
    buf_t in = {NULL, 0, 0};
    unsigned char chunk[65536];
    ssize_t r;
    while ((r = read(0, chunk, sizeof(chunk))) > 0) buf_add(&in, chunk, (size_t)r);
    size_t at = 0;
    while (in.len - at >= 4) {
        size_t n = (size_t)in.data[at] << 24 | (size_t)in.data[at + 1] << 16 |
                   (size_t)in.data[at + 2] << 8 | in.data[at + 3];
        at += 4;
        char hex[65];
        sha256_hex(in.data + at, n, hex);
        at += n;
        printf("%s\n", hex);
    }
    return 0;
}
"""


def test_sha256_equals_hashlib_on_many_inputs(tmp_path: Path):
    from plangate.hooks.native_build import CFLAGS, find_compiler, header, manifest

    compiler = find_compiler(os.environ)
    assert compiler is not None, "a C compiler is needed (scripts/test.sh installs gcc)"
    (tmp_path / "plangate_baked.h").write_bytes(header(manifest("/p", "/q", "sha256:x", "f")))
    (tmp_path / "harness.c").write_text(HARNESS)
    shutil.copy(SOURCE / "hookd_client.c", tmp_path / "hookd_client.c")
    subprocess.run([compiler, *CFLAGS, "-o", str(tmp_path / "h"), str(tmp_path / "harness.c")],
                   cwd=tmp_path, check=True, capture_output=True, timeout=120)
    rng = random.Random(20261203)  # noqa: S311 (test inputs)
    inputs = [b"", b"abc", b"a" * 1_000_000,
              b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"]
    inputs += [bytes(rng.getrandbits(8) for _ in range(n)) for n in range(0, 260)]
    inputs += [bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 70_000)))
               for _ in range(20)]
    blob = b"".join(len(i).to_bytes(4, "big") + i for i in inputs)
    out = subprocess.run([str(tmp_path / "h")], input=blob, capture_output=True, check=True,
                         timeout=60).stdout.decode().split()
    assert out == [hashlib.sha256(i).hexdigest() for i in inputs]
    # The published vectors, as a check of the check.
    assert out[1] == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert out[2] == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"


DEADLINE_HARNESS = r"""
#define main client_main
#include "hookd_client.c"
#undef main
int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        setenv("PLANGATE_HOOKD_TIMEOUT", argv[i], 1);
        printf("%.17g\n", deadline_seconds());
    }
    return 0;
}
"""


def test_the_deadline_is_read_as_python_reads_it_or_is_the_default(tmp_path: Path):
    """Where strtod and float() agree the value is Python's; elsewhere the default 8 s,
    which only changes how long a helper is waited for."""
    from plangate.hooks.hookd_client import ANSWER_TIMEOUT, _deadline
    from plangate.hooks.native_build import CFLAGS, find_compiler, header, manifest

    compiler = find_compiler(os.environ)
    assert compiler is not None
    (tmp_path / "plangate_baked.h").write_bytes(header(manifest("/p", "/q", "sha256:x", "f")))
    (tmp_path / "harness.c").write_text(DEADLINE_HARNESS)
    shutil.copy(SOURCE / "hookd_client.c", tmp_path / "hookd_client.c")
    subprocess.run([compiler, *CFLAGS, "-o", str(tmp_path / "h"), str(tmp_path / "harness.c")],
                   cwd=tmp_path, check=True, capture_output=True, timeout=120)
    plain = ["1", "0.5", ".5", "5.", "+2", "-1", "0", "1e1", "1E-1", "2.5e+0", "29.999",
             "30.0001", "0.049", "1e999", "-1e999", "1e-999", "inf", "-Infinity", "NaN",
             "00012", "0.1234567890123456789"]
    odd = [" 1", "1 ", "1_0", "0x10", "0x1p3", "1e", "e1", ".", "", "+", "nan(1)", "1,5",
           "\u0661", "infinit", "1e+", "--1", "1..2", "\t2"]
    out = subprocess.run([str(tmp_path / "h"), *plain, *odd], capture_output=True, check=True,
                         timeout=60).stdout.decode().split()
    native = [float(v) for v in out]
    for text, value in zip(plain, native[: len(plain)], strict=True):
        assert value == _deadline({"PLANGATE_HOOKD_TIMEOUT": text}), text
    for text, value in zip(odd, native[len(plain) :], strict=True):
        assert value in (ANSWER_TIMEOUT, _deadline({"PLANGATE_HOOKD_TIMEOUT": text})), text
    assert native[0] == 1.0 and native[1] == 0.5  # the check of the check


# -- the helper answers ------------------------------------------------------------------


def test_allow_and_deny_through_the_helper_equal_in_process(
    repo: Path, env: dict[str, str], native: str
):
    with running_helper(repo, env):
        for payload in (allow_payload(repo), deny_payload(repo)):
            before = requests_served(repo, env)
            result = run_native(native, repo, "claude", payload, env)
            assert requests_served(repo, env) == before + 1, "the helper did not answer"
            same(result, in_process(repo, "claude", payload, env))


def _records(prefix: Path) -> list[bytes]:
    return [p.read_bytes() for p in sorted(prefix.parent.glob(prefix.name + ".*"))]


LOCALES = [
    {}, {"LANG": "C"}, {"LC_ALL": "C"}, {"LC_ALL": "POSIX"}, {"LANG": "POSIX"},
    {"LANG": "C.UTF-8"}, {"LC_CTYPE": "C.utf8"}, {"LANG": "xx_YY.UTF-8"},
    {"LC_ALL": "", "LANG": "C"}, {"LC_ALL": "C", "LC_CTYPE": "C.UTF-8"},
    {"LANG": "C.UTF-8", "LC_CTYPE": "C"}, {"LC_ALL": "C.UTF-8"}, {"LC_CTYPE": "UTF-8"},
]


def _locale_free(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k != "LANG" and not k.startswith("LC_")}


@pytest.mark.parametrize("locale_env", LOCALES, ids=lambda e: ",".join(
    f"{k}={v}" for k, v in e.items()) or "none")
def test_the_request_is_byte_for_byte_the_python_clients(
    repo: Path, env: dict[str, str], native: str, tmp_path: Path, locale_env: dict[str, str]
):
    """Environment (locale coercion included), stream encodings and every other field."""
    run = {**_locale_free(env), **locale_env, "PLANGATE_ODD": "a=b\x01c"}
    record = tmp_path / "request"
    fake = start_fake_helper(repo, run, "valid", str(record), count=2)
    try:
        by_python = run_client(repo, "claude", deny_payload(repo), run)
        by_native = run_native(native, repo, "claude", deny_payload(repo), run)
    finally:
        fake.kill()
        fake.wait()
    assert (by_python.returncode, by_python.stdout, by_python.stderr) == (0, b"out\xff", b"err\n")
    same(by_native, by_python)
    python_request, native_request = _records(record)
    assert native_request == python_request


EXEC_WITH_ODD_ENVIRON = r"""
import ctypes, os, sys
odd = [b"PLANGATE_DUP=first", b"NO_EQUALS_SIGN", b"PLANGATE_DUP=second", b"=empty-name"]
env = odd + [os.fsencode(k) + b"=" + os.fsencode(v) for k, v in os.environ.items()]
args = [os.fsencode(a) for a in sys.argv[1:]]
c_args = (ctypes.c_char_p * (len(args) + 1))(*args, None)
c_env = (ctypes.c_char_p * (len(env) + 1))(*env, None)
ctypes.CDLL(None, use_errno=True).execve(args[0], c_args, c_env)
sys.exit(f"execve failed: {ctypes.get_errno()}")
"""


def test_an_environ_with_duplicates_and_odd_entries_is_sent_as_python_sends_it(
    repo: Path, env: dict[str, str], native: str, tmp_path: Path
):
    """os.environ keeps the first entry of a name and skips entries without '='."""
    record = tmp_path / "request"
    fake = start_fake_helper(repo, env, "valid", str(record), count=2)
    try:
        for argv in ([sys.executable, "-S", "-I", LAUNCH, "claude"], [native, "claude"]):
            done = subprocess.run([sys.executable, "-c", EXEC_WITH_ODD_ENVIRON, *argv], cwd=repo,
                                  input=deny_payload(repo), env=env, capture_output=True,
                                  check=False, timeout=60)
            assert done.returncode == 0, done.stderr
    finally:
        fake.kill()
        fake.wait()
    python_request, native_request = _records(record)
    assert b"PLANGATE_DUP=first\0" in python_request  # the case under test is there
    assert b"PLANGATE_DUP=second" not in python_request
    assert native_request == python_request


@pytest.fixture(scope="session")
def locales(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """en_US.UTF-8 and en_US.ISO-8859-1 compiled into a private LOCPATH."""
    where = tmp_path_factory.mktemp("locales")
    localedef = shutil.which("localedef")
    if localedef is None:
        pytest.skip("localedef is not installed")
    for name, charset in (("en_US.UTF-8", "UTF-8"), ("en_US.ISO-8859-1", "ISO-8859-1")):
        done = subprocess.run([localedef, "-i", "en_US", "-f", charset, str(where / name)],
                              capture_output=True, check=False, timeout=120)
        if not (where / name).is_dir():
            pytest.skip(f"localedef cannot build {name}: {done.stderr[-200:]!r}")
    return where


def test_a_utf8_locale_sends_strict_like_python(
    repo: Path, env: dict[str, str], native: str, tmp_path: Path, locales: Path
):
    run = {**_locale_free(env), "LOCPATH": str(locales), "LANG": "en_US.UTF-8"}
    record = tmp_path / "request"
    fake = start_fake_helper(repo, run, "valid", str(record), count=2)
    try:
        by_python = run_client(repo, "claude", deny_payload(repo), run)
        by_native = run_native(native, repo, "claude", deny_payload(repo), run)
    finally:
        fake.kill()
        fake.wait()
    same(by_native, by_python)
    python_request, native_request = _records(record)
    assert b"utf-8:strict" in python_request  # the case under test really is the strict one
    assert native_request == python_request


def test_a_locale_it_cannot_prove_decides_in_process(
    repo: Path, env: dict[str, str], native: str, tmp_path: Path, locales: Path
):
    run = {**_locale_free(env), "LOCPATH": str(locales), "LANG": "en_US.ISO-8859-1"}
    record = tmp_path / "request"
    fake = start_fake_helper(repo, run, "valid", str(record))
    try:
        result = run_native(native, repo, "claude", deny_payload(repo), run)
    finally:
        fake.kill()
        fake.wait()
    assert _records(record) == [], "the native client asked the helper"
    same(result, in_process(repo, "claude", deny_payload(repo), run))


def test_a_payload_over_the_bound_is_sent_as_the_python_client_sends_it(
    repo: Path, env: dict[str, str], native: str, tmp_path: Path
):
    big = b"{" + b" " * (9 * 1024 * 1024) + b"}"
    record = tmp_path / "request"
    fake = start_fake_helper(repo, env, "valid", str(record), count=2)
    try:
        by_python = run_client(repo, "claude", big, env)
        by_native = run_native(native, repo, "claude", big, env)
    finally:
        fake.kill()
        fake.wait()
    same(by_native, by_python)
    python_request, native_request = _records(record)
    assert native_request == python_request
    assert native_request.endswith(big[: 8 * 1024 * 1024 + 1])


# -- every fallback decides in-process ---------------------------------------------------


def test_no_helper_gives_the_in_process_answer(repo: Path, env: dict[str, str], native: str):
    for payload in (deny_payload(repo), allow_payload(repo), b"", b"[1, 2"):
        same(run_native(native, repo, "claude", payload, env),
             in_process(repo, "claude", payload, env))


@pytest.mark.parametrize("host", ["git-pre-commit", "bogus", None])
def test_a_host_outside_the_three_runs_in_process_with_stdin_untouched(
    repo: Path, env: dict[str, str], native: str, host: str | None
):
    with running_helper(repo, env):
        before = requests_served(repo, env)
        result = run_native(native, repo, host, deny_payload(repo), env)
        by_python = subprocess.run(
            [sys.executable, "-S", "-I", LAUNCH, *([host] if host else [])], cwd=repo,
            input=deny_payload(repo), env=env, capture_output=True, check=False, timeout=60)
        assert requests_served(repo, env) == before
    same(result, by_python)


@pytest.mark.parametrize("extra", [{"PLANGATE_HOOKD": "off"}, {"PLANGATE_BOX": "1"}])
def test_switched_off_or_inside_the_box_never_asks(
    repo: Path, env: dict[str, str], native: str, extra: dict[str, str]
):
    with running_helper(repo, env):
        before = requests_served(repo, env)
        result = run_native(native, repo, "claude", deny_payload(repo), {**env, **extra})
        assert requests_served(repo, env) == before
    same(result, in_process(repo, "claude", deny_payload(repo), env))


@pytest.mark.parametrize("mode", [0o660, 0o606, 0o777])
def test_a_socket_with_group_or_other_bits_is_not_used(
    repo: Path, env: dict[str, str], native: str, mode: int
):
    with running_helper(repo, env) as helper:
        before = requests_served(repo, env)
        os.chmod(helper.socket, mode)
        result = run_native(native, repo, "claude", deny_payload(repo), env)
        os.chmod(helper.socket, 0o600)
        assert requests_served(repo, env) == before
    same(result, in_process(repo, "claude", deny_payload(repo), env))


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file away needs root")
@pytest.mark.parametrize("what", ["socket", "directory"])
def test_a_socket_or_directory_owned_by_another_user_is_not_used(
    repo: Path, env: dict[str, str], native: str, what: str
):
    with running_helper(repo, env) as helper:
        before = requests_served(repo, env)
        target = helper.socket if what == "socket" else os.path.dirname(helper.socket)
        os.chown(target, 65534, -1)
        result = run_native(native, repo, "claude", deny_payload(repo), env)
        os.chown(target, 0, -1)
        assert requests_served(repo, env) == before
    same(result, in_process(repo, "claude", deny_payload(repo), env))


@pytest.mark.parametrize("mode", [0o750, 0o705, 0o777])
def test_a_socket_directory_open_to_others_is_not_used(
    repo: Path, env: dict[str, str], native: str, mode: int
):
    with running_helper(repo, env) as helper:
        before = requests_served(repo, env)
        directory = os.path.dirname(helper.socket)
        os.chmod(directory, mode)
        result = run_native(native, repo, "claude", deny_payload(repo), env)
        os.chmod(directory, 0o700)
        assert requests_served(repo, env) == before
    same(result, in_process(repo, "claude", deny_payload(repo), env))


def test_a_socket_directory_whose_parent_others_can_write_is_not_used(
    repo: Path, env: dict[str, str], native: str
):
    with running_helper(repo, env) as helper:
        before = requests_served(repo, env)
        parent = os.path.dirname(os.path.dirname(helper.socket))
        os.chmod(parent, 0o777)  # noqa: S103 (the fault under test)
        result = run_native(native, repo, "claude", deny_payload(repo), env)
        os.chmod(parent, 0o700)
        assert requests_served(repo, env) == before
    same(result, in_process(repo, "claude", deny_payload(repo), env))


def test_a_socket_directory_that_is_a_link_is_not_used(
    repo: Path, env: dict[str, str], native: str, tmp_path: Path
):
    with running_helper(repo, env) as helper:
        before = requests_served(repo, env)
        other = runtime_env(env, tmp_path / "other")
        (tmp_path / "other" / "plangate").symlink_to(os.path.dirname(helper.socket))
        result = run_native(native, repo, "claude", deny_payload(repo), other)
        assert requests_served(repo, env) == before
    same(result, in_process(repo, "claude", deny_payload(repo), env))


def test_a_socket_that_is_a_symlink_is_not_used(
    repo: Path, env: dict[str, str], native: str, tmp_path: Path
):
    with running_helper(repo, env) as helper:
        before = requests_served(repo, env)
        other = runtime_env(env, tmp_path / "other")
        (tmp_path / "other" / "plangate").mkdir(mode=0o700)
        link = tmp_path / "other" / "plangate" / os.path.basename(helper.socket)
        link.symlink_to(helper.socket)
        result = run_native(native, repo, "claude", deny_payload(repo), other)
        assert requests_served(repo, env) == before
    same(result, in_process(repo, "claude", deny_payload(repo), env))


def test_a_socket_directory_inside_the_repository_is_never_used(
    repo: Path, env: dict[str, str], native: str, tmp_path: Path
):
    inner = runtime_env(env, repo / "run")
    record = tmp_path / "request"
    # The fake helper binds there (the real one refuses to); the client must not ask it.
    fake = subprocess.Popen(
        [sys.executable, "-P", "-c",
         "import os, socket, sys\n"
         "from plangate.hooks.hookd_client import socket_name\n"
         "d = sys.argv[1]; os.makedirs(d, 0o700)\n"
         "fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)\n"
         "s = socket.socket(socket.AF_UNIX); os.umask(0o077)\n"
         "n = socket_name(os.path.realpath(sys.argv[2]))\n"
         "s.bind(f'/proc/self/fd/{fd}/{n}'); s.listen(1)\n"
         "print('ready', flush=True)\n"
         "c, _ = s.accept(); open(sys.argv[3], 'wb').write(b'asked')\n",
         str(repo / "run" / "plangate"), str(repo), str(record) + ".0"],
        env=env, stdout=subprocess.PIPE)
    assert fake.stdout is not None and fake.stdout.readline() == b"ready\n"
    try:
        result = run_native(native, repo, "claude", deny_payload(repo), inner)
    finally:
        fake.kill()
        fake.wait()
    assert _records(record) == []
    same(result, in_process(repo, "claude", deny_payload(repo), env))


def test_the_control_fake_helper_is_used(repo: Path, env: dict[str, str], native: str):
    """The fake helpers below differ from this one by one fault each."""
    fake = start_fake_helper(repo, env, "valid")
    try:
        result = run_native(native, repo, "claude", deny_payload(repo), env)
    finally:
        fake.kill()
        fake.wait()
    assert (result.returncode, result.stdout, result.stderr) == (0, b"out\xff", b"err\n")


@pytest.mark.parametrize(
    "mode",
    ["garbage", "wrong-package", "wrong-payload", "wrong-version", "trailing", "short",
     "bad-code", "big-code", "refuse", "hang", "killed-mid-answer", "closed"],
)
def test_a_helper_answering_wrongly_gives_the_in_process_answer(
    repo: Path, env: dict[str, str], native: str, mode: str
):
    fake = start_fake_helper(repo, env, mode)
    timed = {**env, "PLANGATE_HOOKD_TIMEOUT": "1"}
    try:
        started = time.monotonic()
        result = run_native(native, repo, "claude", deny_payload(repo), timed)
        took = time.monotonic() - started
    finally:
        fake.kill()
        fake.wait()
    if mode == "killed-mid-answer":
        assert fake.returncode == -signal.SIGKILL
    same(result, in_process(repo, "claude", deny_payload(repo), env))
    assert result.returncode == 2
    if mode == "hang":
        assert took < 30  # the client gave up on the helper, it did not wait for it


def test_a_stale_baked_digest_decides_in_process(
    repo: Path, env: dict[str, str], tmp_path: Path
):
    from plangate.hooks.native_build import build, inspect

    built = build(str(tmp_path / "norepo"), {"XDG_CACHE_HOME": str(tmp_path / "cache"),
                                             "PATH": "/usr/bin:/bin"},
                  python=sys.executable, digest="sha256:" + "0" * 64)
    assert built.path is not None
    fake = start_fake_helper(repo, env, "valid")
    try:
        result = run_native(built.path, repo, "claude", deny_payload(repo), env)
    finally:
        fake.kill()
        fake.wait()
    same(result, in_process(repo, "claude", deny_payload(repo), env))
    assert inspect(built.path)["stale"] is True


def test_a_fallback_that_cannot_start_blocks(repo: Path, env: dict[str, str], tmp_path: Path):
    from plangate.hooks.native_build import build

    gone = tmp_path / "python-gone"
    gone.symlink_to(sys.executable)  # a real interpreter when built, removed afterwards
    built = build(str(tmp_path / "norepo"), {"XDG_CACHE_HOME": str(tmp_path / "cache"),
                                             "PATH": "/usr/bin:/bin"}, python=str(gone))
    assert built.path is not None
    gone.unlink()
    result = run_native(built.path, repo, "claude", deny_payload(repo), env)
    assert result.returncode == 2 and result.stdout == b""
    assert result.stderr == (b"plangate: HOOK_HELPER_FALLBACK_FAILED: "
                             b"[Errno 2] No such file or directory\n")


def test_under_address_and_undefined_sanitizers(
    repo: Path, env: dict[str, str], tmp_path: Path
):
    """The answer path, a refused answer and the fallback, each with the sanitizers on."""
    binary = build_native(tmp_path / "cache", tmp_path / "norepo", SANITIZERS)
    run = {**env, "ASAN_OPTIONS": "abort_on_error=0:exitcode=99:detect_leaks=1",
           "UBSAN_OPTIONS": "halt_on_error=1:exitcode=98:print_stacktrace=1"}
    for mode in ("valid", "trailing"):
        fake = start_fake_helper(repo, run, mode)
        try:
            result = run_native(binary, repo, "claude", deny_payload(repo), run)
        finally:
            fake.kill()
            fake.wait()
        assert b"Sanitizer" not in result.stderr and b"runtime error" not in result.stderr
        assert result.returncode == (0 if mode == "valid" else 2), result.stderr[-2000:]
    result = run_native(binary, repo, "claude", deny_payload(repo), run)  # no helper
    same(result, in_process(repo, "claude", deny_payload(repo), env))
    result = run_native(binary, repo, "bogus", b"", run)
    assert b"Sanitizer" not in result.stderr and b"runtime error" not in result.stderr


# -- installing ----------------------------------------------------------------------------


def _install_env(env: dict[str, str], tmp_path: Path, **extra: str) -> dict[str, str]:
    out = {k: v for k, v in env.items() if k != "CC"}
    out["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    out.update(extra)
    return out


def _local_command(repo: Path) -> str:
    import json

    local = json.loads((repo / ".claude" / "settings.local.json").read_text())
    return str(local["hooks"]["PreToolUse"][0]["hooks"][0]["command"])


def _no_cc_path(tmp_path: Path) -> str:
    """A PATH with git (install needs it) and no C compiler."""
    bin_dir = tmp_path / "nocc"
    bin_dir.mkdir()
    git = shutil.which("git")
    assert git is not None
    (bin_dir / "git").symlink_to(git)
    return str(bin_dir)


def test_install_auto_builds_the_native_client_and_its_line_asks_the_helper(
    repo: Path, env: dict[str, str], tmp_path: Path, run_cli
):
    run = _install_env(env, tmp_path)
    done = run_cli(repo, "hooks", "install", "--claude", "--local-python", "--hookd", env=run)
    assert done.code == 0, done.err
    command = _local_command(repo)
    binary = tmp_path / "cache" / "plangate" / "bin"
    import shlex

    words = shlex.split(command)
    assert words[0].startswith(f"{binary}/hookd-client-") and words[1:] == [
        "claude", "||", "exit", "2", "#", "plangate-managed"]
    assert "native client" in done.out
    assert (binary.stat().st_mode & 0o777) == 0o700
    path = words[0]
    assert (os.stat(path).st_mode & 0o777) == 0o500
    assert "hookd-client" not in (repo / ".claude" / "settings.json").read_text()
    with running_helper(repo, env):
        before = requests_served(repo, env)
        through = subprocess.run(["/bin/sh", "-c", command], cwd=repo, input=deny_payload(repo),
                                 env=env, capture_output=True, check=False, timeout=60)
        assert requests_served(repo, env) == before + 1
    same(through, in_process(repo, "claude", deny_payload(repo), env))
    # Installing again reuses the identical build; the state reports it current.
    again = run_cli(repo, "hooks", "install", "--claude", "--local-python", "--hookd", "--json",
                    env=run)
    assert '"HOOKD_NATIVE_REUSED"' in again.out and _local_command(repo) == command
    status = subprocess.run([sys.executable, "-P", "-m", "plangate", "hookd", "status", "--json"],
                            cwd=repo, env=run, capture_output=True, text=True, check=False,
                            timeout=60)
    import json

    clients = json.loads(status.stdout)["native_clients"]
    assert clients == [{"path": path, "exists": True, "owner_ok": True, "mode": "0500",
                        "baked_digest": clients[0]["baked_digest"], "stale": False}]


def test_install_auto_without_a_compiler_writes_the_python_client(
    repo: Path, env: dict[str, str], tmp_path: Path, run_cli
):
    run = _install_env(env, tmp_path, PATH=_no_cc_path(tmp_path), CC="gcc")
    done = run_cli(repo, "hooks", "install", "--claude", "--local-python", "--hookd", env=run)
    assert done.code == 0, done.err
    assert " -S -I " in _local_command(repo) and "hookd_launch.py" in _local_command(repo)
    assert "Python client" in done.out and "HOOKD_NATIVE_NO_COMPILER" in done.out


def test_cc_naming_an_absolute_path_is_used(
    repo: Path, env: dict[str, str], tmp_path: Path, run_cli
):
    compiler = shutil.which("cc")
    assert compiler is not None
    run = _install_env(env, tmp_path, PATH=_no_cc_path(tmp_path), CC=compiler)
    done = run_cli(repo, "hooks", "install", "--claude", "--local-python", "--hookd",
                   "--hookd-client", "native", env=run)
    assert done.code == 0, done.err
    assert "hookd-client-" in _local_command(repo)


def test_a_compiler_inside_the_repository_or_on_a_relative_path_is_not_used(
    repo: Path, env: dict[str, str], tmp_path: Path, run_cli
):
    fake = repo / "tools" / "cc"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\ntouch " + str(tmp_path / "ran") + "\nexit 1\n")
    fake.chmod(0o755)
    (repo / "cc").symlink_to(fake)
    run = _install_env(env, tmp_path, PATH=f"{repo / 'tools'}:.:{_no_cc_path(tmp_path)}",
                       CC=str(fake))
    done = run_cli(repo, "hooks", "install", "--claude", "--local-python", "--hookd",
                   "--hookd-client", "native", env=run)
    assert done.code != 0 and "HOOKD_NATIVE_NO_COMPILER" in done.err
    assert not (tmp_path / "ran").exists()


def test_install_native_without_a_compiler_refuses_and_writes_nothing(
    repo: Path, env: dict[str, str], tmp_path: Path, run_cli
):
    run = _install_env(env, tmp_path, PATH=_no_cc_path(tmp_path))
    done = run_cli(repo, "hooks", "install", "--claude", "--local-python", "--hookd",
                   "--hookd-client", "native", env=run)
    assert done.code != 0 and "HOOKD_NATIVE_NO_COMPILER" in done.err
    assert not (repo / ".claude" / "settings.local.json").exists()


def test_an_interpreter_outside_the_proven_versions_is_refused(tmp_path: Path):
    from plangate.hooks.native_build import UNSUPPORTED, build

    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 3 10\n")
    fake.chmod(0o755)
    built = build(str(tmp_path / "norepo"), {"XDG_CACHE_HOME": str(tmp_path / "cache"),
                                             "PATH": "/usr/bin:/bin"}, python=str(fake))
    assert (built.path, built.code) == (None, UNSUPPORTED)


def test_install_python_client_when_asked(
    repo: Path, env: dict[str, str], tmp_path: Path, run_cli
):
    run = _install_env(env, tmp_path)
    done = run_cli(repo, "hooks", "install", "--claude", "--local-python", "--hookd",
                   "--hookd-client", "python", env=run)
    assert done.code == 0 and "hookd_launch.py" in _local_command(repo)
    assert not (tmp_path / "cache" / "plangate" / "bin").exists()
    alone = run_cli(repo, "hooks", "install", "--claude", "--hookd-client", "native", env=run)
    assert alone.code != 0 and "HOOKS_HOOKD_CLIENT_NEEDS_HOOKD" in alone.err


@pytest.mark.parametrize("fault", ["group-bits", "link", "inside-repo", "other-owner"])
def test_install_native_refuses_an_unsafe_bin_directory(
    repo: Path, env: dict[str, str], tmp_path: Path, run_cli, fault: str
):
    run = _install_env(env, tmp_path)
    cache = tmp_path / "cache"
    (cache / "plangate").mkdir(parents=True, mode=0o700)
    if fault == "group-bits":
        (cache / "plangate" / "bin").mkdir(mode=0o700)
        (cache / "plangate" / "bin").chmod(0o750)
    elif fault == "link":
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        (cache / "plangate" / "bin").symlink_to(tmp_path / "elsewhere")
    elif fault == "inside-repo":
        run["XDG_CACHE_HOME"] = str(repo / "cache")
    else:
        if os.geteuid() != 0:
            pytest.skip("giving a directory away needs root")
        (cache / "plangate" / "bin").mkdir(mode=0o700)
        os.chown(cache / "plangate" / "bin", 65534, -1)
    done = run_cli(repo, "hooks", "install", "--claude", "--local-python", "--hookd",
                   "--hookd-client", "native", env=run)
    assert done.code != 0 and "HOOKD_NATIVE_BIN_DIR_UNSAFE" in done.err, done.err
    assert not (repo / ".claude" / "settings.local.json").exists()
    if fault == "link":
        assert not list((tmp_path / "elsewhere").glob("*"))
    if fault == "inside-repo":
        assert not (repo / "cache").exists()


def test_a_missing_binary_blocks(repo: Path, env: dict[str, str], tmp_path: Path):
    from plangate.hooks.install import hook_command

    command = hook_command("claude", helper=True, native=str(tmp_path / "hookd-client-gone"))
    result = subprocess.run(["/bin/sh", "-c", command], cwd=repo, input=allow_payload(repo),
                            env=env, capture_output=True, check=False, timeout=60)
    assert result.returncode == 2


def test_doctor_says_a_native_client_is_stale_and_how_to_rebuild(
    repo: Path, env: dict[str, str], tmp_path: Path
):
    import json

    from plangate.hooks.install import apply
    from plangate.hooks.native_build import build

    built = build(str(repo), {"XDG_CACHE_HOME": str(tmp_path / "cache"),
                              "PATH": "/usr/bin:/bin"}, digest="sha256:" + "1" * 64)
    assert built.path is not None
    apply(repo, ["claude"], install=True, local_python=True, helper=True, native=built.path)
    proc = subprocess.run([sys.executable, "-P", "-m", "plangate", "doctor", "--json"],
                          cwd=repo, env=env, capture_output=True, text=True, check=False,
                          timeout=300)
    facts = json.loads(proc.stdout)["facts"]
    assert facts["native_clients"][0]["stale"] is True
    stale = [f for f in facts["findings"] if f["code"] == "HOOKD_NATIVE_STALE"]
    assert stale and "--hookd" in stale[0]["hint"] and not stale[0]["fails"]
    # The stale client still answers correctly (in-process), so the canaries pass.
    assert all(p["denied"] == (p["expect"] == "deny") for p in facts["probes"])
    os.chmod(built.path, 0o700)
    os.unlink(built.path)
    proc = subprocess.run([sys.executable, "-P", "-m", "plangate", "doctor", "--json"],
                          cwd=repo, env=env, capture_output=True, text=True, check=False,
                          timeout=300)
    codes = [r["code"] for r in json.loads(proc.stdout)["reasons"]]
    assert "HOOKD_NATIVE_MISSING" in codes


OTHER_UID_HELPER = r"""
import hashlib, os, socket, sys
from plangate.hooks.hookd import locate, open_directory
from plangate.hooks.hookd_client import REQUEST_FIELDS, frame, package_digest, unframe

where = locate(sys.argv[1], os.environ)
fd = open_directory(where, create=True)
good_package = package_digest().encode()
os.umask(0o077)
sock = socket.socket(socket.AF_UNIX)
sock.bind(f"/proc/self/fd/{fd}/{where.name}")
os.setgid(65534)
os.setuid(65534)  # listen() as another user: SO_PEERCRED names it
sock.listen(4)
print("ready", flush=True)
conn, _ = sock.accept()
data = b""
while chunk := conn.recv(65536):
    data += chunk
fields = unframe(data, REQUEST_FIELDS)
if fields is not None:
    digest = hashlib.sha256(fields[-1]).hexdigest().encode()
    conn.sendall(frame([b"answer", good_package, digest, b"0", b"", b""]))
conn.close()
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="listening as another user needs root")
def test_a_listener_of_another_user_is_not_used(repo: Path, env: dict[str, str], native: str):
    """The socket and its directory are the user's; only SO_PEERCRED tells."""
    fake = subprocess.Popen([sys.executable, "-P", "-c", OTHER_UID_HELPER, str(repo)], env=env,
                            cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert fake.stdout is not None
    assert fake.stdout.readline() == b"ready\n", fake.stderr.read() if fake.stderr else b""
    try:
        result = run_native(native, repo, "claude", deny_payload(repo), env)
    finally:
        fake.kill()
        fake.wait()
    same(result, in_process(repo, "claude", deny_payload(repo), env))


def test_an_interpreter_named_by_a_bare_name_is_baked_as_its_path(
    repo: Path, env: dict[str, str], tmp_path: Path
):
    from plangate.hooks.native_build import build, read_baked

    name = os.path.basename(sys.executable)
    built = build(str(tmp_path / "norepo"), {
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "PATH": f"{os.path.dirname(sys.executable)}:/usr/bin:/bin"}, python=name)
    assert built.path is not None, built.detail
    baked = read_baked(built.path)
    assert baked is not None and baked["python"] == sys.executable
    same(run_native(built.path, repo, "claude", deny_payload(repo), env),
         in_process(repo, "claude", deny_payload(repo), env))
