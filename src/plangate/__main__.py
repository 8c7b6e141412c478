"""``python -m plangate``."""

from plangate.startup import tune_collector

tune_collector()

from plangate.cli.main import entrypoint  # noqa: E402 -- after the collector's setting

entrypoint()
