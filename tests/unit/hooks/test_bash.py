"""The conservative shell classifier: table of known commands plus properties."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from plangate.hooks.bash import BashKind, analyse
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


# -- Adversarial review: command lines that write files but were classified read-only.
# Every row here was ``READ_ONLY`` before the review (so the PreToolUse hook
# allowed it even for a protected file such as ``CLAUDE.md``). Each must now be
# either ``WRITES`` naming the file, or ``UNCLASSIFIABLE`` (denied).


WRITES: list[tuple[str, tuple[str, ...]]] = [
    # 'command' runs its argument as a command (it was listed as a reader).
    ("command touch CLAUDE.md", ("CLAUDE.md",)),
    ("command -p rm CLAUDE.md", ("CLAUDE.md",)),
    # A wrapper option's value was taken for the wrapped program ('ls' here).
    ("env -u ls touch CLAUDE.md", ("CLAUDE.md",)),
    ("timeout -k 1 5 touch CLAUDE.md", ("CLAUDE.md",)),
    ("time -o CLAUDE.md ls", ("CLAUDE.md",)),
    # Output-file options and operands of "reader" programs.
    ("sort -o CLAUDE.md x", ("CLAUDE.md",)),
    ("sort -oCLAUDE.md x", ("CLAUDE.md",)),
    ("sort --output=CLAUDE.md x", ("CLAUDE.md",)),
    ("sort -k 1 --output CLAUDE.md x", ("CLAUDE.md",)),
    ("uniq in.txt CLAUDE.md", ("CLAUDE.md",)),
    ("uniq -f 1 in.txt CLAUDE.md", ("CLAUDE.md",)),
    ("tree -o CLAUDE.md", ("CLAUDE.md",)),
    ("xxd -r dump CLAUDE.md", ("CLAUDE.md",)),
    ("python3 -m json.tool in.json CLAUDE.md", ("CLAUDE.md",)),
    ("git diff --output=CLAUDE.md", ("CLAUDE.md",)),
    ("git log -p --output CLAUDE.md", ("CLAUDE.md",)),
    ("git -C sub show --output=x.txt", ("sub/x.txt",)),
    ("ruff check -o CLAUDE.md", ("CLAUDE.md",)),
    ("ruff check --output-file=CLAUDE.md", ("CLAUDE.md",)),
    ("pytest --junitxml=CLAUDE.md", ("CLAUDE.md",)),
    ("python -m pytest --junit-xml CLAUDE.md", ("CLAUDE.md",)),
    ("pytest --basetemp=.claude", (".claude",)),
    ("mypy --junit-xml CLAUDE.md src", ("CLAUDE.md",)),
    ("mypy --cache-dir=.plangate src", (".plangate",)),
    ("mypy --html-report .claude src", (".claude",)),
    ("less -o CLAUDE.md x", ("CLAUDE.md",)),
]

UNCLASSIFIABLE: list[str] = [
    # Options that make a reader run another command.
    "git -c core.pager='touch CLAUDE.md' log",
    "git -c diff.x.command=touch diff",
    "git grep -O'touch CLAUDE.md' x",
    "git grep --open-files-in-pager=touch x",
    "git fetch --upload-pack='touch CLAUDE.md' .",
    "git push --receive-pack='touch CLAUDE.md' .",
    "rg --pre touch x",
    "rg --pre=touch x",
    "sort --compress-program=touch x",
    "history -w CLAUDE.md",
    "file -C -m CLAUDE.md",
    "pytest -o cache_dir=.claude",
    "pytest --cov=src --cov-report=xml:CLAUDE.md",
    "mypy --install-types",
    "env -C sub touch x",
    "env -S 'touch CLAUDE.md'",
    # sed's own w/W/e commands write files or run commands without -i.
    "sed 'w CLAUDE.md' x",
    "sed -n '1w CLAUDE.md' x",
    "sed 's/a/b/w CLAUDE.md' x",
    "sed -e 's/a/b/e' x",
    "sed '1e touch CLAUDE.md' x",
    # Environment variables that make a reader run a command or write elsewhere.
    "GIT_EXTERNAL_DIFF='touch CLAUDE.md' git diff",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=x git log",
    "PYTEST_ADDOPTS=--basetemp=.claude pytest",
    "env LD_PRELOAD=./x.so ls",
    "export GIT_EXTERNAL_DIFF=touch; git diff",
    "LESSOPEN='|touch CLAUDE.md %s' less x",
]

STILL_READ_ONLY: list[str] = [
    "command -v ls",
    "sort -k 2 x",
    "uniq -c in.txt",
    "git -c color.ui=never log",
    "git diff --stat",
    "git grep -n x",
    "sed -n '/word/p' x",
    "sed 's/we are/were/' x",
    "pytest -q tests",
    "pytest --co -q",
    "pytest --cov=src -q",
    "python3 -m pytest -q -p no:cacheprovider tests/unit/hooks",
    "PYTHONPATH=src pytest -q",
    "LC_ALL=C sort x",
    "mypy --strict src",
    "ruff check src",
    "python3 -m json.tool in.json",
    "xxd dump",
    "tree",
    "env LC_ALL=C ls",
]


@pytest.mark.parametrize(("command", "writes"), WRITES)
def test_reader_that_writes_names_its_file(command: str, writes: tuple[str, ...]) -> None:
    analysis = analyse(command)
    assert analysis.kind is not R, command
    if analysis.kind is W:
        assert set(writes) <= set(analysis.writes), analysis
    else:
        assert analysis.problems


@pytest.mark.parametrize("command", UNCLASSIFIABLE)
def test_reader_that_runs_commands_is_unclassifiable(command: str) -> None:
    analysis = analyse(command)
    assert analysis.kind is U, (command, analysis)
    assert analysis.problems


@pytest.mark.parametrize("command", STILL_READ_ONLY)
def test_plain_readers_stay_read_only(command: str) -> None:
    assert analyse(command).kind is R, command


@pytest.mark.parametrize(
    "code",
    [
        "getattr(__builtins__,'op'+'en')('CLAUDE.md','w')",
        "f=getattr(__builtins__, 'o'+'pen'); f('CLAUDE.md', 'a')",
        "__import__('o'+'s').remove('CLAUDE.md')",
        "import shlex; shlex.os.remove('CLAUDE.md')",
        "vars(__builtins__)['op'+'en']('CLAUDE.md','w')",
    ],
)
def test_python_c_spelling_tricks_are_unclassifiable(code: str) -> None:
    import shlex

    assert analyse(f"python3 -c {shlex.quote(code)}").kind is U


def test_python_c_plain_print_stays_read_only() -> None:
    assert analyse("python3 -c 'import json, sys; print(json.dumps(sys.version_info[:2]))'").kind \
        is R


@pytest.mark.parametrize(
    ("command", "writes"),
    [
        ("ln CLAUDE.md t.py", ("CLAUDE.md", "t.py")),
        ("cd src && ln ../CLAUDE.md", ("src/../CLAUDE.md",)),
        ("cp -al CLAUDE.md t.py", ("CLAUDE.md", "t.py")),
        ("ln -t .claude settings.json", ("settings.json", ".claude")),
    ],
)
def test_hard_links_write_their_source(command: str, writes: tuple[str, ...]) -> None:
    analysis = analyse(command)
    assert analysis.kind is W
    assert set(writes) <= set(analysis.writes), analysis


def test_symbolic_links_do_not_write_their_source() -> None:
    assert analyse("ln -s CLAUDE.md t.py").writes == ("t.py",)


@pytest.mark.parametrize("command", ["ln -st .claude settings.json", "cp -rt .claude x", "cp -t.claude a b",
                                     "mv -ft .claude settings.json"])
def test_target_directory_in_an_option_cluster_is_not_missed(command: str) -> None:
    analysis = analyse(command)
    assert analysis.kind is U or any(".claude" in w for w in analysis.writes), analysis


@pytest.mark.parametrize(
    "command",
    [
        "git commit --no-verif -m x",  # git accepts unambiguous long-option prefixes
        "git commit --no-ver -m x",
        "git --config-env=core.hooksPath=EMPTY commit -m x",
        "git --config-env core.hooksPath=EMPTY commit -m x",
    ],
)
def test_commit_that_skips_the_git_hooks_is_unclassifiable(command: str) -> None:
    assert analyse(command).kind is U


@pytest.mark.parametrize("command", ["cp -rT stuff docs/working/TASK-0001",
                                     "cp -r --no-target-directory stuff d", "mv -T a d"])
def test_no_target_directory_merges_are_unclassifiable(command: str) -> None:
    assert analyse(command).kind is U


@pytest.mark.parametrize(
    "command",
    [
        # The shell's delimiter is EOFX / EOF; a reader that takes EOF / E skips 'touch'.
        'cat <<"EOF"X\nEOFX\ntouch CLAUDE.md\nEOF',
        "cat <<EOF\\X\nEOFX\ntouch CLAUDE.md\nEOF",
        'cat <<E"OF"\nEOF\ntouch CLAUDE.md\nE',
    ],
)
def test_heredoc_delimiter_tricks_are_not_read_only(command: str) -> None:
    assert analyse(command).kind is not R


def test_plain_heredocs_still_work() -> None:
    assert analyse("cat <<'EOF' > src/a.py\nx\nEOF").writes == ("src/a.py",)
    assert analyse('cat <<"EOF"\nx\nEOF').kind is R
    assert analyse("cat <<-EOF\n\tx\n\tEOF").kind is R
    assert analyse("cat <<< 'here string'").kind is R


def test_git_dash_c_directory_does_not_leak_into_later_commands() -> None:
    # 'git -C src ...' runs git in src; the shell's own directory does not change.
    analysis = analyse("git -C src status && touch CLAUDE.md")
    assert analysis.writes == ("CLAUDE.md",), analysis
    assert analyse("git -C sub rm a.txt").writes == ("sub/a.txt",)


@pytest.mark.parametrize(
    "command",
    [
        "cd src | true; touch CLAUDE.md",  # cd ran in the pipeline's subshell
        "true || cd src && touch CLAUDE.md",  # the cd never ran
        "cd src/missing; touch CLAUDE.md",  # a failed cd does not stop ';'
        "cd src & touch CLAUDE.md",
    ],
)
def test_uncertain_cd_makes_later_relative_writes_unclassifiable(command: str) -> None:
    analysis = analyse(command)
    assert analysis.kind is U, analysis
    assert not any(w.startswith("src/") for w in analysis.writes), analysis


def test_cd_and_chain_is_still_followed() -> None:
    assert analyse("cd src && touch a && touch b").writes == ("src/a", "src/b")
    assert analyse("cd src &&\ntouch a").writes == ("src/a",)


@pytest.mark.parametrize(
    ("command", "target"),
    [
        ("sort --outp=CLAUDE.md x", "CLAUDE.md"),
        ("git diff --outp=CLAUDE.md", "CLAUDE.md"),
        ("pytest --junitx=CLAUDE.md", "CLAUDE.md"),
        ("pytest --basete .claude", ".claude"),
    ],
)
def test_abbreviated_long_options_are_seen(command: str, target: str) -> None:
    analysis = analyse(command)
    assert analysis.kind is U or target in analysis.writes, analysis


def test_abbreviated_command_running_options_are_seen() -> None:
    assert analyse("git fetch --upload-p=touch .").kind is U
    assert analyse("rg --pr touch x").kind is U
