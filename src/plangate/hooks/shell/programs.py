"""The programs the classifier knows, each with its full option table and rule.

Three families:

- **readers** (:data:`READERS`): programs on a fixed list, by bare name, whose
  every option is listed; a few options name a file the program writes
  (``sort -o``), which becomes a write target;
- **writers** (:data:`WRITERS`): ``cp``, ``mv``, ``ln``, ``rm``, ``touch``,
  ``mkdir``, ``chmod``, ``sed -i``... whose targets are read from their
  operands;
- **programs that run project code** (:data:`RUNS_CODE`): interpreters, test
  runners, build tools, package managers, linters. Never read-only: they are
  allowed only inside an isolated run or a host sandbox.

A program on no list, or given by a path (``./cat``, ``bin/cat``), is
unclassified.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from typing import Protocol

from plangate.hooks.shell.options import Parsed, Spec, parse_options, spec
from plangate.hooks.shell.parse import Word
from plangate.hooks.shell.sed import scan as scan_sed
from plangate.hooks.shell.state import State


class Walker(Protocol):
    """What a rule may ask of the classifier: judge a nested command or script."""

    def simple(self, words: tuple[Word, ...], state: State) -> None: ...

    def child(self, words: tuple[Word, ...], state: State) -> None:
        """Judge a command another program runs in its own process (``env CMD``)."""
        ...

    def script(self, text: str, state: State) -> None: ...


Rule = Callable[[str, tuple[Word, ...], State, Walker], None]

BUILTINS = frozenset(
    {"echo", "printf", "pwd", "true", "false", "test", "[", "cd", "type", "command", ":"}
)
"""Bash builtins: found before any file on PATH, so never resolved."""

_ALL = "--help --version"

READERS: dict[str, Spec] = {
    "ls": spec(
        "aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1",
        "ITw",
        long="all almost-all author escape directory dired file-type full-time "
        "group-directories-first no-group human-readable si "
        "dereference-command-line dereference-command-line-symlink-to-dir "
        "dereference inode kibibytes literal numeric-uid-gid hide-control-chars "
        "show-control-chars quote-name recursive reverse size context zero help "
        "version",
        long_args="block-size format hide ignore indicator-style quoting-style sort "
        "tabsize time time-style width",
        long_optional="color classify hyperlink",
    ),
    "cat": spec(
        "AbeEnstTuv",
        long="show-all number-nonblank show-ends number squeeze-blank "
        "show-tabs show-nonprinting help version",
    ),
    "head": spec(
        "qvz",
        "cn",
        long="quiet silent verbose zero-terminated help version",
        long_args="bytes lines",
        numeric=True,
    ),
    "tail": spec(
        "fFqvz",
        "cns",
        long="retry quiet silent verbose zero-terminated help version",
        long_args="bytes lines pid sleep-interval max-unchanged-stats",
        long_optional="follow",
        numeric=True,
    ),
    "wc": spec(
        "clmwL",
        long="bytes chars lines words max-line-length help version",
        long_args="files0-from total",
    ),
    "grep": spec(
        "EFGPiyvwxcLloqsbHhnTZUraIRz",
        "efmABCdD",
        long="extended-regexp fixed-strings basic-regexp perl-regexp ignore-case "
        "no-ignore-case invert-match word-regexp line-regexp count "
        "files-with-matches files-without-match only-matching quiet silent "
        "no-messages byte-offset with-filename no-filename line-number "
        "line-buffered initial-tab null null-data text recursive "
        "dereference-recursive help version",
        long_args="regexp file max-count after-context before-context context "
        "directories devices binary-files label include exclude "
        "exclude-from exclude-dir",
        long_optional="color colour",
        numeric=True,
    ),
    "rg": spec(
        "aiSsFwxvclnNHhqLU0P.",
        "eEgtTmABCfjMr",
        long="files files-with-matches files-without-match count count-matches hidden "
        "no-ignore no-ignore-vcs no-ignore-parent no-ignore-dot no-ignore-global "
        "follow fixed-strings ignore-case smart-case case-sensitive word-regexp "
        "line-regexp invert-match line-number no-line-number with-filename "
        "no-filename json vimgrep heading no-heading only-matching pcre2 multiline "
        "multiline-dotall trim text null unrestricted no-messages stats sort-files "
        "column no-column byte-offset passthru quiet debug help version "
        "type-list no-config",
        long_args="glob iglob type type-not max-count after-context before-context "
        "context file threads max-depth replace max-filesize encoding sort "
        "sortr color colors max-columns engine",
    ),
    "sort": spec(
        "bdfgiMhnRrVcCmsuz",
        "kotTS",
        long="ignore-leading-blanks dictionary-order ignore-case general-numeric-sort "
        "ignore-nonprinting month-sort human-numeric-sort numeric-sort "
        "random-sort reverse version-sort merge stable unique zero-terminated "
        "debug help version",
        long_args="key output field-separator temporary-directory buffer-size "
        "parallel files0-from random-source sort batch-size",
        long_optional="check",
    ),
    "uniq": spec(
        "cdDiuz",
        "fsw",
        long="count repeated ignore-case unique zero-terminated help version",
        long_args="skip-fields skip-chars check-chars",
        long_optional="all-repeated group",
    ),
    "cut": spec(
        "nsz",
        "bcdf",
        long="complement only-delimited zero-terminated help version",
        long_args="bytes characters delimiter fields output-delimiter",
    ),
    "tr": spec("cCdst", long="complement delete squeeze-repeats truncate-set1 help version"),
    "diff": spec(
        "aBbdEeilNnpqrsTtuwyZ",
        "CUFIDxXSW",
        long="brief recursive new-file unidirectional-new-file text ignore-case "
        "ignore-all-space ignore-space-change ignore-blank-lines "
        "ignore-tab-expansion ignore-trailing-space side-by-side "
        "report-identical-files strip-trailing-cr no-dereference minimal "
        "speed-large-files expand-tabs initial-tab suppress-common-lines "
        "left-column show-c-function suppress-blank-empty help version",
        long_args="exclude exclude-from label ignore-matching-lines width "
        "show-function-line starting-file from-file to-file "
        "tabsize horizon-lines",
        long_optional="unified context color normal",
    ),
    "cmp": spec(
        "blsv",
        "in",
        long="print-bytes quiet silent verbose help version",
        long_args="ignore-initial bytes",
    ),
    "stat": spec(
        "fLt",
        "c",
        long="dereference file-system terse help version",
        long_args="format printf cached",
    ),
    "file": spec(
        "bhiLNnrsz0kl",
        "eFf",
        long="brief no-dereference dereference mime "
        "mime-type mime-encoding keep-going raw "
        "special-files uncompress help version",
        long_args="exclude separator files-from",
    ),
    "date": spec(
        "uRI",
        "drf",
        "",
        long="rfc-email utc universal debug help version",
        long_args="date file reference rfc-3339",
        long_optional="iso-8601",
    ),
    "whoami": spec(long=_ALL),
    "id": spec("gGnruzZa", long="group groups name real user zero context help version"),
    "uname": spec(
        "asnrvmpio",
        long="all kernel-name nodename kernel-release kernel-version "
        "machine processor hardware-platform operating-system "
        "help version",
    ),
    "basename": spec("az", "s", long="multiple zero help version", long_args="suffix"),
    "dirname": spec("z", long="zero help version"),
    "realpath": spec(
        "eEmLPqsz",
        long="canonicalize-existing canonicalize-missing logical "
        "physical quiet strip no-symlinks zero help version",
        long_args="relative-to relative-base",
    ),
    "readlink": spec(
        "efmnqsvz",
        long="canonicalize canonicalize-existing canonicalize-missing "
        "no-newline quiet silent verbose zero help version",
    ),
    "du": spec(
        "0abcDhHklLmPsSx",
        "dBtX",
        long="null all apparent-size bytes total dereference-args human-readable "
        "dereference no-dereference separate-dirs si summarize one-file-system "
        "inodes help version",
        long_args="max-depth block-size threshold exclude-from exclude files0-from time-style",
        long_optional="time",
    ),
    "df": spec(
        "ahHiklPTv",
        "Btx",
        long="all human-readable si inodes local no-sync sync "
        "portability print-type total help version",
        long_args="block-size type exclude-type output",
    ),
    "nl": spec(
        "p",
        "bdfhilnsvw",
        long="no-renumber help version",
        long_args="body-numbering section-delimiter footer-numbering header-numbering "
        "line-increment join-blank-lines number-format number-separator "
        "starting-line-number number-width",
    ),
    "jq": spec(
        "rjcnseSCMaR",
        "f",
        long="raw-output join-output compact-output null-input "
        "slurp exit-status sort-keys color-output "
        "monochrome-output ascii-output tab raw-input "
        "seq stream help version",
        long_args="indent from-file",
    ),
    "sha256sum": spec(
        "bctwz",
        long="binary check tag text ignore-missing quiet status strict warn zero help version",
    ),
    "od": spec(
        "bcdfilosxv",
        "AjNtSw",
        long="output-duplicates traditional help version",
        long_args="address-radix skip-bytes read-bytes format",
        long_optional="strings width",
    ),
    "seq": spec(
        "w", "fs", long="equal-width help version", long_args="format separator", numeric=True
    ),
    "sleep": spec(long=_ALL),
    "comm": spec(
        "123iz",
        long="check-order nocheck-order total zero-terminated help version",
        long_args="output-delimiter",
    ),
    "paste": spec("sz", "d", long="serial zero-terminated help version", long_args="delimiters"),
    "fold": spec("bs", "w", long="bytes spaces help version", long_args="width"),
    "expand": spec("i", "t", long="initial help version", long_args="tabs"),
    "rev": spec(long=_ALL),
    "tac": spec("br", "s", long="before regex help version", long_args="separator"),
    "which": spec("a", long=_ALL),
    "pwd": spec("LP"),
    "printenv": spec("0", long="null help version"),
    "type": spec("afptP"),
    "tree": spec(
        "adlfxiqNQpugshDFvtrUCnAS",
        "LPIHTo",
        "",
        long="noreport dirsfirst du help version prune",
        long_args="filelimit timefmt charset sort",
    ),
    "true": spec(),
    "false": spec(),
    ":": spec(),
}
for _name in ("sha1sum", "md5sum", "sha512sum", "sha224sum", "sha384sum", "b2sum"):
    READERS[_name] = READERS["sha256sum"]
for _name in ("egrep", "fgrep"):
    READERS[_name] = READERS["grep"]

OUTPUT_OPTIONS: dict[str, tuple[str, ...]] = {
    "sort": ("-o", "--output"),
    "tree": ("-o",),
}
"""Options of a reader that name a file it writes."""

RUNS_CODE = frozenset(
    {
        "python",
        "python3",
        "python2",
        "pypy",
        "pypy3",
        "pip",
        "pip3",
        "pipx",
        "uv",
        "uvx",
        "poetry",
        "pipenv",
        "pdm",
        "hatch",
        "pytest",
        "py.test",
        "tox",
        "nox",
        "ruff",
        "mypy",
        "black",
        "isort",
        "flake8",
        "pylint",
        "pyright",
        "coverage",
        "pre-commit",
        "make",
        "cmake",
        "ninja",
        "meson",
        "npm",
        "npx",
        "pnpm",
        "yarn",
        "node",
        "deno",
        "bun",
        "tsc",
        "eslint",
        "prettier",
        "jest",
        "vitest",
        "cargo",
        "rustc",
        "go",
        "gcc",
        "g++",
        "cc",
        "clang",
        "javac",
        "java",
        "mvn",
        "gradle",
        "ruby",
        "bundle",
        "rake",
        "perl",
        "php",
        "composer",
        "dotnet",
        "swift",
        "awk",
        "gawk",
        "mawk",
    }
)
"""Programs that run code from the repository (or code the agent writes): never read-only."""

_PYTHON_VERSIONED = re.compile(r"python[23](?:\.[0-9]+)?")

SAFE_ENV_NAMES = frozenset(
    {
        "LANG",
        "LANGUAGE",
        "TZ",
        "NO_COLOR",
        "FORCE_COLOR",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "COLUMNS",
        "LINES",
        "TERM",
    }
)
"""Variables a command line may set (``NAME=value cmd``, ``env NAME=value``); ``LC_*`` too.

Any other name is unclassified: many variables turn a reader into something that
runs a command, loads code or writes elsewhere (``PATH``, ``PYTHONPATH``,
``LD_PRELOAD``, ``GIT_*``, ``PAGER``, ``BASH_ENV``, ``IFS``, ``TMPDIR``, ``HOME``...).
"""
_SAFE_VALUE = re.compile(r"[A-Za-z0-9_.:/+@-]*")


def env_problem(name: str, value: Word) -> str | None:
    """Why setting ``name=value`` makes the command unclassified, else None."""
    if not (name in SAFE_ENV_NAMES or name.startswith("LC_")):
        return f"setting {name} may change what the command does"
    if value.text is None or value.glob or not _SAFE_VALUE.fullmatch(value.text):
        return f"the value of {name} is not a plain literal"
    return None


def classify_program(name: str) -> str:
    """``reader``, ``writer``, ``runs-code``, ``special`` or ``unknown`` for a program word."""
    if "/" in name:
        return "unknown"
    if name in SPECIAL:
        return "special"
    if name in WRITERS:
        return "writer"
    if name in READERS:
        return "reader"
    if name in RUNS_CODE or _PYTHON_VERSIONED.fullmatch(name):
        return "runs-code"
    return "unknown"


def _parsed(name: str, table: Spec, args: tuple[Word, ...], state: State) -> Parsed | None:
    result = parse_options(table, args)
    if isinstance(result, str):
        state.unclassified(f"{name}: {result}")
        return None
    return result


def reader_rule(name: str, args: tuple[Word, ...], state: State, _walker: Walker) -> None:
    parsed = _parsed(name, READERS[name], args, state)
    if parsed is None:
        return
    for value in parsed.values(*OUTPUT_OPTIONS.get(name, ())):
        state.write(value, sink_ok=True)


# -- writers --------------------------------------------------------------------------------

_CP = spec(
    "abdfHiLlnPpRrsTuvx",
    "St",
    long="archive attributes-only copy-contents dereference force interactive link "
    "no-dereference no-clobber one-file-system recursive remove-destination "
    "symbolic-link strip-trailing-slashes verbose no-target-directory debug "
    "help version",
    long_args="suffix target-directory no-preserve sparse",
    long_optional="backup update preserve reflink",
)
_MV = spec(
    "bfinTuv",
    "St",
    long="force interactive no-clobber strip-trailing-slashes verbose "
    "no-target-directory help version",
    long_args="suffix target-directory",
    long_optional="backup update",
)
_LN = spec(
    "bdfFinLPrsTv",
    "St",
    long="directory force interactive logical no-dereference "
    "physical relative symbolic no-target-directory verbose "
    "help version",
    long_args="suffix target-directory",
    long_optional="backup",
)
_RM = spec(
    "dfirRIv",
    long="force one-file-system no-preserve-root recursive dir verbose help version",
    long_optional="interactive preserve-root",
)
_RMDIR = spec("pv", long="ignore-fail-on-non-empty parents verbose help version")
_TOUCH = spec(
    "acfhm", "drt", long="no-create no-dereference help version", long_args="date reference time"
)
_MKDIR = spec(
    "pv", "m", long="parents verbose help version", long_args="mode", long_optional="context"
)
_TRUNCATE = spec("co", "sr", long="no-create io-blocks help version", long_args="reference size")
_CHMOD = spec(
    "cfvR",
    long="changes silent quiet verbose no-preserve-root preserve-root recursive help version",
    long_args="reference",
)
_CHOWN = spec(
    "cfvRhHLP",
    long="changes silent quiet verbose dereference no-dereference "
    "no-preserve-root preserve-root recursive help version",
    long_args="from reference",
)
_TEE = spec("aip", long="append ignore-interrupts help version", long_optional="output-error")
_SHRED = spec(
    "fuvxz",
    "ns",
    long="force exact verbose zero help version",
    long_args="iterations random-source size",
    long_optional="remove",
)
_SED = spec(
    "nEruszb",
    "efl",
    "i",
    long="quiet silent regexp-extended separate unbuffered null-data posix debug "
    "sandbox follow-symlinks binary help version",
    long_args="expression file line-length",
    long_optional="in-place",
)
_UNLINK = spec(long=_ALL)

_CHMOD_MODE = re.compile(r"-[rwxXst]+(?:,[-+=ugoa]*[rwxXst]*)*")


def _copy_like(name: str, parsed: Parsed, state: State, *, moves: bool, links: bool) -> None:
    if parsed.has("-T", "--no-target-directory"):
        state.unclassified(f"{name} -T merges a directory into the destination")
        return
    if parsed.has("-b", "--backup", "-S", "--suffix"):
        # The backup's name depends on VERSION_CONTROL, SIMPLE_BACKUP_SUFFIX and the
        # numbered backups already there: a file no operand names.
        state.unclassified(f"{name} --backup writes a file its operands do not name")
        return
    if (
        links
        and parsed.has("-n", "--no-dereference")
        and not parsed.has("-t", "--target-directory")
    ):
        # A link to a directory is replaced itself, not entered: whether the file
        # lands inside depends on what the destination is when the command runs.
        state.unclassified(f"{name} -n: the destination may be replaced or entered")
        return
    if parsed.glob_operands:
        state.unclassified(f"{name} with a glob: its sources are not known")
        return
    if any(
        posixpath.basename(path.rstrip("/")) in (".", "..") for path in parsed.operands[:-1]
    ) or (
        parsed.has("-t", "--target-directory")
        and any(posixpath.basename(p.rstrip("/")) in (".", "..") for p in parsed.operands)
    ):
        # 'cp -r dir/. dest' puts the files of dir into dest: names no operand spells.
        state.unclassified(f"{name} of a directory's contents ('dir/.') into another")
        return
    targets = parsed.values("-t", "--target-directory")
    operands = list(parsed.operands)
    if len(targets) > 1:
        state.unclassified(f"{name} with more than one target directory")
        return
    if targets:
        sources, destination = operands, targets[0]
    else:
        if len(operands) < 2 and not (links and len(operands) == 1):
            state.unclassified(f"{name} without a source and a destination")
            return
        if len(operands) == 1:
            sources, destination = operands, posixpath.basename(operands[0].rstrip("/"))
        else:
            sources, destination = operands[:-1], operands[-1]
    symbolic = parsed.has("-s", "--symbolic", "--symbolic-link")
    hard = (links and not symbolic) or parsed.has("-l", "--link")
    keeps_links = (
        links
        or moves
        or symbolic
        or parsed.has("-r", "-R", "-a", "-d", "-P", "--recursive", "--archive", "--no-dereference")
    )
    if moves or hard:
        # A hard link is a second name for the source's bytes, and a move removes it.
        for source in sources:
            state.write(source, relinks=True)
    for source in sources:
        state.into(destination, posixpath.basename(source.rstrip("/")))
    state.write(destination, relinks=keeps_links)


def _cp(name: str, args: tuple[Word, ...], state: State, _w: Walker) -> None:
    parsed = _parsed(name, _CP, args, state)
    if parsed is not None:
        # 'cp --parents' (it writes below the destination) is not in the table: unknown.
        _copy_like(name, parsed, state, moves=False, links=False)


def _mv(name: str, args: tuple[Word, ...], state: State, _w: Walker) -> None:
    parsed = _parsed(name, _MV, args, state)
    if parsed is not None:
        _copy_like(name, parsed, state, moves=True, links=False)


def _ln(name: str, args: tuple[Word, ...], state: State, _w: Walker) -> None:
    parsed = _parsed(name, _LN, args, state)
    if parsed is not None:
        _copy_like(name, parsed, state, moves=False, links=True)


def _operand_writer(table: Spec, **flags: bool) -> Rule:
    def rule(name: str, args: tuple[Word, ...], state: State, _w: Walker) -> None:
        parsed = _parsed(name, table, args, state)
        if parsed is None:
            return
        if not parsed.operands:
            state.unclassified(f"{name} without operands")
        for path in parsed.operands:
            state.write(path, **flags)
        if name == "rmdir" and parsed.has("-p", "--parents"):
            for path in parsed.operands:
                parent = posixpath.dirname(path.rstrip("/"))
                while parent not in ("", "/", "."):
                    state.write(parent, relinks=True)
                    parent = posixpath.dirname(parent)

    return rule


def _mkdir(name: str, args: tuple[Word, ...], state: State, _w: Walker) -> None:
    parsed = _parsed(name, _MKDIR, args, state)
    if parsed is None:
        return
    if not parsed.operands:
        state.unclassified("mkdir without operands")
    for path in parsed.operands:
        state.write(path, directory=True, keeps_contents=True)


def _touch(name: str, args: tuple[Word, ...], state: State, _w: Walker) -> None:
    parsed = _parsed(name, _TOUCH, args, state)
    if parsed is None:
        return
    if not parsed.operands:
        state.unclassified("touch without operands")
    for path in parsed.operands:
        state.write(path, keeps_contents=True)


def _mode(table: Spec) -> Rule:
    def rule(name: str, args: tuple[Word, ...], state: State, _w: Walker) -> None:
        words = list(args)
        mode_first: str | None = None
        if name == "chmod":
            # 'chmod -x file': GNU chmod reads a '-rwx' word as the mode, among its options
            # only: after '--' ('chmod +x -- -r') every word is an operand.
            for index, word in enumerate(words):
                if word.text == "--":
                    break
                if word.text is not None and _CHMOD_MODE.fullmatch(word.text):
                    mode_first = word.text
                    del words[index]
                    break
        parsed = _parsed(name, table, tuple(words), state)
        if parsed is None:
            return
        if parsed.has("-R", "--recursive") and parsed.has("-H", "-L"):
            # The walk follows links into other directories: files no operand names.
            state.unclassified(f"{name} -R with -H or -L follows links out of its operands")
            return
        operands = list(parsed.operands)
        if mode_first is None and not parsed.has("--reference"):
            operands = operands[1:]
        if not operands:
            state.unclassified(f"{name} without files")
        for path in operands:
            state.write(path)

    return rule


def _tee(name: str, args: tuple[Word, ...], state: State, _w: Walker) -> None:
    parsed = _parsed(name, _TEE, args, state)
    if parsed is None:
        return
    for path in parsed.operands:
        state.write(path, sink_ok=True)


def _uniq(name: str, args: tuple[Word, ...], state: State, _w: Walker) -> None:
    parsed = _parsed(name, READERS["uniq"], args, state)
    if parsed is None:
        return
    if len(parsed.operands) > 2:
        state.unclassified("uniq with more than two operands")
    if len(parsed.operands) == 2:
        state.write(parsed.operands[1], sink_ok=True)


_DD_KEYS = frozenset(
    {
        "if",
        "of",
        "bs",
        "ibs",
        "obs",
        "cbs",
        "count",
        "skip",
        "seek",
        "conv",
        "status",
        "iflag",
        "oflag",
        "iseek",
        "oseek",
    }
)


def _dd(_name: str, args: tuple[Word, ...], state: State, _w: Walker) -> None:
    for word in args:
        if word.text is None or word.glob:
            state.unclassified("dd: an operand is not literal")
            return
        key, eq, value = word.text.partition("=")
        if not eq or key not in _DD_KEYS:
            state.unclassified(f"dd: unknown operand {word.text!r}")
            return
        if key == "of":
            state.write(value, sink_ok=True)


def _sed(name: str, args: tuple[Word, ...], state: State, _w: Walker) -> None:
    parsed = _parsed(name, _SED, args, state)
    if parsed is None:
        return
    if parsed.has("-f", "--file"):
        state.unclassified("sed -f: the script is not on the command line")
        return
    scripts = parsed.values("-e", "--expression")
    files = list(parsed.operands)
    if not scripts:
        if not files:
            state.unclassified("sed without a script")
            return
        scripts, files = [files[0]], files[1:]
    for script in scripts:
        result = scan_sed(script)
        if result.problem:
            state.unclassified(f"sed: {result.problem}")
            return
    in_place = [v for n, v in parsed.options if n in ("-i", "--in-place")]
    if not in_place:
        return
    if not files:
        state.unclassified("sed -i without files")
        return
    if parsed.glob_operands:
        state.unclassified("sed -i with a glob: its files are not known")
        return
    suffixes = [s for s in in_place if s]
    for path in files:
        state.write(path)
        for suffix in suffixes:
            if "/" in suffix or "*" in suffix:
                state.unclassified("sed -i with a backup name that is not a plain suffix")
                return
            state.write(path + suffix)


# -- special programs -----------------------------------------------------------------------


def _echo(_name: str, args: tuple[Word, ...], state: State, _w: Walker) -> None:
    for word in args:
        if word.text is None:
            state.unclassified(f"echo: a word is not literal: {word.problem}")
            return
        if word.glob and word.text[:1] in ("-", "*", "?", "["):
            state.unclassified(f"echo: the glob {word.text!r} may expand to an option")
            return


def _printf(name: str, args: tuple[Word, ...], state: State, walker: Walker) -> None:
    if args and args[0].text is not None and args[0].text.startswith("-") and args[0].text != "--":
        state.unclassified("printf with an option (-v assigns a variable)")
        return
    _echo(name, args, state, walker)


_TEST_UNARY = frozenset(
    [
        "-e",
        "-f",
        "-d",
        "-r",
        "-w",
        "-x",
        "-s",
        "-L",
        "-h",
        "-b",
        "-c",
        "-p",
        "-S",
        "-g",
        "-u",
        "-k",
        "-O",
        "-G",
        "-N",
        "-t",
        "-n",
        "-z",
        "-a",
    ]
)
_TEST_BINARY = frozenset(["=", "==", "!=", "-nt", "-ot", "-ef", "<", ">"])
_TEST_NUMERIC = frozenset(["-eq", "-ne", "-lt", "-le", "-gt", "-ge"])
_TEST_JOIN = frozenset({"-o"})
"""The joining operator that begins with '-' ('!', '(' and ')' are never taken for options)."""


def _test(name: str, args: tuple[Word, ...], state: State, _w: Walker) -> None:
    texts: list[str] = []
    for word in args:
        if word.text is None or word.glob:
            state.unclassified(f"{name}: a word is not literal")
            return
        texts.append(word.text)
    if name == "[":
        if not texts or texts[-1] != "]":
            state.unclassified("[ without a closing ]")
            return
        texts = texts[:-1]
    for index, text in enumerate(texts):
        if text in _TEST_NUMERIC:
            around = texts[index - 1 : index] + texts[index + 1 : index + 2]
            if len(around) != 2 or not all(re.fullmatch(r"-?[0-9]+", t) for t in around):
                state.unclassified(f"{name} {text} with an operand that is not a number")
                return
        elif (
            text.startswith("-")
            and len(text) > 1
            and text not in (_TEST_UNARY | _TEST_BINARY | _TEST_JOIN)
            and not re.fullmatch(r"-?[0-9]+", text)
        ):
            # An operand may begin with '-' only as a value after an operator.
            previous = texts[index - 1] if index else ""
            if previous not in (_TEST_UNARY | _TEST_BINARY):
                state.unclassified(f"{name}: unknown operator {text!r}")
                return


def _climbs_after_a_name(path: str) -> bool:
    """True when a ``..`` follows a named component (``a/..``, ``src/link/../x``).

    ``cd`` (``-L``, the default) removes ``name/..`` as text, while the system
    resolves it through ``name`` when it is a link: two places, so the directory
    is unknown. Leading ``..`` parts climb from the tool's own directory.
    """
    named = False
    for part in path.split("/"):
        if part == "..":
            if named:
                return True
        elif part not in ("", "."):
            named = True
    return False


def _cd(_name: str, args: tuple[Word, ...], state: State, _w: Walker) -> None:
    state.moved = True
    modes = [w.text for w in args if w.text in ("-L", "-P")]
    physical = bool(modes) and modes[-1] == "-P"
    words = [w for w in args if w.text not in ("-L", "-P", "--")]
    if len(words) > 1:
        state.unclassified("cd with more than one operand")
        return
    if not words:
        state.cwd = None  # 'cd' alone goes home
        return
    target = words[0]
    if (
        target.text is None
        or target.glob
        # 'cd -' is the previous directory; zsh: 'cd +N' is the directory stack
        or target.text.startswith(("~", "-", "+"))
    ):
        state.cwd = None
        return
    if (
        state.cdpath
        and not target.text.startswith("/")
        and target.text.split("/", 1)[0] not in (".", "..")
    ):
        # With CDPATH set the shell searches its directories first: 'cd src' may
        # enter '$CDPATH/src', wherever that is (a '.', '..' or '/' start is exempt).
        state.cwd = None
        return
    before = state.cwd
    if target.text.startswith("/"):
        state.cwd = target.text
    elif state.cwd is not None:
        state.cwd = posixpath.join(state.cwd, target.text) if state.cwd else target.text
    if state.cwd is None or not _climbs_after_a_name(state.cwd):
        return
    only_up = all(part in ("..", ".", "") for part in target.text.split("/"))
    if only_up and not physical and before is not None and not target.text.startswith("/"):
        # 'cd src && cd ..': bash (-L) climbs the directory it came through, as text:
        # an ancestor of a directory it is in, so it exists and no link is followed.
        state.cwd = posixpath.normpath(state.cwd)
        if state.cwd == ".":
            state.cwd = ""
        return
    state.cwd = None


def _command(_name: str, args: tuple[Word, ...], state: State, walker: Walker) -> None:
    rest = list(args)
    while rest and rest[0].text in ("-p", "-v", "-V", "--"):
        option = rest.pop(0).text
        if option in ("-v", "-V"):
            if all(w.text is not None and not w.glob for w in rest):
                return  # 'command -v NAME' only looks names up
            state.unclassified("command -v with a word that is not literal")
            return
        if option == "--":
            break
    if not rest:
        return
    walker.simple(tuple(rest), state)


_ENV = spec(
    "i0", "u", long="ignore-environment null help version", long_args="unset", permute=False
)
_TIMEOUT = spec(
    "v",
    "sk",
    long="preserve-status foreground verbose help version",
    long_args="signal kill-after",
    permute=False,
)
_NICE = spec("", "n", long="help version", long_args="adjustment", permute=False)
_STDBUF = spec("", "ioe", long="help version", long_args="input output error", permute=False)
_NOHUP = spec(long=_ALL, permute=False)


def _nohup(name: str, args: tuple[Word, ...], state: State, walker: Walker) -> None:
    """``nohup CMD``: on a terminal (a host may run commands in one) its output goes to
    ``nohup.out`` in the current directory, or to ``$HOME/nohup.out`` when that one cannot
    be created: files no word names, both judged."""
    state.write("nohup.out")
    state.write("~/nohup.out")
    _wrapper(_NOHUP)(name, args, state, walker)


def _wrapper(table: Spec, skip_operands: int = 0) -> Rule:
    def rule(name: str, args: tuple[Word, ...], state: State, walker: Walker) -> None:
        words = list(args)
        # Options stop at the first operand (the command); find it without parsing it.
        parsed = parse_options(table, words)
        if isinstance(parsed, str):
            state.unclassified(f"{name}: {parsed}")
            return
        start = len(words) - len(parsed.operands)
        command = words[start:]
        if name == "env":
            while (
                command
                and command[0].text is not None
                and "=" in command[0].text
                and (not command[0].text.startswith("="))
            ):
                assignment = command.pop(0).text or ""
                key, _eq, value = assignment.partition("=")
                problem = env_problem(key, Word(value))
                if problem is not None:
                    state.unclassified(problem)
                    return
        command = command[skip_operands:]
        if not command:
            if name == "env":
                return  # prints the environment
            state.unclassified(f"{name} without a command")
            return
        walker.child(tuple(command), state)

    return rule


SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh"})
_SHELL_FLAGS = frozenset("elux")


def _flag_cluster(text: str, allowed: frozenset[str]) -> bool:
    return len(text) > 1 and text[0] == "-" and text[1] != "-" and set(text[1:]) <= allowed


def _shell(name: str, args: tuple[Word, ...], state: State, walker: Walker) -> None:
    """``sh -c SCRIPT`` (flags from ``-elux`` allowed): the script is judged as a command."""
    texts = [w.text for w in args]
    for index, text in enumerate(texts):
        if text is None:
            state.unclassified(f"{name}: a word is not literal")
            return
        if _flag_cluster(text, _SHELL_FLAGS | {"c"}) and "c" in text:
            if index + 2 != len(texts) or texts[index + 1] is None:
                state.unclassified(
                    f"{name} -c without exactly one literal script "
                    "(positional parameters are not followed)"
                )
                return
            if not all(t is not None and _flag_cluster(t, _SHELL_FLAGS) for t in texts[:index]):
                state.unclassified(f"{name}: options the classifier does not know")
                return
            walker.script(texts[index + 1] or "", state)
            return
    state.runs(f"{name} runs a script file or stdin")


def _runs_text(name: str, _args: tuple[Word, ...], state: State, _w: Walker) -> None:
    state.unclassified(f"{name} runs text that cannot be read statically")


PLANGATE_READ_ONLY: dict[tuple[str, ...], tuple[frozenset[str], frozenset[str]]] = {
    ("status",): (frozenset({"--json"}), frozenset()),
    ("c3", "verify"): (frozenset({"--json"}), frozenset({"--expected-sha"})),
    ("ledger", "verify"): (frozenset({"--json"}), frozenset()),
    ("ledger", "log"): (frozenset({"--json"}), frozenset({"--kind", "--subject"})),
    ("plan", "lint"): (frozenset({"--json", "--all"}), frozenset()),
    ("surfaces",): (frozenset({"--json", "--template"}), frozenset()),
    ("trust", "show"): (frozenset({"--json"}), frozenset()),
    ("task", "show"): (frozenset({"--json"}), frozenset()),
}
"""``plangate`` subcommands that only read, with their flags and their options taking a
value. Any other subcommand, option or word is PlanGate changing state: it runs as
project code (allowed only inside an isolated run or a host sandbox)."""
_PLANGATE_ALONE = frozenset({"--help", "-h", "--version"})


def _plangate_read_only(args: tuple[Word, ...]) -> bool:
    """True when ``plangate ARGS`` is a read-only subcommand with only its known options."""
    words = [w.text for w in args]
    if any(w is None for w in words) or any(w.glob for w in args):
        return False
    texts = [w for w in words if w is not None]
    if len(texts) == 1 and texts[0] in _PLANGATE_ALONE:
        return True
    for command, (flags, valued) in PLANGATE_READ_ONLY.items():
        if tuple(texts[: len(command)]) != command:
            continue
        rest = texts[len(command) :]
        index = 0
        while index < len(rest):
            word = rest[index]
            name = word.split("=", 1)[0]
            if word in flags or word in ("--help", "-h"):
                index += 1
            elif name in valued:
                index += 1 if "=" in word else 2
            elif word.startswith("-"):
                return False
            else:
                index += 1  # an operand: a task id or a path, only read
        return index == len(rest)
    return False


def _plangate(name: str, args: tuple[Word, ...], state: State, _w: Walker) -> None:
    if not _plangate_read_only(args):
        state.runs(f"{name} changes PlanGate's state (only its read-only subcommands are readers)")


SPECIAL: dict[str, Rule] = {
    "echo": _echo,
    "printf": _printf,
    "test": _test,
    "[": _test,
    "cd": _cd,
    "command": _command,
    "env": _wrapper(_ENV),
    "timeout": _wrapper(_TIMEOUT, skip_operands=1),
    "nice": _wrapper(_NICE),
    "stdbuf": _wrapper(_STDBUF),
    "nohup": _nohup,
    "uniq": _uniq,
    "dd": _dd,
    "plangate": _plangate,
    **dict.fromkeys(SHELLS, _shell),
    **dict.fromkeys(
        (
            "eval",
            "source",
            ".",
            "exec",
            "xargs",
            "parallel",
            "watch",
            "sudo",
            "doas",
            "su",
            "time",
            "trap",
            "alias",
            "builtin",
            "enable",
            "hash",
            "export",
            "declare",
            "typeset",
            "local",
            "readonly",
            "set",
            "shopt",
            "unset",
            "let",
            "read",
            "mapfile",
            "readarray",
            "pushd",
            "popd",
        ),
        _runs_text,
    ),
}
"""Programs and builtins with a rule of their own."""

WRITERS: dict[str, Rule] = {
    "cp": _cp,
    "mv": _mv,
    "ln": _ln,
    "rm": _operand_writer(_RM, relinks=True),
    "rmdir": _operand_writer(_RMDIR, relinks=True),
    "unlink": _operand_writer(_UNLINK, relinks=True),
    "shred": _operand_writer(_SHRED),
    "truncate": _operand_writer(_TRUNCATE),
    "touch": _touch,
    "mkdir": _mkdir,
    "chmod": _mode(_CHMOD),
    "chown": _mode(_CHOWN),
    "chgrp": _mode(_CHOWN),
    "tee": _tee,
    "sed": _sed,
}
"""Programs that write the files their operands name."""
