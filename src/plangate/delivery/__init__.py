"""Merge readiness: the delivery state machine over a verified c3-prime record.

- :mod:`plangate.delivery.pr_snapshot`: strict PR-snapshot validation;
- :mod:`plangate.delivery.machine`: the pure ``assess`` and the contract;
- :mod:`plangate.delivery.log`: the append-only, chained ``record.jsonl``;
- :mod:`plangate.delivery.service`: the IO edge (acceptor, git, ledger).

There is no MERGED state and nothing here merges (NO MERGE BY AI).
"""
