"""PlanGate beside the pre-commit framework: its entry in ``.pre-commit-config.yaml``, the
edit ``plangate setup`` makes, and the state ``plangate doctor`` reports.

A repository whose git hooks belong to the framework (https://pre-commit.com) keeps
them: PlanGate runs as two hooks of the framework's own chain, next to the team's
(ruff, ...), from a ``repo: local`` entry with ``language: system`` that calls the
installed ``plangate`` (no ``rev:`` to pin: the version is the one each developer
installed, the one the agent hooks run too)::

    - repo: local
      hooks:
        - id: plangate-pre-commit
          entry: plangate hook git-pre-commit
          language: system
          ...
          stages: [pre-commit]
        - id: plangate-pre-push
          entry: plangate hook git-pre-push
          ...
          stages: [pre-push]

Setup appends that entry as text (the team's comments and layout stay) and keeps the
edit only when the result, read back, is the old configuration with exactly this
entry added to ``repos``; otherwise it refuses before writing anything
(``SETUP_PRE_COMMIT_CONFIG_UNEDITABLE``) and shows the entry to add by hand.

``SKIP=plangate-pre-commit`` (the framework's per-commit switch) skips PlanGate's
check like ``--no-verify`` does: the framework prints it as ``Skipped``; doctor fails
while ``SKIP`` in its environment names a PlanGate hook (a shell that exports it skips
every commit's check); CI judges the pull request regardless.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plangate.errors import InputRejected
from plangate.records import NamedTuple

if TYPE_CHECKING:
    from plangate.hooks.doctor_settings import Finding

CONFIG_RELPATH = ".pre-commit-config.yaml"
MAX_CONFIG_BYTES = 1024 * 1024
STAGES = ("pre-commit", "pre-push")
HOOK_IDS = {"pre-commit": "plangate-pre-commit", "pre-push": "plangate-pre-push"}
ENTRIES = {"pre-commit": "plangate hook git-pre-commit", "pre-push": "plangate hook git-pre-push"}
NAMES = {
    "pre-commit": "PlanGate (staged changes against the active task and protected surfaces)",
    "pre-push": "PlanGate (pushed range against the active task and protected surfaces)",
}
INSTALL_COMMAND = "pre-commit install --hook-type pre-commit --hook-type pre-push"
_LEGACY_STAGES = {"commit": "pre-commit", "push": "pre-push"}
_ALL_STAGES = ("pre-commit", "pre-push", "pre-merge-commit", "commit-msg", "manual")


def local_entry(indent: str = "  ") -> str:
    """The ``repo: local`` item of ``repos`` that runs PlanGate, at list indent ``indent``."""
    lines = [f"{indent}- repo: local", f"{indent}  hooks:"]
    for stage in STAGES:
        lines += [
            f"{indent}    - id: {HOOK_IDS[stage]}",
            f"{indent}      name: {NAMES[stage]}",
            f"{indent}      entry: {ENTRIES[stage]}",
            f"{indent}      language: system",
            f"{indent}      pass_filenames: false",
            f"{indent}      always_run: true",
            f"{indent}      require_serial: true",
            f"{indent}      stages: [{stage}]",
        ]
    return "\n".join(lines) + "\n"


def _entry_value() -> dict[str, Any]:
    return {
        "repo": "local",
        "hooks": [
            {
                "id": HOOK_IDS[stage],
                "name": NAMES[stage],
                "entry": ENTRIES[stage],
                "language": "system",
                "pass_filenames": False,
                "always_run": True,
                "require_serial": True,
                "stages": [stage],
            }
            for stage in STAGES
        ],
    }


class FrameworkConfig(NamedTuple):
    """What ``.pre-commit-config.yaml`` says about PlanGate.

    ``stages`` maps each git stage to the command the framework runs for PlanGate
    there (absent: PlanGate does not run at that stage). ``problem`` is set when the
    file cannot be read as a framework configuration.
    """

    present: bool
    stages: dict[str, str]
    problem: str | None = None
    data: Any = None


def _hook_stages(hook: dict[str, Any], default: Any) -> set[str]:
    listed = hook.get("stages", default)
    if not isinstance(listed, list):
        return set(_ALL_STAGES)
    return {_LEGACY_STAGES.get(str(s), str(s)) for s in listed}


def judge_config(data: bytes) -> FrameworkConfig:
    """Read a framework configuration's bytes: where PlanGate runs (pure)."""
    import yaml

    try:
        value = yaml.safe_load(data.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        return FrameworkConfig(True, {}, f"{CONFIG_RELPATH} is not valid YAML: "
                                         f"{str(exc).splitlines()[0]}")
    if not isinstance(value, dict) or not isinstance(value.get("repos"), list):
        return FrameworkConfig(True, {}, f"{CONFIG_RELPATH} has no list 'repos'", value)
    default = value.get("default_stages")
    stages: dict[str, str] = {}
    for repo in value["repos"]:
        if not isinstance(repo, dict) or not isinstance(repo.get("hooks"), list):
            continue
        for hook in repo["hooks"]:
            if not isinstance(hook, dict):
                continue
            for stage in STAGES:
                entry = hook.get("entry")
                if repo.get("repo") == "local":
                    runs = isinstance(entry, str) and entry.split()[-1:] == [
                        ENTRIES[stage].split()[-1]
                    ] and "plangate" in entry
                else:
                    runs = hook.get("id") == HOOK_IDS[stage]
                    entry = entry if isinstance(entry, str) else ENTRIES[stage]
                if runs and stage in _hook_stages(hook, default) and isinstance(entry, str):
                    stages.setdefault(stage, entry)
    return FrameworkConfig(True, stages, None, value)


def read_config(root: Path) -> FrameworkConfig:
    """The framework configuration of the repository at ``root`` (``present`` False: none)."""
    from plangate.fsutil import FileState, read_below

    read = read_below(root, CONFIG_RELPATH, MAX_CONFIG_BYTES)
    if read.state is FileState.MISSING:
        return FrameworkConfig(False, {})
    if not read.ok or read.data is None:
        return FrameworkConfig(True, {}, f"{CONFIG_RELPATH} {read.detail}")
    return judge_config(read.data)


def _uneditable(why: str) -> InputRejected:
    return InputRejected(
        "SETUP_PRE_COMMIT_CONFIG_UNEDITABLE",
        f"{CONFIG_RELPATH}: {why}; nothing was written",
        f"add this item to 'repos' in {CONFIG_RELPATH} yourself, then run setup again:\n"
        + local_entry(),
    )


def planned_config(data: bytes) -> bytes | None:
    """The configuration with PlanGate's entry appended (None: PlanGate already runs at both
    stages). Refuses (``SETUP_PRE_COMMIT_CONFIG_UNEDITABLE``) unless the result reads back as
    the old configuration plus exactly that entry."""
    import yaml

    before = judge_config(data)
    if before.problem is not None:
        raise _uneditable(before.problem)
    if all(stage in before.stages for stage in STAGES):
        return None
    if before.stages:
        raise _uneditable(
            "PlanGate runs there at " + ", ".join(sorted(before.stages)) + " only"
        )
    text = data.decode("utf-8")
    item = re.search(r"^([ \t]*)- +repo:", text, re.MULTILINE)
    indent = item.group(1) if item else "  "
    if "\t" in indent:
        raise _uneditable("its list of repos is indented with tabs")
    joined = text if text.endswith("\n") or not text else text + "\n"
    after = (joined + local_entry(indent)).encode("utf-8")
    expected = dict(before.data)
    expected["repos"] = [*before.data["repos"], _entry_value()]
    try:
        read_back = yaml.safe_load(after.decode("utf-8"))
    except yaml.YAMLError:
        read_back = None
    if read_back != expected:
        raise _uneditable("'repos' is not the last block of the file, so an entry appended "
                          "at its end would not land in it")
    return after


def framework_hooks(hooks_dir: Path) -> dict[str, bool]:
    """Which git stages run the framework (its hook script in git's hooks directory)."""
    from plangate.fsutil import read_regular_file
    from plangate.hooks.install import PRE_COMMIT_FRAMEWORK_MARKS

    out: dict[str, bool] = {}
    for stage in STAGES:
        read = read_regular_file(hooks_dir / stage, 256 * 1024)
        content = read.data.decode("utf-8", "replace") if read.ok and read.data else ""
        out[stage] = any(mark in content for mark in PRE_COMMIT_FRAMEWORK_MARKS)
    return out


def skipped_by_env(env: Mapping[str, str]) -> list[str]:
    """PlanGate's hook ids that the framework's ``SKIP`` variable names."""
    listed = {part.strip() for part in env.get("SKIP", "").split(",")}
    return [HOOK_IDS[stage] for stage in STAGES if HOOK_IDS[stage] in listed]


def framework_findings(
    root: Path, config: FrameworkConfig, env: Mapping[str, str]
) -> list[Finding]:
    """What keeps the framework from running PlanGate here (each one fails doctor): a
    configuration that cannot be read, a git stage that runs the framework without
    PlanGate, a stage where PlanGate is configured but the framework is not installed,
    and ``SKIP`` naming a PlanGate hook."""
    from plangate.hooks.doctor_settings import Finding
    from plangate.hooks.install import git_hooks_dir

    installed = framework_hooks(git_hooks_dir(root))
    if not config.present and not any(installed.values()):
        return []
    out: list[Finding] = []
    if config.problem is not None:
        return [Finding("pre-commit", "DOCTOR_PRE_COMMIT_CONFIG_INVALID", config.problem,
                        f"fix {CONFIG_RELPATH}: the framework runs no hook while it is broken",
                        True)]
    for stage in STAGES:
        if installed[stage] and stage not in config.stages:
            where = "has no configuration" if not config.present else (
                f"configuration does not run {HOOK_IDS[stage]} at {stage}")
            out.append(Finding(
                "pre-commit", "DOCTOR_PRE_COMMIT_WITHOUT_PLANGATE",
                f"git's {stage} hook is the pre-commit framework's, whose {where}: "
                "PlanGate does not check this stage",
                "run 'plangate setup --git' (it adds PlanGate's 'repo: local' entry), or "
                f"add it to {CONFIG_RELPATH} yourself (docs/agents.md)", True))
        elif stage in config.stages and not installed[stage] and not _plangate_own(root, stage):
            out.append(Finding(
                "pre-commit", "DOCTOR_PRE_COMMIT_NOT_INSTALLED",
                f"{CONFIG_RELPATH} runs PlanGate at {stage}, but git's {stage} hook is not "
                "the framework's: git runs neither the team's hooks nor PlanGate's there",
                f"run '{INSTALL_COMMAND}'", True))
    skipped = skipped_by_env(env)
    if skipped:
        out.append(Finding(
            "pre-commit", "DOCTOR_PRE_COMMIT_SKIPPED",
            f"SKIP={env.get('SKIP', '')} in this environment makes the framework skip "
            f"{', '.join(skipped)} on every commit or push from it",
            "unset SKIP (name only the team's own hooks in it, one command at a time); "
            "CI still judges the pull request", True))
    return out


def _plangate_own(root: Path, stage: str) -> bool:
    from plangate.fsutil import read_regular_file
    from plangate.hooks.install import MARKER, git_hooks_dir

    read = read_regular_file(git_hooks_dir(root) / stage, 256 * 1024)
    return bool(read.ok and read.data and MARKER.encode() in read.data)
