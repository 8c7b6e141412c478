"""Paired evaluation: the runner protocol, the trials, known mutants and the Promotion Decision."""
