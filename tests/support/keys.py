"""Real OpenSSH keys and signatures for tests: ssh-keygen in temporary directories."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import NamedTuple


class Key(NamedTuple):
    """A generated key pair: the private key path, its public line, its principal."""

    path: Path
    public: str
    principal: str

    @property
    def pub_path(self) -> Path:
        """The ``.pub`` file beside the private key."""
        return self.path.with_name(self.path.name + ".pub")

    def signer_line(self, options: str = "") -> str:
        """An allowed_signers line for this key."""
        middle = f" {options}" if options else ""
        return f"{self.principal}{middle} {self.public}"


def make_key(directory: Path, principal: str, kind: str = "ed25519") -> Key:
    """Generate a passphrase-less key of ``kind`` (ed25519, ecdsa) for ``principal``."""
    directory.mkdir(parents=True, exist_ok=True)
    name = principal.replace("@", "_at_")
    path = directory / f"{name}_{kind}"
    args = ["ssh-keygen", "-q", "-t", kind, "-N", "", "-C", principal, "-f", str(path)]
    if kind == "ecdsa":
        args[4:4] = ["-b", "256"]
    subprocess.run(args, check=True, capture_output=True)
    parts = path.with_name(path.name + ".pub").read_text().split()
    return Key(path, f"{parts[0]} {parts[1]}", principal)


def sign_bytes(key: Key, namespace: str, data: bytes) -> bytes:
    """An armored signature of ``data`` (ssh-keygen directly, not PlanGate's door)."""
    proc = subprocess.run(
        ["ssh-keygen", "-q", "-Y", "sign", "-f", str(key.path), "-n", namespace],
        input=data,
        capture_output=True,
        check=True,
    )
    return proc.stdout


def allowed_signers(*keys: Key) -> bytes:
    """An allowed_signers file listing ``keys``."""
    return ("".join(k.signer_line() + "\n" for k in keys)).encode()


def trust_toml(
    reviewers: list[str],
    approvers: list[str],
    *,
    require: bool = True,
    extra: str = "",
    humans: list[str] | None = None,
    agents: list[str] | None = None,
) -> bytes:
    """A trust.toml with the given roles."""

    def names(values: list[str]) -> str:
        return "[" + ", ".join(f'"{v}"' for v in values) + "]"

    lines = ["version = 1", f"require_signatures = {str(require).lower()}"]
    if humans:
        lines.append(f"humans = {names(humans)}")
    if agents:
        lines.append(f"agents = {names(agents)}")
    if extra:
        lines.append(extra)
    lines.append("[roles]")
    if reviewers:
        lines.append(f"reviewer = {names(reviewers)}")
    if approvers:
        lines.append(f"approver = {names(approvers)}")
    return ("\n".join(lines) + "\n").encode()
