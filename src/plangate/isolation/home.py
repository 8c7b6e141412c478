"""The box's private home: an empty directory, plus private copies of what is granted.

:func:`prepare_home` makes the home of one box in the run's directory and
copies each granted path (``copy`` in ``.plangate/isolation.toml`` and the
configured agents' configuration) into it from the host's home, keeping its
place relative to the home. The copy never links back: symbolic links are
copied as links (a link to ``~/.ssh`` points at nothing in the box), sockets,
FIFOs and devices are left out, and the whole copy is bounded
(:data:`MAX_COPY_BYTES`, :data:`MAX_COPY_FILES`). Every copied file's digest is
remembered.

After the run, :func:`home_changes` compares the home with what was copied in:
every file the box added, changed or removed, with its digest, for the run's
record. Nothing of the box's home ever reaches the host's; :func:`discard_home`
removes it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path

from plangate.errors import EnvironmentFailure
from plangate.records import NamedTuple

MAX_COPY_BYTES = 256 * 1024 * 1024
"""The most a box's home may receive from the host's (larger: refused)."""

MAX_COPY_FILES = 20000
"""The most files a box's home may receive from the host's."""

MAX_CHANGES_LISTED = 200
"""How many changed paths the run's record lists (the count is always there)."""

HOME_COPY_TOO_LARGE = "ISOLATION_HOME_COPY_TOO_LARGE"


class HomeCopy(NamedTuple):
    """One box's private home: where it is, and what was copied in (``~/``-path: digest)."""

    directory: Path
    copied: tuple[str, ...]
    """The granted paths that existed on the host and were copied (``~/`` form)."""
    digests: dict[str, str]


def _digest(path: Path, info: os.stat_result) -> str:
    if stat.S_ISLNK(info.st_mode):
        return "link:" + str(path.readlink())
    hasher = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            hasher.update(block)
    return "sha256:" + hasher.hexdigest()


def _walk(directory: Path) -> dict[str, str]:
    """Every file and link under ``directory`` as ``~/relative path: digest``."""
    found: dict[str, str] = {}
    for current, dirs, files in os.walk(directory):
        base = Path(current)
        for name in [*files, *dirs]:
            path = base / name
            try:
                info = path.lstat()
                if stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):
                    found["~/" + path.relative_to(directory).as_posix()] = _digest(path, info)
            except OSError:
                continue
        dirs[:] = [d for d in dirs if not (base / d).is_symlink()]
    return found


def _too_large(detail: str) -> EnvironmentFailure:
    return EnvironmentFailure(
        HOME_COPY_TOO_LARGE,
        f"the box's home would receive {detail}",
        "grant a narrower path in copy (.plangate/isolation.toml), or clean the agent's "
        "configuration directory",
    )


def _copy_one(source: Path, dest: Path, budget: list[int]) -> None:
    """Copy ``source`` to ``dest`` without following links; regular files, links, directories."""
    info = source.lstat()
    if stat.S_ISLNK(info.st_mode):
        dest.symlink_to(source.readlink())
    elif stat.S_ISREG(info.st_mode):
        budget[0] -= info.st_size
        budget[1] -= 1
        if budget[0] < 0 or budget[1] < 0:
            raise _too_large(f"more than {MAX_COPY_BYTES} bytes or {MAX_COPY_FILES} files")
        shutil.copyfile(source, dest, follow_symlinks=False)
        dest.chmod(stat.S_IMODE(info.st_mode) & 0o700 | 0o600)
    elif stat.S_ISDIR(info.st_mode):
        dest.mkdir(mode=0o700)
        for child in sorted(source.iterdir()):
            _copy_one(child, dest / child.name, budget)
    # sockets, FIFOs and devices are not copied: nothing in the box reaches the host's


def prepare_home(run_dir: Path, host_home: str, granted: tuple[str, ...]) -> HomeCopy:
    """An empty private home in ``run_dir`` with the ``~/`` paths of ``granted`` copied in."""
    directory = run_dir / "home"
    try:
        directory.mkdir(mode=0o700)
        copied: list[str] = []
        budget = [MAX_COPY_BYTES, MAX_COPY_FILES]
        for path in granted:
            if not path.startswith("~/"):
                continue
            rel = path[2:]
            source = Path(host_home, rel)
            if not os.path.lexists(source):
                continue
            dest = directory / rel
            dest.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            _copy_one(source, dest, budget)
            copied.append(path)
    except OSError as exc:
        raise EnvironmentFailure(
            "EXEC_WORKSPACE_FAILED",
            f"cannot prepare the box's home: {exc.strerror or exc}",
            "check the agent's configuration directory can be read, then retry",
        ) from None
    return HomeCopy(directory, tuple(copied), _walk(directory))


def home_changes(home: HomeCopy) -> list[dict[str, str]]:
    """What the box changed in its home: ``{"path", "change", "digest"}`` per file, sorted."""
    after = _walk(home.directory)
    changes = []
    for path in sorted(set(after) | set(home.digests)):
        before, now = home.digests.get(path), after.get(path)
        if before == now:
            continue
        change = "added" if before is None else ("removed" if now is None else "modified")
        changes.append({"path": path, "change": change, "digest": now or before or ""})
    return changes


def discard_home(home: HomeCopy) -> None:
    """Remove the box's home (nothing of it reaches the host's)."""
    shutil.rmtree(home.directory, ignore_errors=True)
