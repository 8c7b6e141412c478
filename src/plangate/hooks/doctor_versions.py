"""Doctor's version check: the installed hosts against the versions PlanGate was checked with.

Each host's tool vocabulary (:mod:`plangate.hooks.hosts.tools`) was read from the
version pinned in ``resources/pinned-hosts.toml``. A newer host may offer tools that
are on no list: PlanGate denies them as unknown (``HOOK_TOOL_UNKNOWN``) until a
PlanGate release knows them or ``.plangate/tools.toml`` declares an MCP tool
read-only. For every host in the table with a version program on ``PATH``
(``claude --version``, ``codex --version``), doctor compares:

- newer than pinned: ``DOCTOR_HOST_NEWER`` (a warning) says so and what it means;
- a version that cannot be read: ``DOCTOR_HOST_VERSION_UNKNOWN`` (a warning).

The comparison (:func:`version_finding`) is pure; :func:`version_findings` runs the
programs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from plangate.hooks.doctor_settings import Finding

PIN_RESOURCE = ("resources", "pinned-hosts.toml")
VERSION_RE = re.compile(r"(?<![\d.])(\d+(?:\.\d+){1,3})(?![\d.])")
TIMEOUT_SECONDS = 20


def pinned_versions(text: str) -> dict[str, dict[str, str]]:
    """``{host: {"package": ..., "version": ...}}`` from the pin file's text."""
    import tomllib

    document: dict[str, Any] = tomllib.loads(text)
    out: dict[str, dict[str, str]] = {}
    for host, entry in document.items():
        if isinstance(entry, dict) and isinstance(entry.get("version"), str):
            out[host] = {"package": str(entry.get("package", "")), "version": entry["version"]}
    return out


def _numbers(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def version_finding(host: str, program: str, pinned: Mapping[str, str],
                    output: str) -> Finding | None:
    """The finding for ``program --version`` printing ``output``, or None when it is
    the pinned version or older."""
    match = VERSION_RE.search(output)
    if match is None:
        return Finding(
            "versions", "DOCTOR_HOST_VERSION_UNKNOWN",
            f"'{program} --version' printed no version ({output.strip()[:80]!r}); PlanGate's "
            f"{host} vocabulary was checked against {pinned['version']}",
            "run the host's version command yourself; tools PlanGate does not know are "
            "denied as unknown (HOOK_TOOL_UNKNOWN)", False)
    installed = match.group(1)
    if _numbers(installed) <= _numbers(pinned["version"]):
        return None
    package = pinned.get("package") or program
    return Finding(
        "versions", "DOCTOR_HOST_NEWER",
        f"{program} {installed} is newer than {pinned['version']}, the {package} version "
        f"PlanGate's {host} hook vocabulary was checked against: tools it added since are "
        "unknown to PlanGate and denied (HOOK_TOOL_UNKNOWN), and renamed payload fields "
        "are denied as unreadable",
        f"use {package}@{pinned['version']}, or a PlanGate release that names {installed}; "
        "an MCP tool can be declared read-only in .plangate/tools.toml", False)


def _read_pins() -> dict[str, dict[str, str]]:
    from importlib import resources

    text = resources.files("plangate").joinpath(*PIN_RESOURCE).read_text("utf-8")
    return pinned_versions(text)


def version_findings(env: Mapping[str, str] | None = None) -> list[Finding]:
    """Findings for every host whose version program is on ``PATH`` (hooks installed or
    not: the host may be started in this repository either way)."""
    import os
    import shutil
    import subprocess

    from plangate.hooks.hosts.table import HOSTS

    environ = dict(os.environ) if env is None else dict(env)
    pins = _read_pins()
    out: list[Finding] = []
    for name, host in HOSTS.items():
        if not host.version_program or name not in pins:
            continue
        program = shutil.which(host.version_program, path=environ.get("PATH", os.defpath))
        if program is None:
            continue
        try:
            proc = subprocess.run([program, "--version"], capture_output=True, env=environ,
                                  timeout=TIMEOUT_SECONDS, check=False)
            output = proc.stdout.decode("utf-8", "replace") or proc.stderr.decode(
                "utf-8", "replace")
        except (OSError, subprocess.TimeoutExpired) as exc:
            output = f"({type(exc).__name__})"
        finding = version_finding(name, host.version_program, pins[name], output)
        if finding is not None:
            out.append(finding)
    return out
