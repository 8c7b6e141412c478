"""One importable helper package for the test suite (``from support.repo import git``).

``tests/`` is on ``sys.path`` (pytest's rootdir insertion), so every test imports
its helpers from here instead of from ``conftest``.
"""
