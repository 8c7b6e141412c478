"""A generated table: every writer family in many spellings is never read-only.

Each row is a writer (a redirection, tee, dd, cp, mv, ln, rm, touch, chmod, sed -i,
sed 'w', sort -o, uniq, git rm|mv|restore|checkout, git --output...) writing a
protected path, spelled with a program-name spelling (quoted, escaped, split by
quotes), put in a context (command, env, nice, nohup, timeout, stdbuf, sh -c,
lists, pipelines, negation, a cd in a child process, ...) and given a target
spelling. The classifier must either refuse the command (unclassified, runs code)
or list the path the shell really writes.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator

import pytest

from plangate.hooks.shell import ShellKind, analyse

WRITERS = (
    "echo x > {t}",
    "echo x >> {t}",
    "echo x >| {t}",
    "echo x &> {t}",
    "echo x &>> {t}",
    "echo x 2> {t}",
    "echo x 1>{t}",
    "echo x 7> {t}",
    "echo x >& {t}",
    "> {t} echo x",
    "2>>{t} echo x",
    "printf x > {t}",
    "cat a > {t}",
    ": > {t}",
    "ls >{t}",
    "tee {t}",
    "tee -a {t}",
    "tee --append {t}",
    "tee -- {t}",
    "tee -ai a {t}",
    "dd of={t}",
    "dd if=a of={t} conv=notrunc",
    "cp a {t}",
    "cp -f -- a {t}",
    "cp -rf a {t}",
    "cp --force a {t}",
    "mv a {t}",
    "mv -f -- a {t}",
    "mv {t} b",
    "ln -s a {t}",
    "ln -sf a {t}",
    "ln a {t}",
    "ln --symbolic --force a {t}",
    "rm {t}",
    "rm -rf {t}",
    "rm -- {t}",
    "unlink {t}",
    "truncate -s 0 {t}",
    "truncate --size=0 {t}",
    "touch {t}",
    "touch -c -- {t}",
    "mkdir -p {t}",
    "rmdir {t}",
    "chmod 600 {t}",
    "chmod -w {t}",
    "chmod --reference=a {t}",
    "chown u {t}",
    "shred -u {t}",
    "sed -i s/a/b/ {t}",
    "sed -i.bak s/a/b/ {t}",
    "sed --in-place s/a/b/ {t}",
    "sed -Ei s/a/b/ {t}",
    "sed -ni p {t}",
    "sed -e s/a/b/ -i {t}",
    "sed -i -e s/a/b/ -- {t}",
    "sed 'w {t}' a",
    "sed 's/a/b/w {t}' a",
    "sed -n 'b;w {t}' a",
    "sed ':a;w {t}' a",
    "sed 'v;w {t}' a",
    "sed 't x w {t}' a",
    "sort -o {t} a",
    "sort -o{t} a",
    "sort --output={t} a",
    "sort -ro {t} a",
    "uniq a {t}",
    "uniq -c -- a {t}",
    "tree -o {t}",
    "git diff --output={t}",
    "git log --output {t}",
    "git stash list --output={t}",
    "git rm {t}",
    "git rm -f -- {t}",
    "git mv a {t}",
    "git restore {t}",
    "git restore -W {t}",
    "git checkout -- {t}",
    "git checkout HEAD -- {t}",
)
CONTEXTS = (
    "{c}",
    "command {c}",
    "command -p {c}",
    "env {c}",
    "env -i -- {c}",
    "env LANG=C {c}",
    "LANG=C TZ=UTC {c}",
    "nice -n 5 {c}",
    "nohup {c}",
    "timeout 5 {c}",
    "timeout -s KILL 5 {c}",
    "stdbuf -o0 {c}",
    "timeout 5 nice env {c}",
    "sh -c '{c}'",
    "bash -ec '{c}'",
    "! {c}",
    "true && {c}",
    "true; {c}",
    "false || {c}",
    "ls | {c}",
    "ls |& {c}",
    "{c} && true",
    "{c} | cat",
    "echo x\n{c}",
    "cat <<'EOF'\nhi\nEOF\n{c}",
    "bash -c 'cd src' && {c}",
    "nice cd src && {c}",
    "env cd src; {c}",
    "sudo {c}",
    "xargs {c}",
    "exec {c}",
    "eval '{c}'",
    "( {c} )",
    "{{ {c}; }}",
    "echo $({c})",
    "f() {{ {c}; }}; f",
    "{c} &",
)
NAME_SPELLINGS: tuple[Callable[[str], str], ...] = (
    lambda p: p,
    lambda p: "\\" + p,
    lambda p: f"'{p}'",
    lambda p: f'"{p}"',
    lambda p: p[0] + "''" + p[1:],
    lambda p: "/usr/bin/" + p,
)
TARGETS = (
    ("CLAUDE.md", "CLAUDE.md"),
    ("'CLAUDE.md'", "CLAUDE.md"),
    ('"CLAUDE.md"', "CLAUDE.md"),
    ("./CLAUDE.md", "CLAUDE.md"),
    ("C\\LAUDE.md", "CLAUDE.md"),
    ("src/../CLAUDE.md", "CLAUDE.md"),
    (".claude/settings.json", ".claude/settings.json"),
    ("'.plangate/trust.toml'", ".plangate/trust.toml"),
    ("docs/working/TASK-0001/approvals/c3.json", "docs/working/TASK-0001/approvals/c3.json"),
)


def _respell(command: str, spelling: Callable[[str], str]) -> str:
    first, _space, rest = command.partition(" ")
    if not first[:1].isalpha():
        return command
    return f"{spelling(first)} {rest}"


def _rows() -> Iterator[tuple[str, str]]:
    # Every writer in every context (plain name, plain target) ...
    for writer in WRITERS:
        for context in CONTEXTS:
            yield context.format(c=writer.format(t="CLAUDE.md")), "CLAUDE.md"
    # ... and every writer with every name spelling and target spelling.
    for writer in WRITERS:
        for spelling in NAME_SPELLINGS:
            for target, path in TARGETS:
                yield _respell(writer.format(t=target), spelling), path


ROWS = list(_rows())


def test_the_table_is_large() -> None:
    assert len({command for command, _path in ROWS}) > 6500


def _wrong(command: str, path: str) -> str | None:
    result = analyse(command)
    if result.kind == ShellKind.READ_ONLY:
        return "read-only"
    if result.kind != ShellKind.WRITES:
        return None  # refused: unclassified or runs code
    declared = {posixpath.normpath(w.path) for w in result.writes}
    declared |= {posixpath.normpath(posixpath.join(d, b)) for d, b, _step in result.into_dir}
    if path not in declared:
        return f"writes {sorted(declared)}, not {path}"
    return None


@pytest.mark.parametrize("chunk", range(8))
def test_no_spelling_of_a_writer_is_read_only_or_misplaced(chunk: int) -> None:
    failures = []
    for index in range(chunk, len(ROWS), 8):
        command, path = ROWS[index]
        problem = _wrong(command, path)
        if problem is not None:
            failures.append((command, problem))
    assert not failures, failures[:20]


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "cat a b",
        "grep -rn foo src",
        "rg -n foo",
        "git status",
        "git diff",
        "git log --oneline -5",
        "find src -name '*.py'",
        "head -5 a",
        "wc -l a",
        "sed -n 1,5p a",
        "sed ':a;N;$!ba;s/\\n/ /g' a",
        "echo x > /dev/null",
        "cd src && ls",
        "bash -c 'cd src && ls'",
    ],
)
def test_everyday_readers_stay_read_only(command: str) -> None:
    assert analyse(command).kind == ShellKind.READ_ONLY, analyse(command)
