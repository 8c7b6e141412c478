"""Evaluation trust boundary and protected surfaces.

:mod:`plangate.surfaces` resolves the one machine-readable protected
surface definition shared by the C-3' arbiter (Hardening Override check) and
the evaluation policy gate (DECISIONS 12).
"""
