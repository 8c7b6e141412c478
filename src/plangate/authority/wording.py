"""How consumers say who approved: the unauthenticated sentence and the verified names (pure).

``status``, ``ci check`` and their JSON read the ``authority`` fact the
acceptor leaves: the string ``"unauthenticated"`` when no trust root requires
signatures, else a mapping naming the verified approver and reviewers
(:meth:`plangate.authority.approval.ApprovalAuthority.summary`).
"""

from __future__ import annotations

from collections.abc import Mapping

from plangate.records import NamedTuple

UNAUTHENTICATED = "approvals are unauthenticated: no trust root requires signatures"
"""The plain sentence for a repository (or a pull request's base) without required signatures."""

UNAUTHENTICATED_HINT = (
    "anyone who can run plangate can approve; 'plangate trust init' and docs/authority.md "
    "name the people who may"
)


class Signers(NamedTuple):
    """Who signed one approval, as verified (None / empty: nobody verified)."""

    approver: str | None
    reviewers: tuple[str, ...]

    def text(self) -> str:
        """``approved by A; reviewed by B, C``, or what is missing."""
        approver = f"approved by {self.approver}" if self.approver else "no verified approver"
        reviewers = (
            f"reviewed by {', '.join(self.reviewers)}" if self.reviewers else "no verified reviewer"
        )
        return f"{approver}; {reviewers}"


def signers_of(authority: object) -> Signers | None:
    """The verified signers in an ``authority`` fact, or None when it is unauthenticated."""
    if not isinstance(authority, Mapping):
        return None
    approver = authority.get("approved_by")
    reviewed = authority.get("reviewed_by")
    names: list[str] = []
    if isinstance(reviewed, Mapping):
        names = [v for _k, v in sorted(reviewed.items()) if isinstance(v, str) and v]
    return Signers(approver if isinstance(approver, str) and approver else None, tuple(names))
