"""Shared output helpers: one JSON form and one human form for every Result."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from plangate.cli.context import Context
from plangate.verdict import Result


def print_json(ctx: Context, value: Mapping[str, Any]) -> None:
    """Print one JSON object (sorted keys, indent 2)."""
    ctx.out(json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False))


def print_result(ctx: Context, result: Result, *, as_json: bool, title: str = "") -> int:
    """Print ``result`` as JSON or as readable lines; return its exit code."""
    if as_json:
        print_json(ctx, result.to_json())
    else:
        head = f"{title}: {result.verdict}" if title else result.verdict
        ctx.out(head)
        for reason in result.reasons:
            ctx.out(f"  - {reason.code}: {reason.message}")
            if reason.hint:
                ctx.out(f"    hint: {reason.hint}")
    return int(result.exit_code)
