"""Writers: targets read from full option tables."""

from __future__ import annotations

import pytest

from plangate.hooks.shell import ShellKind, analyse

WRITES = [
    ("cp a b", ["b"]),
    ("cp -r a b", ["b"]),
    ("cp -t dir a", ["dir"]),
    ("mv a b", ["a", "b"]),
    ("ln -s target link", ["link"]),
    ("ln a b", ["a", "b"]),
    ("rm -rf build", ["build"]),
    ("rmdir -p a/b", ["a/b", "a"]),
    ("touch -d 2020-01-01 f", ["f"]),
    ("touch -r ref f", ["f"]),
    ("mkdir -p src/app/new", ["src/app/new"]),
    ("mkdir -m 755 d", ["d"]),
    ("chmod -x f", ["f"]),
    ("chmod +x f", ["f"]),
    ("chmod -R u+w d", ["d"]),
    ("chmod --reference=r f", ["f"]),
    ("chown -R u:g d", ["d"]),
    ("truncate -s 0 f", ["f"]),
    ("sed -i 's/a/b/' f", ["f"]),
    ("sed -i.bak -e s/a/b/ f", ["f", "f.bak"]),
    ("sed -Eie 's/a/b/' f", ["f", "fe"]),
    ("dd if=a of=b bs=1", ["b"]),
    ("command cp -v a b", ["b"]),
    ("cd src && touch x", ["src/x"]),
    ("timeout 5 touch x", ["x"]),
    ("nice -n 5 touch x", ["x"]),
    ("env LANG=C touch x", ["x"]),
    ("unlink f", ["f"]),
    ("shred -u f", ["f"]),
]
UNCLASSIFIED = [
    "cp --targ x a",
    "cp -T a b",
    "cp --parents a b",
    "cp a",
    "mv --backu a b",
    "ln -sT a b",
    "rm --recursiv x",
    "rm",
    "touch",
    "touch --dat=x f",
    "sed --i s/a/b/ f",
    "sed -nf /dev/stdin f",
    "sed -i s/a/b/",
    "sed '/re/Iw out' f",
    "sed 's/a/b/w out' f",
    "sed -e 'e ls' f",
    "sed 's/a/b/e' f",
    "sed -n '1w x' f",
    "sed 'W x' f",
    "sed -i s/a/b/ *.py",
    "cp *.py dir",
    "rm -rf $DIR",
    'touch "$f"',
    "cd; touch x",
    "cd a; touch x",
    "cd a | touch x",
    "dd of=x if=y bogus=1",
    "chmod",
    "install a b",
    "env -u X -C / touch x",
    "sudo touch x",
]


@pytest.mark.parametrize(("command", "paths"), WRITES)
def test_writers_name_their_targets(command: str, paths: list[str]) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.WRITES, result
    assert [w.path for w in result.writes] == paths


@pytest.mark.parametrize("command", UNCLASSIFIED)
def test_writers_with_unknown_options_or_targets_are_unclassified(command: str) -> None:
    assert analyse(command).kind == ShellKind.UNCLASSIFIED, analyse(command)


def test_mkdir_targets_are_directories_that_keep_their_contents() -> None:
    (write,) = analyse("mkdir -p src/new").writes
    assert write.directory and write.keeps_contents


@pytest.mark.parametrize("command", ["ln -s a b", "mv a b", "cp -r a b", "rm -r d", "cp -a a b"])
def test_link_or_rename_capable_writes_are_marked(command: str) -> None:
    assert analyse(command).writes[-1].relinks


@pytest.mark.parametrize("command", ["cp a b", "touch b", "echo x > b", "sed -i s/a/b/ b"])
def test_content_writes_are_not_marked_as_relinking(command: str) -> None:
    assert not analyse(command).writes[-1].relinks
