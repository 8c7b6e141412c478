"""PlanGate: a fail-closed trust kernel for AI coding agents.

The public API is deliberately small; everything else lives in modules whose
names say what they do. Import the pieces you need from their modules:

- :mod:`plangate.canonical` -- strict JSON loading, RFC 8785 canonical form, digests
- :mod:`plangate.paths` -- canonical repository paths and the one glob matcher
- :mod:`plangate.verdict` -- verdicts, reasons, results and exit codes
- :mod:`plangate.errors` -- error families, each with a reason code and a hint
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
