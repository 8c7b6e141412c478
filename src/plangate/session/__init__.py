"""The active task the ledger lends: a human's task session and the open ``plangate exec`` run.

An agent that ``plangate exec`` did not start (an IDE's agent) has no ``PLANGATE_TASK``;
its hooks then take the task of the open exec run, else of the task session a human
started (``plangate task start``). This package reads both back from the ledger, below
the hooks that ask and the commands that write them:

- :mod:`plangate.session.state` -- which task session is open, and until when;
- :mod:`plangate.session.baseline` -- the files a session's baseline holds unchanged;
- :mod:`plangate.session.openrun` -- which exec run is open, and whether its process lives.

Writing a session (``task start|stop|show``) is :mod:`plangate.execution.session`.
"""
