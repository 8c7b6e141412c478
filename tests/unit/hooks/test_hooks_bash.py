"""The conservative shell classifier: table of known commands plus properties."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from plangate.hooks.bash import BashKind, analyse
from plangate.hooks.hosts.protocol import command_text
from plangate.hooks.paths import is_device_sink

R, W, U = BashKind.READ_ONLY, BashKind.WRITES, BashKind.UNCLASSIFIABLE

CASES: list[tuple[str, BashKind, tuple[str, ...]]] = [
    ("ls -la", R, ()),
    ("git status && git diff --stat", R, ()),
    ("cat a.txt | grep x | wc -l", R, ()),
    ("ls 2>/dev/null", R, ()),
    ("make 2>&1 | tee", U, ()),
    ("echo x > CLAUDE.md", W, ("CLAUDE.md",)),
    ("echo x >> log.txt", W, ("log.txt",)),
    ("echo x>out.txt", W, ("out.txt",)),
    ("printf x &> both.txt", W, ("both.txt",)),
    ("echo x >| forced.txt", W, ("forced.txt",)),
    ("cmd 2> err.txt", U, ("err.txt",)),
    ("echo 2 2>err.txt", W, ("err.txt",)),
    ("echo x | tee a.txt b.txt", W, ("a.txt", "b.txt")),
    ("tee -a log.txt < in.txt", W, ("log.txt",)),
    ("make | tee /dev/stderr", U, ()),
    ("echo x | tee /dev/stderr", R, ()),
    ("rm /dev/null", W, ("/dev/null",)),
    ("sed -i 's/a/b/' f.txt g.txt", W, ("f.txt", "g.txt")),
    ("sed -i.bak -e 's/a/b/' f.txt", W, ("f.txt",)),
    ("sed 's/a/b/' f.txt", R, ()),
    ("cp a.txt b.txt", W, ("b.txt",)),
    ("cp -r src dst", W, ("dst",)),
    ("cp -t dir a b", W, ("dir",)),
    ("mv old.txt new.txt", W, ("old.txt", "new.txt")),
    ("rm -rf build", W, ("build",)),
    ("rm -- -weird", W, ("-weird",)),
    ("touch a b", W, ("a", "b")),
    ("mkdir -p x/y", W, ("x/y",)),
    ("ln -s target link", W, ("link",)),
    ("chmod +x run.sh", W, ("run.sh",)),
    ("truncate -s 0 big.log", W, ("big.log",)),
    ("dd if=/dev/zero of=disk.img", W, ("disk.img",)),
    ("cd sub && touch t", W, ("sub/t",)),
    ("cd /abs && touch t", W, ("/abs/t",)),
    ("cd $HOME && touch t", U, ()),
    ("(cd sub; touch t)", U, ()),
    ("bash -c 'echo x > CLAUDE.md'", W, ("CLAUDE.md",)),
    ("sh -c \"sh -c 'rm z'\"", W, ("z",)),
    ("sudo rm /etc/x", W, ("/etc/x",)),
    ("env LC_ALL=C touch a", W, ("a",)),
    ("TZ=UTC LANG=C touch a", W, ("a",)),
    ("A=1 B=2 touch a", U, ()),
    ("timeout 5 touch a", W, ("a",)),
    ("python3 -c \"open('x.txt', 'w').write('1')\"", W, ("x.txt",)),
    ("python3 -c \"print(open('x.txt').read())\"", U, ()),
    ("python3 -c 'print(1)'", R, ()),
    ("python3 -c 'import os; os.remove(\"a\")'", U, ()),
    ("python3 script.py", U, ()),
    ("python -m pytest -q", R, ()),
    ("ruff check src", R, ()),
    ("ruff check --fix src", U, ()),
    ("ruff format --check .", R, ()),
    ("git checkout -- a.py b.py", W, ("a.py", "b.py")),
    ("git checkout main", U, ()),
    ("git restore a.py", W, ("a.py",)),
    ("git rm old.py", W, ("old.py",)),
    ("git reset --hard", U, ()),
    ("git reset HEAD~1", R, ()),
    ("git apply x.patch", U, ()),
    ("git apply --check x.patch", R, ()),
    ("git stash", U, ()),
    ("git -C sub checkout -- a", W, ("sub/a",)),
    ("git -c core.hooksPath=/dev/null commit -m x", U, ()),
    ("git commit --no-verify -m x", U, ()),
    ("git commit -nm x", U, ()),
    ("git commit -am 'no n here'", W, ()),
    ("find . -name '*.py'", R, ()),
    ("find . -delete", U, ()),
    ("echo $(rm x)", U, ()),
    ("echo `rm x`", U, ()),
    ("diff <(ls a) <(ls b)", U, ()),
    ("eval 'rm x'", U, ()),
    ("xargs rm < list", U, ()),
    ("npm install", U, ()),
    ("echo x > $OUT", U, ()),
    ("echo x > *.txt", U, ()),
    ("echo 'unterminated", U, ()),
    ("echo a;>f", U, ()),
    ("cat > src/a.py <<'EOF'\nprint('> not a redirect')\nEOF", W, ("src/a.py",)),
    ("cat <<EOF > out.txt\nbody\nEOF\ntouch after", W, ("out.txt", "after")),
    ("cat <<EOF\nno end", U, ()),
    ("# just a comment", R, ()),
    ("ls # trailing comment", R, ()),
    ("echo a#b > c", W, ("c",)),
    ("", U, ()),
]


@pytest.mark.parametrize(("command", "kind", "writes"), CASES)
def test_classification_table(command: str, kind: BashKind, writes: tuple[str, ...]) -> None:
    analysis = analyse(command)
    assert analysis.kind is kind, analysis
    if kind is not U:
        assert analysis.writes == writes
    else:
        assert analysis.problems


def test_commit_is_flagged() -> None:
    analysis = analyse("git add -A && git commit -m 'x'")
    assert analysis.kind is W
    assert analysis.commits


def test_copy_into_directory_pairs() -> None:
    analysis = analyse("cd src && mv a.py b.py pkg/")
    assert analysis.into_dir == (("src/pkg/", "a.py"), ("src/pkg/", "b.py"))


def test_non_text_command_is_unclassifiable() -> None:
    assert analyse(None).kind is U
    assert analyse(["ls"]).kind is U


def test_command_text_joins_argv() -> None:
    assert command_text(["bash", "-lc", "echo a > b"]) == "bash -lc 'echo a > b'"
    assert command_text("ls") == "ls"
    assert command_text([1]) is None
    assert command_text([]) is None


WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz._-/", min_size=1, max_size=12).filter(
    lambda w: not w.startswith("-") and w.strip("/") != "" and ".." not in w and "//" not in w
)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=80))
def test_never_raises_on_arbitrary_text(text: str) -> None:
    analysis = analyse(text)
    assert analysis.kind in (R, W, U)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["ls", "cat a", "grep x y", "git status", "echo hi"]), WORD)
def test_any_redirect_is_a_write_of_its_target(reader: str, target: str) -> None:
    assume(not is_device_sink(target))
    analysis = analyse(f"{reader} > {target}")
    assert target in analysis.writes or analysis.kind is U


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=30), st.text(max_size=30))
def test_substitution_is_never_read_only(before: str, inner: str) -> None:
    analysis = analyse(f"{before} $({inner})")
    assert analysis.kind is U


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["ls", "git status", "cat a"]), st.sampled_from(["&&", "||", ";", "|"]), WORD
)
def test_a_write_after_a_reader_is_still_seen(reader: str, operator: str, target: str) -> None:
    analysis = analyse(f"{reader} {operator} touch {target}")
    assert analysis.kind is W
    assert target in analysis.writes
