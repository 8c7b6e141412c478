"""``git``: each subcommand with its full option table and what it changes.

Read-only subcommands (``status``, ``diff``, ``log``...) list every option
they accept here; an option that writes (``--output``) is a write target, an
option that runs a program (``--ext-diff``, ``--textconv``, ``-O``,
``--upload-pack``) is simply not in the table. Writing subcommands name their
targets (``rm``, ``mv``, ``restore``, ``checkout -- paths``). Every flag that
skips git's hooks (``commit -n``/``--no-verify``, ``push --no-verify``,
``-c core.hooksPath=...``) is reported as such and always denied.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable

from plangate.hooks.shell.options import Parsed, Spec, parse_options, spec
from plangate.hooks.shell.parse import Word
from plangate.hooks.shell.state import State

_DIFF_LONG = (
    "numstat shortstat name-only name-status summary patch no-patch raw cached staged "
    "no-color ignore-all-space ignore-space-change ignore-blank-lines ignore-space-at-eol "
    "minimal patience histogram no-renames full-index binary exit-code quiet check "
    "no-prefix text merge-base function-context compact-summary no-ext-diff no-textconv "
    "ignore-cr-at-eol patch-with-stat patch-with-raw no-indent-heuristic indent-heuristic "
    "irreversible-delete pickaxe-all pickaxe-regex default-prefix"
)
_DIFF_ARGS = (
    "src-prefix dst-prefix diff-filter stat-width stat-count output "
    "inter-hunk-context line-prefix anchored diff-algorithm"
)
_DIFF_OPT = (
    "stat color word-diff find-renames find-copies abbrev ignore-submodules "
    "relative dirstat color-moved break-rewrites submodule unified"
)
_LOG_LONG = (
    "oneline graph all reverse follow first-parent no-merges merges no-decorate source "
    "abbrev-commit no-abbrev-commit left-right cherry-pick cherry-mark topo-order date-order "
    "author-date-order boundary ancestry-path simplify-by-decoration full-history "
    "walk-reflogs regexp-ignore-case all-match invert-grep extended-regexp fixed-strings "
    "perl-regexp log-size do-walk use-mailmap no-use-mailmap mailmap no-mailmap children "
    "parents dense sparse simplify-merges show-pulls relative-date parents count "
    "remove-empty no-min-parents no-max-parents"
)
_LOG_ARGS = (
    "date since after until before author committer grep max-count skip encoding "
    "since-as-filter exclude"
)
_LOG_OPT = (
    "pretty decorate branches tags remotes glob no-walk expand-tabs notes show-notes "
    "format max-parents min-parents"
)
"""``-U``/``--unified`` take their value only attached (``-U5``, ``--unified=5``) and
``--format``, ``--max-parents``, ``--min-parents`` only after ``=``: git reads the
next word as an option of its own (``git log --format --output=F`` truncates F)."""

DIFF = spec(
    "pusRabwWqzhi",
    "SGOl",
    "MCBU",
    long=_DIFF_LONG,
    long_args=_DIFF_ARGS,
    long_optional=_DIFF_OPT,
    numeric=True,
)
LOG = spec(
    "pusRabwWqzhimEFP",
    "SGnL",
    "MCBU",
    long=f"{_DIFF_LONG} {_LOG_LONG}",
    long_args=f"{_DIFF_ARGS} {_LOG_ARGS}",
    long_optional=f"{_DIFF_OPT} {_LOG_OPT}",
    numeric=True,
)

READ_ONLY: dict[str, Spec] = {
    "status": spec(
        "sbvz",
        "",
        "u",
        long="short branch long show-stash ahead-behind no-ahead-behind renames "
        "no-renames verbose null no-column",
        long_optional="porcelain untracked-files ignored ignore-submodules column find-renames",
    ),
    "diff": DIFF,
    "log": LOG,
    "show": LOG,
    "rev-list": LOG,
    "whatchanged": LOG,
    "rev-parse": spec(
        "q",
        long="show-toplevel git-dir git-common-dir verify quiet "
        "is-inside-work-tree is-inside-git-dir is-bare-repository "
        "show-prefix show-cdup symbolic-full-name symbolic all branches "
        "tags remotes absolute-git-dir show-superproject-working-tree "
        "local-env-vars show-object-format",
        long_optional="abbrev-ref short",
    ),
    "ls-files": spec(
        "cdmoiskutvfz",
        "xX",
        long="cached deleted modified others ignored stage killed unmerged "
        "exclude-standard full-name error-unmatch directory "
        "no-empty-directory eol deduplicate recurse-submodules sparse",
        long_args="exclude exclude-from exclude-per-directory format",
        long_optional="abbrev",
    ),
    "ls-tree": spec(
        "drtlz",
        long="name-only name-status object-only full-name full-tree long",
        long_args="format",
        long_optional="abbrev",
    ),
    "cat-file": spec(
        "tsep",
        long="batch-all-objects buffer unordered follow-symlinks",
        long_optional="batch batch-check",
    ),
    "blame": spec(
        "lstfnecwpb",
        "L",
        "MC",
        long="porcelain line-porcelain show-stats incremental root show-name "
        "show-number show-email minimal reverse first-parent progress "
        "no-progress",
        long_args="date ignore-rev ignore-revs-file contents encoding",
        long_optional="abbrev color-lines color-by-age",
    ),
    "grep": spec(
        "iwvcElnhHIFPqzoaGr",
        "efABCm",
        long="cached untracked no-index recurse-submodules ignore-case word-regexp "
        "invert-match count extended-regexp basic-regexp fixed-strings "
        "perl-regexp line-number column files-with-matches name-only "
        "files-without-match null only-matching quiet break heading "
        "show-function function-context all-match and or not full-name text "
        "no-recursive recursive exclude-standard no-exclude-standard",
        long_args="max-depth context after-context before-context threads max-count",
        long_optional="color",
        numeric=True,
    ),
    "describe": spec(
        long="tags all always long exact-match contains first-parent",
        long_args="match exclude candidates",
        long_optional="abbrev dirty broken",
    ),
    "shortlog": spec("nsec", long="numbered summary email committer", long_args="group format"),
    "show-ref": spec(
        "qsd",
        long="head heads tags verify quiet dereference exists branches",
        long_optional="hash abbrev",
    ),
    "merge-base": spec("a", long="all octopus independent is-ancestor fork-point"),
    "for-each-ref": spec(
        long="ignore-case omit-empty",
        long_args="format sort count points-at exclude",
        long_optional="merged no-merged contains no-contains",
    ),
    "count-objects": spec("vH", long="verbose human-readable"),
    "check-ignore": spec("qvnz", long="quiet verbose non-matching no-index"),
    "check-attr": spec("az", long="all cached"),
    "var": spec("l"),
    "cherry": spec("v", long_optional="abbrev"),
    "version": spec(long="build-options"),
}

ADD = spec(
    "AuNfvn",
    long="all update intent-to-add force verbose dry-run ignore-errors "
    "ignore-missing renormalize sparse no-all ignore-removal "
    "no-ignore-removal refresh",
    long_args="chmod",
)
PUSH = spec(
    "ufqvndo",
    "",
    "",
    long="set-upstream force force-if-includes no-force-if-includes tags all "
    "follow-tags no-follow-tags delete quiet verbose dry-run porcelain atomic "
    "no-atomic progress no-progress mirror prune no-verify verify "
    "no-thin thin ipv4 ipv6",
    long_args="push-option",
    long_optional="force-with-lease recurse-submodules",  # '--signed' runs gpg
)
COMMIT = spec(
    "aiopqsvnz",
    "mFCt",
    "u",
    long="all include only quiet signoff no-signoff amend no-edit allow-empty "
    "allow-empty-message reset-author dry-run short porcelain long status "
    "no-status no-verify verify no-post-rewrite null branch",
    long_args="message file author date reuse-message fixup squash cleanup trailer template",
    long_optional="untracked-files",
)
RESTORE = spec(
    "SWqm",
    "s",
    long="staged worktree ours theirs merge ignore-unmerged overlay "
    "no-overlay quiet progress no-progress "
    "ignore-skip-worktree-bits",
    long_args="source conflict",
)
CHECKOUT = spec("qf", "bB", long="quiet force")
SWITCH = spec("q", "cC", long="quiet", long_args="create force-create")
RM = spec("rfqn", long="cached force quiet dry-run ignore-unmatch sparse")
MV = spec("fkvn", long="force verbose dry-run sparse")
RESET = spec("q", long="soft mixed quiet no-refresh refresh")
APPLY_CHECK = spec("vz", long="check stat numstat summary verbose")
BRANCH = spec(
    "arvlidDmMcCf",
    "ut",
    "",
    long="all remotes verbose list ignore-case show-current delete move copy force "
    "unset-upstream no-track no-color no-column omit-empty",
    long_args="set-upstream-to sort format points-at",
    long_optional="contains no-contains merged no-merged color column track",
)
TAG = spec(
    "ldfa",
    "mF",
    "n",
    long="list delete force annotate ignore-case no-column omit-empty",
    long_args="message file sort format points-at",
    long_optional="contains no-contains merged no-merged column",
)
FETCH = spec(
    "qvpPtfan",
    long="all prune prune-tags tags no-tags dry-run force quiet "
    "verbose progress no-progress unshallow append "
    "no-write-fetch-head write-fetch-head multiple "
    "prefetch atomic",
    long_args="depth deepen shallow-since shallow-exclude jobs",
    long_optional="recurse-submodules",
)
REMOTE = spec("v", long="verbose")
REMOTE_QUERY = spec("n", long="push all")
"""``git remote show -n``, ``git remote get-url --push/--all``."""
CONFIG_READ = spec(
    "lz",
    long="list get get-all get-regexp show-origin show-scope local "
    "global system worktree name-only null includes no-includes",
    long_args="type default file blob",
)
STASH_SHOW = spec("pu", long="patch stat include-untracked only-untracked", numeric=True)
WORKTREE_LIST = spec("vz", long="porcelain verbose", long_optional="expire")
REFLOG = spec("", "n", long="all", long_args="date max-count", long_optional="format", numeric=True)

SAFE_CONFIG_PREFIXES = (
    "user.",
    "color.",
    "advice.",
    "core.quotepath",
    "log.",
    "diff.renames",
    "diff.noprefix",
    "column.",
    "init.defaultbranch",
    "commit.gpgsign=false",
)
"""``git -c key=value`` keys that cannot run a command or redirect git."""
_GPG_CONFIG_KEYS = ("log.showsignature",)
"""Keys under a safe prefix that run gpg (``log.showSignature``: like ``--show-signature``)."""
_GPG_FORMATS = ("%G", "%(signature")
"""Format placeholders that verify a signature with gpg (``git log --format=%G?``)."""

_GLOBAL_FLAGS = frozenset(
    {
        "--no-pager",
        "--no-replace-objects",
        "--literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--no-optional-locks",
        "--no-advice",
        "-P",
    }
)
_WIDENING_PATHSPECS = frozenset({"--glob-pathspecs", "--icase-pathspecs"})
"""Global flags after which a pathspec names more files than its text (``claude.md``
matches ``CLAUDE.md``): a subcommand that writes or commits its paths is unclassified."""
_PATH_WRITERS = frozenset({"rm", "mv", "restore", "checkout", "commit"})


def git_rule(_name: str, args: tuple[Word, ...], state: State, _walker: object) -> None:
    """Judge ``git ARGS``: global options, then the subcommand's rule."""
    words = list(args)
    saved = state.cwd
    index = 0
    while index < len(words):
        text = words[index].text
        if text is None or words[index].glob:
            state.unclassified("git: a word is not literal")
            return
        if not text.startswith("-"):
            break
        if text == "-C":
            directory = _value(words, index)
            if directory is None:
                state.unclassified("git -C without a literal directory")
                return
            state.cwd = state.joined(directory) if not directory.startswith("~") else None
            index += 2
            continue
        if text == "-c":
            setting = _value(words, index)
            if setting is None:
                state.unclassified("git -c without a literal setting")
                return
            lowered = setting.lower()
            if "hookspath" in lowered.replace("_", ""):
                state.skips("git -c core.hooksPath skips the git hooks")
                return
            if not lowered.startswith(SAFE_CONFIG_PREFIXES) or lowered.startswith(_GPG_CONFIG_KEYS):
                state.unclassified(f"git -c {setting.split('=', 1)[0]!r} may run a command")
                return
            index += 2
            continue
        if text in _GLOBAL_FLAGS:
            index += 1
            continue
        if text == "--version":
            return
        if text == "--help":
            if index + 1 < len(words):
                state.unclassified("git --help WORD runs the manual viewer, like git help WORD")
            return
        state.unclassified(f"git {text.split('=', 1)[0]} is not an option the classifier knows")
        return
    if index >= len(words):
        state.unclassified("git without a subcommand")
        return
    sub = words[index].text or ""
    rest = tuple(words[index + 1 :])
    widening = [w.text for w in words[:index] if w.text in _WIDENING_PATHSPECS]
    if widening and sub in _PATH_WRITERS:
        state.unclassified(f"git {widening[0]} {sub}: its paths name more files than they spell")
        state.cwd = saved
        return
    try:
        rule = SUBCOMMANDS.get(sub)
        if rule is not None:
            rule(sub, rest, state)
        elif sub in READ_ONLY:
            _parse(sub, READ_ONLY[sub], rest, state)
        else:
            state.unclassified(f"git {sub} may change the working tree")
    finally:
        state.cwd = saved


def _value(words: list[Word], index: int) -> str | None:
    """The word after the option at ``index`` when it is literal; None when it is
    missing, expands, or is a glob (``git -C d* rm a`` removes ``docs/a``)."""
    if index + 1 >= len(words) or words[index + 1].glob:
        return None
    return words[index + 1].text


def _parse(sub: str, table: Spec, rest: tuple[Word, ...], state: State) -> Parsed | None:
    """Parse ``rest`` by ``table``; an ``--output`` file any table accepts is a write.

    Every table goes through here, so a table shared by another subcommand
    (``git stash list`` takes ``git log``'s options) cannot accept ``--output``
    without its file being seen.
    """
    result = parse_options(table, rest)
    if isinstance(result, str):
        state.unclassified(f"git {sub}: {result}")
        return None
    for value in result.values("--format", "--pretty"):
        if any(placeholder in value for placeholder in _GPG_FORMATS):
            state.unclassified(f"git {sub}: a format that verifies signatures runs gpg")
            return None
    for value in result.values("--output"):
        state.write(value, sink_ok=True)
    return result


def _paths(parsed: Parsed, sub: str, state: State) -> list[str] | None:
    if parsed.glob_operands or any(p.startswith(":") for p in parsed.operands):
        state.unclassified(f"git {sub} with a glob or pathspec magic: its paths are not known")
        return None
    return list(parsed.operands)


def _add(sub: str, rest: tuple[Word, ...], state: State) -> None:
    """Stages only: a commit is judged when it happens, with what this stages when the
    commit is in the same command line (see :func:`plangate.hooks.shell.analyse`)."""
    parsed = _parse(sub, ADD, rest, state)
    if parsed is None:
        return
    # Without a pathspec every change is staged ('-A', '-u' and '--no-ignore-removal' only
    # widen what a pathspec names to removals, still within the pathspec).
    before = state.stage_all
    state.stage_all = False
    _stages(list(parsed.operands), state, everything=not parsed.operands)
    if state.stage_all and parsed.has("-f", "--force"):
        # Ignored files are not among the changes a commit is judged with.
        state.unclassified("git add --force with a pathspec that names more than a file")
    state.stage_all = state.stage_all or before


def _named_remotes(sub: str, repositories: list[str], state: State) -> None:
    """A repository given as a path or URL is another repository's code and config.

    ``git push ./dir`` runs the hooks of the repository at ``dir`` (``pre-receive``,
    ``post-update``), which may be files the agent wrote; only a remote's name (its
    URL lives in the guarded ``.git/config``) or ``.`` is read.
    """
    for repository in repositories:
        if repository != "." and (
            "/" in repository or ":" in repository or repository.startswith((".", "~", "-"))
        ):
            state.unclassified(
                f"git {sub} to {repository!r}: a path or URL, not a remote's name, "
                "runs that repository's hooks or transport"
            )
            return


def _push(sub: str, rest: tuple[Word, ...], state: State) -> None:
    """A push to a remote's name is judged by the pre-push hook; one into this
    repository (``.``) moves its refs, and ``-u`` writes ``.git/config``."""
    parsed = _parse(sub, PUSH, rest, state)
    if parsed is None:
        return
    if parsed.has("--no-verify"):
        state.skips("git push --no-verify skips the pre-push hook")
    _named_remotes(sub, list(parsed.operands[:1]), state)
    if parsed.operands[:1] == (".",):
        writes_git_dir(state)  # 'git push . +a:b' moves the local branch b
    if parsed.has("-u", "--set-upstream"):
        writes_git_dir(state)  # the branch's upstream is recorded in .git/config


def _fetch(sub: str, rest: tuple[Word, ...], state: State) -> None:
    """Every fetch writes ``.git``: ``FETCH_HEAD``, the refs its refspecs name (local
    branches with ``a:b`` or ``.`` as the remote), tags it follows, pruned refs."""
    parsed = _parse(sub, FETCH, rest, state)
    if parsed is None:
        return
    many = parsed.has("--multiple")
    _named_remotes(sub, list(parsed.operands if many else parsed.operands[:1]), state)
    writes_git_dir(state)


def _commit(sub: str, rest: tuple[Word, ...], state: State) -> None:
    parsed = _parse(sub, COMMIT, rest, state)
    if parsed is None:
        return
    if parsed.has("-n", "--no-verify", "--no-post-rewrite"):
        state.skips("git commit --no-verify (-n) skips the git hooks")
        return
    if parsed.has("-t", "--template"):
        state.unclassified("git commit --template opens an editor")
        return
    paths = _paths(parsed, sub, state)
    if paths is None:
        return
    state.commits = True
    state.commit_all = state.commit_all or parsed.has("-a", "--all")
    for path in paths:
        if _names_more(path):
            # 'git commit -- "[C]LAUDE.md"' commits CLAUDE.md: judged with every change.
            state.commit_all = True
            continue
        joined = state.joined(path)
        if joined is None:
            state.unclassified("git commit paths relative to an unknown directory")
            return
        state.commit_paths.append(joined)


def _restore(sub: str, rest: tuple[Word, ...], state: State) -> None:
    parsed = _parse(sub, RESTORE, rest, state)
    if parsed is None:
        return
    paths = _paths(parsed, sub, state)
    if paths is None:
        return
    if not paths:
        state.unclassified("git restore without paths")
        return
    staged_only = parsed.has("-S", "--staged") and not parsed.has("-W", "--worktree")
    if parsed.has("-S", "--staged"):
        _stages(paths, state)  # '--source=REV --staged' puts REV's bytes in the index
    if not staged_only:
        for path in paths:
            state.write(path, relinks=True)


def _checkout(sub: str, rest: tuple[Word, ...], state: State) -> None:
    """``checkout [REV] -- PATHS`` writes PATHS; ``checkout -b NEW`` moves HEAD only."""
    words = list(rest)
    texts = [w.text for w in words]
    if "--" in texts:
        split = texts.index("--")
        before = _parse(sub, CHECKOUT, tuple(words[:split]), state)
        if before is None:
            return
        if before.has("-b", "-B") or len(before.operands) > 1:
            state.unclassified("git checkout with a branch and paths")
            return
        after = words[split + 1 :]
        if not after:
            state.unclassified("git checkout REV -- without paths switches the working tree")
            return
        listed = parse_options(spec(), [Word("--"), *after])
        if isinstance(listed, str):
            state.unclassified(listed)
            return
        paths = _paths(listed, sub, state)
        for path in paths or ():
            state.write(path, relinks=True)
        return
    parsed = _parse(sub, CHECKOUT, rest, state)
    if parsed is None:
        return
    if parsed.has("-b", "-B") and not parsed.operands:
        # A new branch at HEAD: the working tree stays, the branch and HEAD are written
        # ('-B' moves an existing branch, the trust branch too).
        writes_git_dir(state)
        return
    state.unclassified("git checkout of a branch or commit rewrites the working tree")


def _switch(sub: str, rest: tuple[Word, ...], state: State) -> None:
    parsed = _parse(sub, SWITCH, rest, state)
    if parsed is None:
        return
    if parsed.has("-c", "-C", "--create", "--force-create") and not parsed.operands:
        writes_git_dir(state)
        return
    state.unclassified("git switch to another commit rewrites the working tree")


def _rm(sub: str, rest: tuple[Word, ...], state: State) -> None:
    parsed = _parse(sub, RM, rest, state)
    if parsed is None:
        return
    paths = _paths(parsed, sub, state)
    if paths is None:
        return
    if not paths:
        state.unclassified("git rm without paths")
    if parsed.has("-n", "--dry-run"):
        return
    _stages(paths, state)  # the removal is staged: a commit in the same line commits it
    if parsed.has("--cached"):
        return
    for path in paths:
        state.write(path, relinks=True)


def _mv(sub: str, rest: tuple[Word, ...], state: State) -> None:
    parsed = _parse(sub, MV, rest, state)
    if parsed is None:
        return
    paths = _paths(parsed, sub, state)
    if paths is None:
        return
    if len(paths) < 2:
        state.unclassified("git mv without a source and a destination")
        return
    for path in paths[:-1]:
        state.write(path, relinks=True)
        state.into(paths[-1], posixpath.basename(path.rstrip("/")))
    state.write(paths[-1], relinks=True)


def _stages(paths: list[str], state: State, *, everything: bool = False) -> None:
    """Record what a part puts in the index, for a commit in the same command line.

    A plain path is recorded; a pathspec that names more than its text (``.``, ``dir/``,
    a glob, ``:(magic)``) stages any change: the commit is then judged with every change.
    """
    for path in paths:
        if _names_more(path):
            everything = True
        else:
            state.stage_paths.append(state.joined(path))
    state.stage_all = state.stage_all or everything


def _names_more(path: str) -> bool:
    """A pathspec that names more than its text: ``.``, ``dir/``, ``:(magic)``, a glob
    (git matches ``*?[`` in a pathspec even when the shell did not expand it)."""
    return (
        path in (".", "")
        or path.endswith("/")
        or path.startswith(":")
        or any(c in path for c in "*?[]")
    )


def _reset(sub: str, rest: tuple[Word, ...], state: State) -> None:
    """``reset [REV] -- PATHS`` stages; a reset without paths moves the current branch.

    Without ``--hard``/``--merge``/``--keep`` (not in the table) a reset changes refs
    and the index only. ``reset REV`` points the branch at any commit (an older tip of
    the trust branch too) and even ``reset`` alone writes ``ORIG_HEAD`` and the reflog;
    a single operand without ``--`` is a commit or a path as the repository decides.
    """
    parsed = _parse(sub, RESET, rest, state)
    if parsed is None:
        return
    paths = _paths(parsed, sub, state)
    if paths is None:
        return
    texts = [w.text for w in rest]
    after = len(texts) - texts.index("--") - 1 if "--" in texts else 0
    # 'reset REV -- PATHS' / 'reset REV PATHS' puts REV's bytes in the index: staged.
    named = paths[len(paths) - after :] if after else paths[1:]
    if named:
        _stages(named, state)
    else:
        writes_git_dir(state)


def _apply(sub: str, rest: tuple[Word, ...], state: State) -> None:
    parsed = _parse(sub, APPLY_CHECK, rest, state)
    if parsed is None:
        return
    if not parsed.has("--check", "--stat", "--numstat", "--summary"):
        state.unclassified("git apply: the patch's paths are not on the command line")


_BRANCH_WRITES = (
    "-d", "-D", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy", "-f", "--force",
    "-u", "--set-upstream-to", "--unset-upstream", "-t", "--track", "--no-track",
)  # fmt: skip
"""``git branch`` options that create, move, copy, delete a branch or set its upstream."""
_TAG_WRITES = (
    "-d", "--delete", "-f", "--force", "-a", "--annotate", "-m", "--message", "-F", "--file",
)  # fmt: skip
"""``git tag`` options that create, move or delete a tag."""


def _lists_refs(parsed: Parsed, writers: tuple[str, ...]) -> bool:
    """The listing form of ``git branch``/``git tag``: no writing option, and either no
    operand or ``-l``/``--list`` (its operands are then patterns). Any other form
    creates, moves or deletes a ref."""
    if parsed.has(*writers):
        return False
    return not parsed.operands or parsed.has("-l", "--list")


def _branch(sub: str, rest: tuple[Word, ...], state: State) -> None:
    parsed = _parse(sub, BRANCH, rest, state)
    if parsed is not None and not _lists_refs(parsed, _BRANCH_WRITES):
        writes_git_dir(state)


def _tag(sub: str, rest: tuple[Word, ...], state: State) -> None:
    parsed = _parse(sub, TAG, rest, state)  # signing is not in the table
    if parsed is not None and not _lists_refs(parsed, _TAG_WRITES):
        writes_git_dir(state)


SYMBOLIC_REF = spec("qd", "m", long="quiet delete short recurse no-recurse")  # -m REASON
REPLACE = spec("lfdge", long="list force delete graft edit raw convert-graft-file",
               long_args="format")  # fmt: skip


def _symbolic_ref(sub: str, rest: tuple[Word, ...], state: State) -> None:
    """``git symbolic-ref [-q] [--short] NAME`` reads; with a target, ``-d`` or ``-m`` it
    writes (``git symbolic-ref HEAD refs/heads/main`` repoints HEAD)."""
    parsed = _parse(sub, SYMBOLIC_REF, rest, state)
    if parsed is None:
        return
    if len(parsed.operands) != 1 or parsed.has("-d", "--delete", "-m"):
        writes_git_dir(state)


def _replace(sub: str, rest: tuple[Word, ...], state: State) -> None:
    """``git replace -l [PATTERN]`` lists; every other form writes a ``refs/replace`` ref."""
    parsed = _parse(sub, REPLACE, rest, state)
    if parsed is None:
        return
    if not parsed.has("-l", "--list") or parsed.has("-f", "--force", "-d", "--delete"):
        writes_git_dir(state)


def _writes_refs(sub: str, rest: tuple[Word, ...], state: State) -> None:
    """``update-ref``, ``pack-refs``: write refs whatever their options."""
    for word in rest:
        if word.text is None or word.glob:
            state.unclassified(f"git {sub}: a word is not literal")
            return
    writes_git_dir(state)


def writes_git_dir(state: State) -> None:
    """Record a write of the repository's git directory (refs, ``HEAD``, config).

    The target is ``.git`` in the directory git runs in; the hook guards ``.git`` at
    every depth, so the command is judged a write of git's internal directory. A
    commit on the current branch is not recorded here: it is judged as a commit.
    """
    state.write(".git", keeps_contents=True)


def _remote(sub: str, rest: tuple[Word, ...], state: State) -> None:
    texts = [w.text for w in rest]
    if texts and texts[0] in ("get-url", "show"):
        parsed = _parse(sub, REMOTE_QUERY, rest[1:], state)
        if parsed is not None and len(parsed.operands) != 1:
            state.unclassified(f"git remote {texts[0]} needs exactly one remote")
        elif parsed is not None:
            _named_remotes(f"remote {texts[0]}", list(parsed.operands), state)
        return
    parsed = _parse(sub, REMOTE, rest, state)
    if parsed is not None and parsed.operands:
        state.unclassified("git remote with a subcommand that changes the configuration")


def _config(sub: str, rest: tuple[Word, ...], state: State) -> None:
    texts = [w.text for w in rest]
    if texts[:1] in (["get"], ["list"]):
        parsed = _parse(sub, CONFIG_READ, rest[1:], state)
        return
    parsed = _parse(sub, CONFIG_READ, rest, state)
    if parsed is None:
        return
    if not parsed.has("-l", "--list", "--get", "--get-all", "--get-regexp"):
        state.unclassified("git config without --get or --list writes the configuration")


def _subcommand_forms(
    forms: dict[str, Spec], ref_writers: frozenset[str] = frozenset()
) -> Callable[[str, tuple[Word, ...], State], None]:
    """``git SUB FORM ...``: FORM's table when it only reads; a form in ``ref_writers``
    writes refs or reflogs (``git reflog expire``); any other form is unclassified."""

    def rule(sub: str, rest: tuple[Word, ...], state: State) -> None:
        first = rest[0].text if rest else None
        if first is not None and first in ref_writers:
            _writes_refs(f"{sub} {first}", rest[1:], state)
            return
        if first not in forms:
            state.unclassified(f"git {sub} {first or ''} may change the working tree".strip())
            return
        _parse(f"{sub} {first}", forms[first], rest[1:], state)

    return rule


SUBCOMMANDS: dict[str, Callable[[str, tuple[Word, ...], State], None]] = {
    "add": _add,
    "push": _push,
    "fetch": _fetch,
    "commit": _commit,
    "restore": _restore,
    "checkout": _checkout,
    "switch": _switch,
    "rm": _rm,
    "mv": _mv,
    "reset": _reset,
    "apply": _apply,
    "branch": _branch,
    "tag": _tag,
    "remote": _remote,
    "config": _config,
    "stash": _subcommand_forms({"list": LOG, "show": STASH_SHOW}),
    "worktree": _subcommand_forms({"list": WORKTREE_LIST}),
    "reflog": _subcommand_forms({"show": REFLOG, "list": spec()}, frozenset({"expire", "delete"})),
    "notes": _subcommand_forms(
        {"list": spec(), "show": spec()},
        frozenset({"add", "copy", "append", "edit", "merge", "remove", "prune"}),
    ),
    "symbolic-ref": _symbolic_ref,
    "replace": _replace,
    "update-ref": _writes_refs,
    "pack-refs": _writes_refs,
}
"""Subcommands with a rule of their own (the others in :data:`READ_ONLY` only read)."""
