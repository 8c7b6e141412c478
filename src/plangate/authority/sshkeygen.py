"""The one process door to ``ssh-keygen -Y``: signing and verifying SSHSIG signatures.

Every call passes an argument list (never a shell), a timeout and a bound on
what is read back. No private key passes through PlanGate: signing hands
``ssh-keygen`` a key path (a private key, or a ``.pub`` whose private half is
in ``ssh-agent`` or on a hardware key), and ``ssh-keygen`` asks for a
passphrase or a touch itself. Verification writes the allowed-signers line of
the one principal being checked, and the signature, to a private temporary
directory, and feeds the signed bytes on standard input.

``ssh-keygen`` older than OpenSSH 8.8 (no ``valid-after``/``valid-before`` in
allowed-signers files) or missing fails closed with ``AUTH_SSH_KEYGEN_TOO_OLD``
or ``AUTH_SSH_KEYGEN_MISSING``.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from plangate.errors import EnvironmentFailure, InputRejected
from plangate.fsutil import atomic_write
from plangate.sysbin import find_program, root_uids, trusted_binary

if TYPE_CHECKING:
    from plangate._spawn import Captured

MIN_VERSION = (8, 8)
SIGN_TIMEOUT_SECONDS = 300
"""Signing may wait for a passphrase or a hardware key's touch."""

VERIFY_TIMEOUT_SECONDS = 30
OUTPUT_LIMIT = 64 * 1024
"""Most bytes of standard output one ssh-keygen call may print (more is refused)."""

_VERSION_RE = re.compile(rb"OpenSSH_(\d+)\.(\d+)")
_INSTALL_HINT = (
    "install OpenSSH 8.8 or newer (Debian/Ubuntu: apt-get install openssh-client) in a system "
    "directory, or name your own in ~/.config/plangate/programs.toml (docs/authority.md)"
)


def run(
    argv: list[str], data: bytes | None, timeout: float, *, interactive: bool = False
) -> Captured:
    """Run ``argv`` (ssh-keygen, ssh) with ``data`` on stdin, bounded and timed.

    Through the one process door (:func:`plangate._spawn.subprocess_capture`):
    an argument list, a deadline, at most :data:`OUTPUT_LIMIT` bytes of output.
    ``interactive`` leaves standard error on the terminal, where ssh-keygen asks
    for a hardware key's touch.
    """
    from plangate._spawn import SpawnOutputTooLarge, SpawnTimeout, subprocess_capture

    try:
        return subprocess_capture(
            argv,
            Path(os.curdir),
            dict(os.environ),
            input_data=data or b"",
            timeout=timeout,
            output_limit=OUTPUT_LIMIT,
            stderr_to_terminal=interactive,
        )
    except FileNotFoundError:
        raise EnvironmentFailure(
            "AUTH_SSH_KEYGEN_MISSING", f"{argv[0]} is not installed", _INSTALL_HINT
        ) from None
    except SpawnTimeout:
        raise EnvironmentFailure(
            "AUTH_SSH_KEYGEN_TIMEOUT",
            f"ssh-keygen did not finish within {timeout:.0f}s",
            "touch the hardware key or enter the passphrase sooner",
        ) from None
    except SpawnOutputTooLarge:
        raise EnvironmentFailure(
            "AUTH_SSH_KEYGEN_FAILED",
            f"{argv[0]} printed more than {OUTPUT_LIMIT} bytes",
            _INSTALL_HINT,
        ) from None
    except OSError as exc:
        raise EnvironmentFailure(
            "AUTH_SSH_KEYGEN_FAILED", f"cannot run {argv[0]}: {exc}", _INSTALL_HINT
        ) from None


def ssh_keygen_path() -> str:
    """The trusted ``ssh-keygen`` (:func:`plangate.sysbin.find_program`), checked to be
    OpenSSH 8.8 or newer. Never the one on ``PATH``: whoever starts PlanGate sets that."""
    found, problem = find_program("ssh-keygen")
    if found is None:
        code = "AUTH_SSH_KEYGEN_UNTRUSTED" if "not installed" not in problem else (
            "AUTH_SSH_KEYGEN_MISSING")
        raise EnvironmentFailure(code, f"no trusted ssh-keygen: {problem}", _INSTALL_HINT)
    # ssh-keygen prints no version; ssh of the same installation does.
    ssh = Path(found).with_name("ssh")
    trusted_ssh = ssh.exists() and trusted_binary(str(ssh), (*root_uids(), os.getuid())) is None
    version = run([str(ssh), "-V"], b"", VERIFY_TIMEOUT_SECONDS) if trusted_ssh else None
    match = _VERSION_RE.search(version.stderr + version.stdout) if version else None
    if match is None:
        raise EnvironmentFailure(
            "AUTH_SSH_KEYGEN_TOO_OLD",
            f"cannot tell the OpenSSH version of {found} ({ssh} -V)",
            _INSTALL_HINT,
        )
    major, minor = int(match.group(1)), int(match.group(2))
    if (major, minor) < MIN_VERSION:
        raise EnvironmentFailure(
            "AUTH_SSH_KEYGEN_TOO_OLD",
            f"OpenSSH {major}.{minor} is older than {MIN_VERSION[0]}.{MIN_VERSION[1]}",
            _INSTALL_HINT,
        )
    return found


def sign(key_path: Path, namespace: str, data: bytes) -> bytes:
    """An armored SSHSIG signature of ``data`` by the key at ``key_path``."""
    exe = ssh_keygen_path()
    if not key_path.is_file():
        raise InputRejected(
            "AUTH_SIGNING_KEY_MISSING",
            f"no key file at {key_path}",
            "give the private key path, or the .pub of a key in ssh-agent",
        )
    proc = run(
        [exe, "-q", "-Y", "sign", "-f", str(key_path), "-n", namespace],
        data,
        SIGN_TIMEOUT_SECONDS,
        interactive=True,
    )
    if proc.returncode != 0 or not proc.stdout.startswith(b"-----BEGIN SSH SIGNATURE-----"):
        raise InputRejected(
            "AUTH_SIGNING_FAILED",
            f"ssh-keygen could not sign with {key_path} (exit {proc.returncode})",
            "check the key path, its passphrase, ssh-agent or the hardware key",
        )
    return proc.stdout


def verify(signer_line: str, principal: str, namespace: str, signature: bytes, data: bytes) -> bool:
    """``ssh-keygen -Y verify`` of ``signature`` over ``data`` for ``principal``.

    True only when ssh-keygen accepts; a refusal (bad signature, other bytes,
    expired key) is False; a failure to run is an error.
    """
    exe = ssh_keygen_path()
    with tempfile.TemporaryDirectory(prefix="plangate-sig.") as tmp:
        allowed = Path(tmp) / "allowed_signers"
        sig = Path(tmp) / "data.sig"
        atomic_write(allowed, (signer_line + "\n").encode(), mode=0o600)
        atomic_write(sig, signature, mode=0o600)
        proc = run(
            [
                exe,
                "-Y",
                "verify",
                "-f",
                str(allowed),
                "-I",
                principal,
                "-n",
                namespace,
                "-s",
                str(sig),
            ],
            data,
            VERIFY_TIMEOUT_SECONDS,
        )
    return proc.returncode == 0 and proc.stdout.startswith(b"Good ")


def public_key_of(key_path: Path) -> str:
    """``keytype base64`` of a key file's public half (``ssh-keygen -y``, or the .pub itself)."""
    exe = ssh_keygen_path()
    if key_path.suffix == ".pub":
        from plangate.fsutil import read_regular_file

        read = read_regular_file(key_path, 16 * 1024)
        if not read.ok or read.data is None:
            raise InputRejected(
                "AUTH_SIGNING_KEY_MISSING",
                f"{key_path} {read.detail}",
                "give the .pub file of the key",
            )
        text = read.data.decode("ascii", "replace")
    else:
        pub = key_path.with_name(key_path.name + ".pub")
        if pub.is_file():
            return public_key_of(pub)
        proc = run([exe, "-y", "-f", str(key_path)], b"", SIGN_TIMEOUT_SECONDS, interactive=True)
        if proc.returncode != 0:
            raise InputRejected(
                "AUTH_SIGNING_KEY_MISSING",
                f"cannot read the public half of {key_path}",
                "give the key's .pub file",
            )
        text = proc.stdout.decode("ascii", "replace")
    parts = text.split()
    if len(parts) < 2:
        raise InputRejected(
            "AUTH_SIGNING_KEY_MISSING",
            f"{key_path} holds no public key",
            "give the key's .pub file",
        )
    return f"{parts[0]} {parts[1]}"
