"""Demo steps: a trust root, one signed approval accepted, one forged approval rejected.

Runs in its own repository. The keys are made with ``ssh-keygen`` in a
directory beside the repository (setup, like the demo's git commits); every
check goes through plangate. Without an OpenSSH 8.8 or newer the group says why
and is skipped.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from plangate.cli.demo import Demo
from plangate.errors import PlanGateError

TASK = "TASK-0003"
PEOPLE = {
    "alice@example.com": "reviewer",
    "bob@example.com": "reviewer",
    "carol@example.com": "approver",
}
OUTSIDER = "mallory@example.com"

PLAN = """# Plan

## Goal
Greet in French.

## Files / Components to Touch
- `src/greet.py`

## Testing Strategy
A unit test checks the greeting.

Verification Automation: `python3 -m pytest -q tests`
"""


def run_steps(demo: Demo) -> None:
    """trust root -> signed reviews -> signed record accepted -> forged record rejected."""
    from plangate.authority.sshkeygen import ssh_keygen_path

    try:
        ssh_keygen_path()
    except PlanGateError as exc:
        demo.show(f"\n(authority steps skipped: {exc.code}: {exc.message}; hint: {exc.hint})")
        return
    repo = demo.repo.parent / "authority-demo"
    repo.mkdir()
    sub = Demo(repo=repo, out=demo.out, env=demo.env, step_no=demo.step_no)
    try:
        _steps(sub, demo.repo.parent / "authority-keys")
    finally:
        demo.step_no = sub.step_no


def _key(keys: Path, principal: str) -> Path:
    keys.mkdir(exist_ok=True)
    path = keys / principal.split("@", 1)[0]
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", principal, "-f", str(path)],
        check=True,
        capture_output=True,
    )
    return path


def _public(path: Path) -> str:
    return " ".join(path.with_name(path.name + ".pub").read_text().split()[:2])


def _trust_root(demo: Demo, keys: dict[str, Path]) -> None:
    def names(role: str) -> str:
        return ", ".join(f'"{p}"' for p, r in PEOPLE.items() if r == role)

    humans = ", ".join(f'"{p}"' for p in PEOPLE)
    (demo.repo / ".plangate").mkdir()
    (demo.repo / ".plangate/trust.toml").write_text(
        "version = 1\nrequire_signatures = true\n"
        f"humans = [{humans}]\n\n[roles]\n"
        f"reviewer = [{names('reviewer')}]\napprover = [{names('approver')}]\n"
    )
    (demo.repo / ".plangate/allowed_signers").write_text(
        "".join(f"{p} {_public(keys[p])}\n" for p in PEOPLE)
    )


def _steps(demo: Demo, key_dir: Path) -> None:
    demo.git("init", "-q", "-b", "main")
    demo.git("config", "user.name", "Demo")
    demo.git("config", "user.email", "demo@example.invalid")
    demo.git("config", "commit.gpgsign", "false")
    keys = {p: _key(key_dir, p) for p in (*PEOPLE, OUTSIDER)}

    demo.step("a team commits its trust root: alice and bob review, carol approves")
    _trust_root(demo, keys)
    (demo.repo / "src").mkdir()
    (demo.repo / "src/greet.py").write_text('def greet():\n    return "hello"\n')
    demo.commit_all("trust root and app")
    code, out, _err = demo.cli("trust", "show")
    demo.show("    " + "\n    ".join(out.rstrip().splitlines()[:6]))
    demo.expect(code, 0, "the root in force is read from main, never the working tree")

    demo.step(f"plan {TASK}; alice and bob each sign their review with their own key")
    demo.cli("init", TASK)
    tdir = demo.repo / "docs/working" / TASK
    (tdir / "pbi-input.md").write_text("# PBI\n\nFrench users want a French greeting.\n")
    (tdir / "plan.md").write_text(PLAN)
    (tdir / "todo.md").write_text("- [ ] bonjour\n")
    (tdir / "test-cases.md").write_text("| AC | test |\n|---|---|\n| AC-1 | test_fr |\n")
    refs = []
    for name in ("a", "b"):
        data = f"# review {name}\n\nApprove.\n".encode()
        (tdir / f"model-{name}.md").write_bytes(data)
        refs.append(f"docs/working/{TASK}/model-{name}.md#sha256:{_sha(data)}")
    (demo.repo / "src/greet.py").write_text('def greet():\n    return "bonjour"\n')
    demo.commit_all(f"plan {TASK}")
    for flag, verdict, who in (
        ("--c1", "PASS", "alice@example.com"),
        ("--c2", "approve", "bob@example.com"),
    ):
        code, _out, _err = demo.cli("review", "mark", TASK, flag, verdict, "--sign", str(keys[who]))
        demo.expect(code, 0, f"{flag} signed by {who}")
    head = demo.commit_all("signed reviews")

    demo.step("carol signs the approval record (c3 issue --sign)")
    reviewers = demo.repo.parent / "authority-reviewers.json"
    reviewers.write_text(
        json.dumps(
            {
                "model_a": {"verdict": "approve", "evidence_ref": refs[0]},
                "model_b": {"verdict": "approve", "evidence_ref": refs[1]},
            }
        )
    )
    issue = (
        "c3",
        "issue",
        TASK,
        "--target-sha",
        head,
        "--reviewers",
        str(reviewers),
        "--decision",
        "AUTO_APPROVED",
        "--policy-ref",
        "plangate-arbiter@v1",
    )
    code, _out, _err = demo.cli(*issue, "--sign", str(keys["carol@example.com"]))
    demo.expect(code, 0, "record written with approvals/c3.json.sig")
    code, out, _err = demo.cli("status", TASK)
    demo.show("    " + "\n    ".join(out.rstrip().splitlines()))
    demo.expect_reason(out, "carol@example.com")
    demo.expect(code, 0, "ACCEPTED: approved by carol, reviewed by alice and bob, all verified")

    demo.step("mallory, whose key the trust root does not list, forges the approval")
    record = (tdir / "approvals/c3.json").read_bytes()
    genuine = (tdir / "approvals/c3.json.sig").read_bytes()
    forged = subprocess.run(
        ["ssh-keygen", "-q", "-Y", "sign", "-f", str(keys[OUTSIDER]), "-n", "plangate-c3"],
        input=record,
        capture_output=True,
        check=True,
    ).stdout
    (tdir / "approvals/c3.json.sig").write_bytes(forged)
    code, out, _err = demo.cli("c3", "verify", TASK)
    demo.show("    " + "\n    ".join(out.rstrip().splitlines()[:3]))
    demo.expect_reason(out, "C3_SIGNER_UNKNOWN")
    demo.expect(code, 1, "REJECTED: C3_SIGNER_UNKNOWN")

    demo.step("an agent deletes the signature and hopes nobody checks")
    (tdir / "approvals/c3.json.sig").unlink()
    code, out, _err = demo.cli("c3", "verify", TASK)
    demo.show("    " + "\n    ".join(out.rstrip().splitlines()[:3]))
    demo.expect_reason(out, "C3_SIGNATURE_MISSING")
    demo.expect(code, 1, "REJECTED: C3_SIGNATURE_MISSING (the root requires signatures)")
    (tdir / "approvals/c3.json.sig").write_bytes(genuine)


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()
