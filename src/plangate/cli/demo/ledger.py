"""Demo steps: the tamper-evident decision ledger.

Shows that the decisions the earlier steps wrote are in the ledger, that the
chain verifies, that an export verifies on its own, and that an edit made
behind the ledger's back is caught with the first bad sequence number.
"""

from __future__ import annotations

import json

from plangate.cli.demo import Demo


def run_steps(demo: Demo) -> None:
    """ledger verify -> ledger log -> export + verify the copy -> a tampered copy fails."""
    demo.step("plangate ledger verify: every decision so far is in one hash chain")
    code, out, err = demo.cli("ledger", "verify")
    demo.show(out.rstrip() or err.rstrip())
    demo.expect(code, 0, "ledger intact")

    demo.step("plangate ledger log: the decisions the earlier steps recorded")
    code, out, err = demo.cli("ledger", "log", "--json")
    demo.expect(code, 0, "log read")
    entries = json.loads(out)["entries"] if code == 0 else []
    if not entries:
        demo.show("    (no entries yet: no earlier step wrote to the ledger)")
    for entry in entries[-12:]:
        demo.show(f"    {entry['seq']:>4}  {entry['at']}  {entry['kind']:<20} {entry['subject']}")
    if len(entries) > 12:
        demo.show(f"    ... {len(entries) - 12} earlier entries not shown")

    # The export lives outside the repository: it is an archive, not a work file.
    archive = demo.repo.parent / "ledger-archive.jsonl"
    demo.step("plangate ledger export --jsonl: an archive a team can check anywhere")
    code, out, err = demo.cli("ledger", "export", "--jsonl", str(archive), "--force")
    demo.show(out.rstrip() or err.rstrip())
    demo.expect(code, 0, "exported")
    code, out, err = demo.cli("ledger", "verify", "--jsonl", str(archive))
    demo.show(out.rstrip() or err.rstrip())
    demo.expect(code, 0, "the archive verifies on its own")

    if entries:
        demo.step("someone edits an archived entry: verification names the first bad seq")
        lines = archive.read_bytes().splitlines(keepends=True)
        first = json.loads(lines[1])
        forged_subject = "TASK-9999" if first["subject"] != "TASK-9999" else "TASK-9998"
        lines[1] = lines[1].replace(
            json.dumps(first["subject"]).encode(), json.dumps(forged_subject).encode(), 1
        )
        tampered = demo.repo.parent / "ledger-archive-tampered.jsonl"
        tampered.write_bytes(b"".join(lines))
        code, out, err = demo.cli("ledger", "verify", "--jsonl", str(tampered))
        demo.show(out.rstrip() or err.rstrip())
        demo.expect(code, 1, "tampering detected")
