"""The ``plangate`` command line: thin parsing and formatting over the library."""
