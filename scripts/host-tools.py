#!/usr/bin/env python3
"""Print each pinned host's tool list, as the host itself reports it to its model.

Runs one scripted session per host (the pinned versions from
src/plangate/resources/pinned-hosts.toml, installed by scripts/install-hosts.sh) in a
throwaway home and repository, against the journey tests' loopback model, and prints:

- claude: the tools of Claude Code's first model request (its hooks receive these names);
- codex: each function or freeform tool Codex offers and the tool_name its PreToolUse
  hook receives for it (every tool is called once under a recording hook that denies,
  so nothing runs; "-" when the call never reaches a hook), once for a model name
  Codex does not know (its fallback tools) and once for one it knows (codex-known).

Each name is marked with PlanGate's classification (plangate.hooks.hosts.tools) or
UNCLASSIFIED. Exit 0 when every name is classified, 1 when one is not, 2 when the
hosts are not installed. Use it when bumping a pin (docs/journeys.md).

usage: scripts/host-tools.py [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from plangate.hooks.hosts.tools import CLAUDE_TOOLS, CODEX_TOOLS, Tool, is_mcp_tool
from support.journey import (
    CODEX_FALLBACK_MODEL,
    CODEX_KNOWN_MODEL,
    Journey,
    codex_hook_names,
    find_hosts_bin,
    offered_tools,
    read_pins,
)


def _kind(name: str | None, vocabulary: dict[str, Tool]) -> str:
    if name is None:
        return "-"
    if name in vocabulary:
        return str(vocabulary[name].kind)
    return "mcp" if is_mcp_tool(name) else "UNCLASSIFIED"


def main() -> int:
    """Probe both pinned hosts and print their tools with PlanGate's classification."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    hosts_bin, missing = find_hosts_bin(dict(os.environ))
    if hosts_bin is None:
        print(f"host-tools: {missing}", file=sys.stderr)
        return 2
    pins = read_pins()
    with tempfile.TemporaryDirectory(prefix="plangate-host-tools.") as tmp:
        claude = Journey(Path(tmp) / "claude", hosts_bin)
        claude.create_repo()
        claude_rows = [(n, n, _kind(n, CLAUDE_TOOLS)) for n in offered_tools(claude, "claude")]
        report = {"claude": {"version": pins["claude"]["version"], "tools": claude_rows}}
        for label, model in (("codex", CODEX_FALLBACK_MODEL), ("codex-known", CODEX_KNOWN_MODEL)):
            codex = Journey(Path(tmp) / label, hosts_bin)
            codex.create_repo()
            rows = [
                (offered, hook, _kind(hook, CODEX_TOOLS))
                for offered, hook in sorted(codex_hook_names(codex, model).items())
            ]
            report[label] = {"version": pins["codex"]["version"], "model": model, "tools": rows}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for host, entry in report.items():
            model = f" (model {entry['model']})" if "model" in entry else ""
            print(f"{host} {entry['version']}{model}: offered -> hook tool_name: PlanGate kind")
            for offered, hook, kind in entry["tools"]:
                print(f"  {offered:32} -> {hook or '-':32} {kind}")
    unclassified = any(kind == "UNCLASSIFIED" for e in report.values() for *_, kind in e["tools"])
    return 1 if unclassified else 0


if __name__ == "__main__":
    sys.exit(main())
