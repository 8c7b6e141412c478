"""Readers: every option known in full; an output option is a write."""

from __future__ import annotations

import pytest

from plangate.hooks.shell import ShellKind, analyse

ALLOW = [
    "ls -la src",
    "ls --color=auto -1",
    "cat -n a b",
    "head -n 5 a",
    "head -5 a",
    "tail -f log",
    "wc -l a",
    "grep -rn --include='*.py' foo src",
    "grep -e -x f",
    "rg -n foo src",
    "rg --glob '*.py' foo",
    "sort -u a",
    "sort -rn a",
    "uniq -c a",
    "cut -d: -f1 a",
    "tr a-z A-Z",
    "diff -u a b",
    "stat -c %s a",
    "file a",
    "date -u",
    "pwd",
    "which git",
    "basename a/b .py",
    "dirname a/b",
    "realpath a",
    "du -sh src",
    "df -h",
    "jq -r .a f",
    "sha256sum a",
    "seq 1 5",
    "comm -12 a b",
    "command -v git",
    "type ls",
    "env",
    "find src -name '*.py' -type f",
    "find . -maxdepth 2 -newer a -print0",
    "printf '%s\\n' x",
    "echo -n hi",
    "tree -L 2 src",
    "nl -ba a",
    "od -c a",
]
UNCLASSIFIED = [
    "sort --outp=x a",
    "sort --compress-program=x a",
    "cp --targ x a",
    "env --chd=/ ls",
    "env -C / ls",
    "env -S 'ls -l'",
    "rg --pre cat x",
    "rg -z x",
    "rg --pre-glob x y",
    "grep --colo x f",
    "ls --al",
    "head --line 3 f",
    "find . -delete",
    "find . -exec rm {} +",
    "find . -execdir rm {} ;",
    "find . -fprint x",
    "find . -ok rm {} ;",
    "find . -fls x",
    "find *",
    "date -s 2020-01-01",
    "hostname evil",
    "ls -y",
    "curl -o x https://e",
    "wget x",
    "./cat a",
    "bin/cat a",
    "/bin/cat a",
    "tar xf a.tar",
    "less a",
    "grep -rn --include=*.py foo src",
    "file -C -m x",
    "sort -T",
]
WRITES = [
    ("sort -ro out a", ["out"]),
    ("sort -o out a", ["out"]),
    ("sort --output=out a", ["out"]),
    ("uniq -cf 1 a b", ["b"]),
    ("uniq a b", ["b"]),
    ("tree -o out", ["out"]),
    ("ls > out", ["out"]),
    ("ls >> out", ["out"]),
    ("ls &> out", ["out"]),
    ("ls >| out", ["out"]),
    ("ls 2> err", ["err"]),
    ("ls >&out", ["out"]),
    ("cat a | tee b c", ["b", "c"]),
]


@pytest.mark.parametrize("command", ALLOW)
def test_known_readers_are_read_only(command: str) -> None:
    assert analyse(command).kind == ShellKind.READ_ONLY, analyse(command)


@pytest.mark.parametrize("command", UNCLASSIFIED)
def test_unknown_options_abbreviations_and_programs_are_unclassified(command: str) -> None:
    assert analyse(command).kind == ShellKind.UNCLASSIFIED, analyse(command)


@pytest.mark.parametrize(("command", "paths"), WRITES)
def test_output_files_of_readers_are_writes(command: str, paths: list[str]) -> None:
    result = analyse(command)
    assert result.kind == ShellKind.WRITES, result
    assert [w.path for w in result.writes] == paths


@pytest.mark.parametrize("command", ["ls > /dev/null", "ls 2>&1", "ls 2>/dev/null >&2"])
def test_device_sinks_and_descriptors_write_no_file(command: str) -> None:
    assert analyse(command).kind == ShellKind.READ_ONLY


def test_programs_trusted_by_name_are_listed_for_the_path_check() -> None:
    assert analyse("git status && ls | grep x").programs == ("git", "ls", "grep")
    assert analyse("echo hi; pwd").programs == ()
