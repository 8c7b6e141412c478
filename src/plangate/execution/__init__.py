"""``plangate exec``: verify the approval against HEAD under a lock, record, run, re-verify.

- :mod:`plangate.execution.preflight` -- pure rules: what must hold before a run,
  the digests a run is bound to, the run-log and ledger entries, drift, exit code;
- :mod:`plangate.execution.runlog` -- the per-task ``run.ndjson`` (append and fsync);
- :mod:`plangate.execution.command` -- runs the command of a prepared, verified run
  (the one place a run's process is spawned);
- :mod:`plangate.execution.service` -- the IO: HEAD, the lock, the verification,
  the ledger and the run log around the command.
"""
