"""``python -m plangate``."""

from plangate.cli.main import entrypoint

entrypoint()
