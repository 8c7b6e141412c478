"""The hook command that asks the helper first: ``'<python>' -S -I '<this file>' HOST``.

A script is compiled on every run; this one is three statements, and the
client itself (:mod:`plangate.hooks.hookd_client`, standard library only) is
imported from its byte-compiled cache. The hooks directory is appended to
``sys.path`` (after the standard library, so it shadows nothing), and only
``hookd_client`` is imported from it.
"""

import os
import sys

sys.path.append(os.path.dirname(os.path.abspath(__file__)))  # noqa: PTH100, PTH120

from hookd_client import main  # type: ignore[import-not-found]

sys.exit(main())
