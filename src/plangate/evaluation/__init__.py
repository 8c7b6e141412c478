"""The evaluation trust boundary, one folder per step of the journey.

``harness/`` (what a harness is at a commit), ``registry/`` (plans registered
before their candidates, in the ledger), ``gate/`` (may a candidate enter
paired evaluation?) and ``run/`` (paired trials and the Promotion Decision).
Inside each step the rule modules are pure; one IO module per step reads and
writes (docs/architecture.md lists which is which).
"""
