"""``python -m plangate.hooks <host>``: the hook entry point the installer writes."""

import sys

from plangate.startup import tune_collector

tune_collector()

from plangate.hooks.entry import main  # noqa: E402 -- after the collector's setting

sys.exit(main())
