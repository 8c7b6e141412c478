"""Isolation: commands PlanGate does not trust run in a box.

- :mod:`plangate.isolation.policy`: what a box shows, lets write, hides; network;
  limits; environment (data, and the rules a policy must meet);
- :mod:`plangate.isolation.backend`: which backend works here (bubblewrap on
  Linux, Seatbelt on macOS, none elsewhere) and why the others do not;
- :mod:`plangate.isolation.bwrap` and :mod:`plangate.isolation.seatbelt`: a
  policy as one backend's command line or profile (pure);
- :mod:`plangate.isolation.runner`: start one box, bound its output and time,
  forward signals, kill its whole process tree.

No backend, no box: callers refuse (``SANDBOX_UNAVAILABLE``) rather than run
the command unconfined.
"""
