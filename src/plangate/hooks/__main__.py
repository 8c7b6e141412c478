"""``python -m plangate.hooks <host>``: the hook entry point the installer writes."""

import sys

from plangate.hooks.entry import main

sys.exit(main())
