"""The edges of the file-system primitives, on real files, links, directories and processes.

Files that grow while they are read (``/proc`` files: regular, with a size of 0
in ``fstat``), a read that fails after the open (``/proc/self/mem``), a file
size limit that makes a write fail halfway (``RLIMIT_FSIZE`` in a child), a
device reached through a verified handle (``/dev/null``), the modes of what is
created, descriptors that must not leak, the names and messages shown, and the
working directory.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from plangate.errors import EnvironmentFailure, PlanGateError
from plangate.fsutil import (
    FileRead,
    FileState,
    append_at,
    atomic_write,
    atomic_write_at,
    atomic_write_in,
    child_dir,
    create_if_absent_at,
    exclusive_lock,
    lock_at,
    mkdir_at,
    names_at,
    not_writable,
    open_verified_dir,
    path_unavailable,
    read_at,
    read_below,
    read_regular_file,
    remove_at,
    repo_lock,
    working_directory,
)
from support.privileges import SRC, interpreter, run_unprivileged

LINUX_PROC = pytest.mark.skipif(
    sys.platform != "linux" or not Path("/proc/self/fd").is_dir(), reason="needs Linux /proc"
)


def _error(call: object) -> PlanGateError:
    assert callable(call)
    with pytest.raises(PlanGateError) as info:
        call()
    return info.value


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "a" / "b").mkdir(parents=True)
    return root


@pytest.fixture
def no_umask() -> Iterator[None]:
    """Modes as passed, not as the umask trims them (so 0o644 and 0o645 differ)."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _open_fds() -> list[str]:
    return sorted(os.listdir("/proc/self/fd"))


# -- reads -----------------------------------------------------------------------------


def test_the_file_states_are_recorded_by_these_words() -> None:
    assert [s.value for s in FileState] == [
        "ok",
        "missing",
        "symlink",
        "not_regular",
        "too_large",
        "unreadable",
    ]
    assert FileRead(FileState.MISSING).detail == ""


def test_a_read_file_has_no_detail(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"abc")
    read = read_regular_file(tmp_path / "f", 3)
    assert read == FileRead(FileState.OK, b"abc", "")
    assert read.detail == ""


@pytest.fixture
def long_cmdline() -> Iterator[tuple[Path, bytes]]:
    """``/proc/PID/cmdline`` of a child: fstat says 0 bytes, reading gives 240 kB in full chunks."""
    args = [interpreter(), "-c", "import time; time.sleep(60)", *(c * 60000 for c in "wxyz")]
    expected = b"".join(a.encode() + b"\0" for a in args)
    child = subprocess.Popen(args)
    path = Path(f"/proc/{child.pid}/cmdline")
    try:
        # Until the child has exec'd sleep, its command line is the forking parent's.
        deadline = time.monotonic() + 30
        while path.read_bytes() != expected and time.monotonic() < deadline:
            time.sleep(0.01)
        assert path.read_bytes() == expected
        yield path, expected
    finally:
        child.kill()
        child.wait()


@LINUX_PROC
def test_a_file_that_grows_past_its_fstat_size_is_read_in_full(
    long_cmdline: tuple[Path, bytes],
) -> None:
    path, expected = long_cmdline
    assert os.stat(path).st_size == 0
    read = read_regular_file(path, 1 << 20)
    assert read.state is FileState.OK
    assert read.data == expected
    assert read.detail == ""
    # The bound is inclusive, and it holds for the bytes read, not for fstat's size.
    assert read_regular_file(path, len(expected)).data == expected
    over = read_regular_file(path, len(expected) - 1)
    assert over.state is FileState.TOO_LARGE
    assert over.data is None
    assert over.detail == f"grew past the limit {len(expected) - 1}"
    assert read_regular_file(path, 100_000).state is FileState.TOO_LARGE


@LINUX_PROC
def test_a_short_file_that_grows_past_its_fstat_size_is_read_in_full() -> None:
    expected = Path("/proc/version").read_bytes()
    assert expected
    read = read_regular_file("/proc/version", 4096)
    assert (read.state, read.data, read.detail) == (FileState.OK, expected, "")


@LINUX_PROC
def test_a_read_that_fails_after_the_open_is_unreadable() -> None:
    """Offset 0 of a process's memory is not mapped: the open succeeds, the read fails (EIO)."""
    read = read_regular_file("/proc/self/mem", 10)
    assert read.state is FileState.UNREADABLE
    assert read.data is None
    assert read.detail == os.strerror(errno.EIO)


def test_an_open_that_fails_otherwise_is_unreadable(tmp_path: Path) -> None:
    read = read_regular_file(tmp_path / ("n" * 300), 10)
    assert read.state is FileState.UNREADABLE
    assert read.detail == os.strerror(errno.ENAMETOOLONG)


@LINUX_PROC
def test_reads_leave_no_descriptor_open(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"x")
    (tmp_path / "d").mkdir()
    before = _open_fds()
    for _ in range(3):
        assert read_regular_file(tmp_path / "f", 10).ok
        assert read_regular_file(tmp_path / "f", 0).state is FileState.TOO_LARGE
        assert read_regular_file(tmp_path / "d", 10).state is FileState.NOT_REGULAR
    assert _open_fds() == before


# -- refusals: codes, messages and hints -------------------------------------------------


@pytest.mark.parametrize("code", [errno.EACCES, errno.EPERM, errno.EROFS])
def test_a_refused_permission_asks_for_permission(code: int) -> None:
    exc = OSError(code, os.strerror(code))
    unavailable = path_unavailable("a/b", exc)
    assert unavailable.code == "PATH_UNAVAILABLE"
    assert unavailable.message == f"a/b: {os.strerror(code)}"
    assert "read-only or not permitted" in unavailable.hint
    refused = not_writable("a/f", exc)
    assert refused.code == "PATH_NOT_WRITABLE"
    assert refused.message == f"cannot write a/f: {os.strerror(code)}"
    assert "read-only or not permitted" in refused.hint


def test_other_failures_ask_to_check_the_file_system() -> None:
    exc = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert path_unavailable("a", exc).hint == (
        "check the directory exists and the file system is healthy"
    )
    assert not_writable("a", exc).hint == "check free space and the file system, then retry"
    # An error without an errno text is shown as it is.
    assert path_unavailable("a", OSError("boom")).message == "a: boom"
    assert not_writable("a", OSError("boom")).message == "cannot write a: boom"


def test_a_missing_root_is_unavailable(tmp_path: Path) -> None:
    error = _error(lambda: open_verified_dir(tmp_path / "nowhere", "a"))
    assert error.code == "PATH_UNAVAILABLE"
    assert error.message == f"directory {tmp_path / 'nowhere'}: {os.strerror(errno.ENOENT)}"


def test_a_missing_component_is_named_by_its_path(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    error = _error(lambda: open_verified_dir(root, "a/nope/x"))
    assert (error.code, error.message) == ("PATH_COMPONENT_MISSING", "a/nope does not exist")
    error = _error(lambda: open_verified_dir(root, "a/b/c/d"))
    assert error.message == "a/b/c does not exist"


def test_a_target_name_the_file_system_refuses_is_unavailable(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    with open_verified_dir(root, "a") as handle:
        error = _error(lambda: atomic_write_at(handle, "n" * 300, b"x"))
    assert error.code == "PATH_UNAVAILABLE"
    assert sorted(p.name for p in (root / "a").iterdir()) == ["b"]


def test_messages_show_the_path_below_the_root(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / "a" / "b" / "f").write_bytes(b"theirs")
    with open_verified_dir(root, "a/b") as handle:
        assert handle.rel == "a/b"
        assert handle.shown() == "a/b"
        assert handle.shown("f") == "a/b/f"
        error = _error(lambda: atomic_write_at(handle, "f", b"ours", overwrite=False))
        assert (error.code, error.message) == ("FILE_EXISTS", "a/b/f already exists")
    with open_verified_dir(root) as top:
        assert top.rel == ""
        assert top.path == root
        assert top.shown() == "."
        assert top.shown("f") == "f"
    with open_verified_dir(root, ".") as dot:
        assert dot.rel == ""
        assert dot.identity() == top_identity(root)


def top_identity(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_dev, info.st_ino


def test_a_user_named_path_is_shown_in_full(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "r.json").write_bytes(b"{}")
    error = _error(lambda: atomic_write(tmp_path / "out" / "r.json", b"[]", overwrite=False))
    assert error.message == f"{tmp_path / 'out'}/r.json already exists"


# -- names --------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["", ".", "..", "a/b", "/a", "a\0b"])
def test_a_name_is_one_path_component(tmp_path: Path, bad: str) -> None:
    with open_verified_dir(tmp_path) as handle, pytest.raises(ValueError):
        handle.proc_path(bad)


def test_names_that_leave_the_directory_are_refused_by_every_writer(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / "a" / "victim").write_bytes(b"keep")
    with open_verified_dir(root, "a/b") as handle:
        with pytest.raises(ValueError):
            atomic_write_at(handle, "../escape", b"x")
        with pytest.raises(ValueError):
            append_at(handle, "../escape", b"x")
        with pytest.raises(ValueError):
            remove_at(handle, "../victim")
        with pytest.raises(ValueError), lock_at(handle, "../escape"):
            pass
        with pytest.raises(ValueError):
            mkdir_at(handle, "..")
    assert sorted(p.name for p in (root / "a").iterdir()) == ["b", "victim"]
    assert (root / "a" / "victim").read_bytes() == b"keep"
    assert list((root / "a" / "b").iterdir()) == []


@LINUX_PROC
def test_proc_path_names_the_entry_through_the_handle(tmp_path: Path) -> None:
    with open_verified_dir(tmp_path) as handle:
        assert handle.proc_path("db") == f"/proc/self/fd/{handle.fd}/db"
        assert handle.proc_path("...") == f"/proc/self/fd/{handle.fd}/..."


# -- handles ------------------------------------------------------------------------------


def test_a_handle_knows_its_directory_and_its_entries(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / "a" / "z").write_bytes(b"")
    (root / "a" / "m").write_bytes(b"")
    with open_verified_dir(root, "a") as handle:
        assert handle.identity() == top_identity(root / "a")
        assert handle.still_in_place() is True
        assert names_at(handle) == ["b", "m", "z"]
        # Moved away (nothing at its path any more): no longer in place, a plain False.
        (root / "a").rename(root / "moved")
        assert handle.still_in_place() is False


def test_a_closed_handle_has_no_descriptor(tmp_path: Path) -> None:
    handle = open_verified_dir(tmp_path)
    handle.close()
    with pytest.raises(ValueError, match="closed"):
        _ = handle.fd
    handle.close()  # closing again is fine


@LINUX_PROC
def test_handles_leave_no_descriptor_open(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / "a" / "file").write_bytes(b"")
    before = _open_fds()
    handle = open_verified_dir(root, "a/b")
    handle.close()
    with open_verified_dir(root, "a/b/new/deeper", create=True) as made:
        atomic_write_at(made, "f", b"x")
        atomic_write_at(made, "g", b"x", overwrite=False)
        append_at(made, "log", b"x")
        with lock_at(made, "l.lock"):
            pass
    for bad in ("a/nope", "a/file/x"):
        with pytest.raises(PlanGateError):
            open_verified_dir(root, bad)
    assert _open_fds() == before


def test_child_dir_never_creates(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    with open_verified_dir(root, "a") as handle:
        error = _error(lambda: child_dir(handle, "nope"))
        assert (error.code, error.message) == ("PATH_COMPONENT_MISSING", "a/nope does not exist")
        with child_dir(handle, "b") as child:
            assert child.rel == "a/b"
    assert not (root / "a" / "nope").exists()


# -- modes of what is created -------------------------------------------------------------


@pytest.mark.usefixtures("no_umask")
def test_created_directories_are_0755(tmp_path: Path) -> None:
    with open_verified_dir(tmp_path, "x/y", create=True) as handle, mkdir_at(handle, "z"):
        pass
    for rel in ("x", "x/y", "x/y/z"):
        assert _mode(tmp_path / rel) == 0o755, rel


@pytest.mark.usefixtures("no_umask")
def test_created_files_are_0644(tmp_path: Path) -> None:
    with open_verified_dir(tmp_path) as handle:
        atomic_write_at(handle, "written", b"x")
        assert create_if_absent_at(handle, "created", b"x") is True
        append_at(handle, "appended", b"x")
        with lock_at(handle, "held.lock"):
            pass
    atomic_write_in(tmp_path, "in/deep/file", b"x")
    with exclusive_lock(tmp_path / "plain.lock"):
        pass
    for name in ("written", "created", "appended", "held.lock", "in/deep/file", "plain.lock"):
        assert _mode(tmp_path / name) == 0o644, name


# -- writes -------------------------------------------------------------------------------


def test_a_fifo_in_the_target_place_is_never_replaced(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    os.mkfifo(root / "a" / "pipe")
    with open_verified_dir(root, "a") as handle:
        for overwrite in (True, False):
            error = _error(lambda ow=overwrite: atomic_write_at(handle, "pipe", b"x", overwrite=ow))
            assert error.code == "WRITE_TARGET_NOT_REGULAR"
    assert stat.S_ISFIFO((root / "a" / "pipe").lstat().st_mode)
    assert sorted(p.name for p in (root / "a").iterdir()) == ["b", "pipe"]


@pytest.mark.skipif(not Path("/dev/null").is_char_device(), reason="needs /dev/null")
def test_appending_to_a_device_is_refused() -> None:
    with open_verified_dir(Path("/dev")) as dev:
        error = _error(lambda: append_at(dev, "null", b"x"))
    assert (error.code, error.message) == ("WRITE_TARGET_NOT_REGULAR", "null is not a regular file")


def test_create_if_absent_refuses_other_bytes_of_the_same_length(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f").write_bytes(b"x\n")
    with open_verified_dir(tmp_path, "d") as d:
        error = _error(lambda: create_if_absent_at(d, "f", b"*\n"))
    assert error.code == "FILE_EXISTS"
    assert (tmp_path / "d" / "f").read_bytes() == b"x\n"


def test_concurrent_creators_of_one_file_agree(tmp_path: Path) -> None:
    """Every creator either creates the file or finds these bytes: exactly one creates it."""
    results: list[bool] = []
    errors: list[BaseException] = []
    data = b"x" * 65536
    for round_ in range(5):
        (tmp_path / str(round_)).mkdir()
        start = threading.Barrier(8)

        def create(name: str = str(round_), barrier: threading.Barrier = start) -> None:
            with open_verified_dir(tmp_path, name) as handle:
                barrier.wait()
                try:
                    results.append(create_if_absent_at(handle, "f", data))
                except BaseException as exc:  # noqa: BLE001 -- reported below
                    errors.append(exc)

        threads = [threading.Thread(target=create) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert results.count(True) == round_ + 1
        assert (tmp_path / str(round_) / "f").read_bytes() == data
        assert sorted(p.name for p in (tmp_path / str(round_)).iterdir()) == ["f"]
    assert len(results) == 40


def test_remove_at(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / "a" / "f").write_bytes(b"x")
    with open_verified_dir(root, "a") as handle:
        remove_at(handle, "f")
        remove_at(handle, "f")  # already absent: fine
        error = _error(lambda: remove_at(handle, "b"))
    assert (error.code, error.message.startswith("cannot write a/b: ")) == (
        "PATH_NOT_WRITABLE",
        True,
    )
    assert sorted(p.name for p in (root / "a").iterdir()) == ["b"]


def test_atomic_write_in_creates_the_directories_and_replaces(tmp_path: Path) -> None:
    atomic_write_in(tmp_path, "x/y/f.json", b"one")
    atomic_write_in(tmp_path, "x/y/f.json", b"two")
    atomic_write_in(tmp_path, "top", b"t")
    assert (tmp_path / "x" / "y" / "f.json").read_bytes() == b"two"
    assert (tmp_path / "top").read_bytes() == b"t"
    assert sorted(p.name for p in (tmp_path / "x" / "y").iterdir()) == ["f.json"]


def test_atomic_write_under_a_file_is_unavailable(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"x")
    error = _error(lambda: atomic_write(tmp_path / "file" / "out.json", b"{}"))
    assert error.code == "PATH_UNAVAILABLE"
    assert (tmp_path / "file").read_bytes() == b"x"


# -- locks --------------------------------------------------------------------------------


def test_a_released_lock_can_be_taken_again(tmp_path: Path) -> None:
    with open_verified_dir(tmp_path) as handle:
        with lock_at(handle, "l.lock"):
            pass
        with lock_at(handle, "l.lock"):
            pass


def test_repo_lock_creates_its_directories_and_is_exclusive(tmp_path: Path) -> None:
    with repo_lock(tmp_path, ".plangate/locks", "x.lock"):
        assert (tmp_path / ".plangate" / "locks" / "x.lock").is_file()
        with (
            pytest.raises(EnvironmentFailure) as held,
            repo_lock(tmp_path, ".plangate/locks", "x.lock"),
        ):
            pass
        assert held.value.code == "LOCK_HELD"


def test_exclusive_lock_creates_every_missing_directory(tmp_path: Path) -> None:
    lock = tmp_path / "a" / "b" / "c.lock"
    with exclusive_lock(lock):
        assert lock.is_file()


# -- a write that fails halfway ----------------------------------------------------------

_LIMITED = """
import json, resource, signal, sys
from pathlib import Path
from plangate.errors import PlanGateError
from plangate.fsutil import append_at, atomic_write_at, open_verified_dir
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
root, action = Path(sys.argv[1]), sys.argv[2]
with open_verified_dir(root) as handle:
    hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
    resource.setrlimit(resource.RLIMIT_FSIZE, (4, hard))
    try:
        if action == "replace":
            atomic_write_at(handle, "f", b"x" * 100)
        elif action == "create":
            atomic_write_at(handle, "g", b"x" * 100, overwrite=False)
        elif action == "exists":
            atomic_write_at(handle, "f", b"x" * 100, overwrite=False)
        elif action == "append":
            append_at(handle, "f", b"x" * 100)
        print(json.dumps({"code": None}))
    except PlanGateError as exc:
        print(json.dumps({"code": exc.code}))
"""


def _limited(root: Path, action: str) -> str | None:
    """Run ``action`` where no file may grow past 4 bytes (writes then fail with EFBIG)."""
    env = dict(os.environ, PYTHONPATH=str(SRC))
    proc = subprocess.run(
        [interpreter(), "-c", _LIMITED, str(root), action],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    code: str | None = json.loads(proc.stdout)["code"]
    return code


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_FSIZE checked on Linux")
@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("replace", "PATH_NOT_WRITABLE"),
        ("create", "PATH_NOT_WRITABLE"),
        # An existing file is refused before anything is written.
        ("exists", "FILE_EXISTS"),
    ],
)
def test_a_write_that_fails_halfway_changes_nothing(
    tmp_path: Path, action: str, expected: str
) -> None:
    work = tmp_path / "w"
    work.mkdir()
    (work / "f").write_bytes(b"old")
    assert _limited(work, action) == expected
    assert sorted(p.name for p in work.iterdir()) == ["f"]
    assert (work / "f").read_bytes() == b"old"


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_FSIZE checked on Linux")
def test_an_append_that_fails_is_a_reason(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"old")
    assert _limited(tmp_path, "append") == "PATH_NOT_WRITABLE"


# -- the working directory -----------------------------------------------------------------


def test_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert working_directory() == Path.cwd()


@pytest.mark.skipif(sys.platform != "linux", reason="a deleted working directory is Linux-checked")
def test_a_deleted_working_directory_is_a_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    error = _error(working_directory)
    assert error.code == "WORKING_DIRECTORY_UNAVAILABLE"
    assert error.message.startswith("the working directory (deleted or unreachable) cannot be used")


_CWD = """
import json
import shutil
from plangate.errors import PlanGateError
from plangate.fsutil import working_directory
try:
    print(json.dumps({"cwd": str(working_directory())}))
except PlanGateError as exc:
    print(json.dumps({"code": exc.code, "message": exc.message}))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="permission semantics checked on Linux")
def test_a_working_directory_under_an_unsearchable_ancestor_is_a_reason(tmp_path: Path) -> None:
    inner = tmp_path / "outer" / "inner"
    inner.mkdir(parents=True)
    (tmp_path / "outer").chmod(0)
    try:
        proc = run_unprivileged([interpreter(), "-c", _CWD], inner)
    finally:
        (tmp_path / "outer").chmod(0o755)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert found["code"] == "WORKING_DIRECTORY_UNAVAILABLE"
    assert found["message"].startswith(f"the working directory {inner} cannot be used")


def test_read_at_reads_through_the_handle(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"abc")
    with open_verified_dir(tmp_path) as handle:
        assert read_at(handle, "f", 3) == FileRead(FileState.OK, b"abc", "")


def test_a_file_handed_over_in_parts_is_read_to_its_end() -> None:
    """A short read is not the end of a file: procfs hands /proc/kallsyms over one page
    per read and reports its size as 0 (as network and FUSE file systems may hand a
    file over in parts); the read goes on until the file says it has ended."""
    path = "/proc/kallsyms"
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        pytest.skip("no /proc/kallsyms here")
    try:
        first = os.read(fd, 1 << 20)
        whole = first
        while chunk := os.read(fd, 1 << 20):
            whole += chunk
    finally:
        os.close(fd)
    if len(first) == len(whole):
        pytest.skip("this kernel hands /proc/kallsyms over in one read")
    read = read_regular_file(path, len(whole) + (1 << 20))
    assert read.state is FileState.OK
    assert read.data is not None and len(read.data) == len(whole)
    assert read.data.count(b"\n") == whole.count(b"\n")
    bounded = read_regular_file(path, len(first) + 10)
    assert bounded.state is FileState.TOO_LARGE


# -- read_below: no link followed at any directory on the way --------------------------------


def _tree_with_outside(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "repo"
    (root / ".plangate").mkdir(parents=True)
    (root / ".plangate" / "config.toml").write_bytes(b"inside\n")
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "config.toml").write_bytes(b"outside\n")
    (outside / "sub" / "config.toml").write_bytes(b"outside\n")
    return root, outside


def test_read_below_reads_a_file_inside_the_repository(tmp_path: Path) -> None:
    root, _outside = _tree_with_outside(tmp_path)
    read = read_below(root, ".plangate/config.toml", 1024)
    assert (read.state, read.data) == (FileState.OK, b"inside\n")
    assert read_below(str(root), ".plangate/config.toml", 1024).data == b"inside\n"


@pytest.mark.parametrize("link_at", [".plangate", "a/b"])
def test_read_below_refuses_a_directory_swapped_for_a_link(tmp_path: Path, link_at: str) -> None:
    """A parent directory that is a link is never followed (read_regular_file alone would
    follow it and read the file outside): the file reads as a link."""
    root, outside = _tree_with_outside(tmp_path)
    if link_at == ".plangate":
        shutil.rmtree(root / ".plangate")
        (root / ".plangate").symlink_to(outside)
        rel = ".plangate/config.toml"
    else:
        (root / "a").mkdir()
        (root / "a" / "b").symlink_to(outside / "sub")
        rel = "a/b/config.toml"
    assert read_regular_file(root / rel, 1024).data == b"outside\n"  # what is avoided
    read = read_below(root, rel, 1024)
    assert read.state is FileState.SYMLINK
    assert read.data is None
    assert "symbolic link" in read.detail


def test_read_below_keeps_the_file_checks(tmp_path: Path) -> None:
    root, outside = _tree_with_outside(tmp_path)
    (root / ".plangate" / "link.toml").symlink_to(outside / "config.toml")
    os.mkfifo(root / ".plangate" / "fifo")
    assert read_below(root, ".plangate/link.toml", 1024).state is FileState.SYMLINK
    assert read_below(root, ".plangate/fifo", 1024).state is FileState.NOT_REGULAR
    assert read_below(root, ".plangate/config.toml", 3).state is FileState.TOO_LARGE
    assert read_below(root, ".plangate/absent.toml", 1024).state is FileState.MISSING


@pytest.mark.parametrize("rel", ["absent/config.toml", "README/config.toml"])
def test_read_below_says_missing_when_a_parent_is_absent_or_a_file(
    tmp_path: Path, rel: str
) -> None:
    root, _outside = _tree_with_outside(tmp_path)
    (root / "README").write_bytes(b"x")
    assert read_below(root, rel, 1024).state is FileState.MISSING


@pytest.mark.parametrize("rel", ["../outside/config.toml", "/etc/passwd", ".plangate//config.toml",
                                 ".plangate/./config.toml", ""])
def test_read_below_refuses_a_path_that_is_not_inside(tmp_path: Path, rel: str) -> None:
    root, _outside = _tree_with_outside(tmp_path)
    read = read_below(root, rel, 1024)
    assert read.state is FileState.UNREADABLE
    assert read.data is None
