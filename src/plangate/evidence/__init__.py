"""RunEvidence: one document per finished run, bound to the c3-prime record and the
delivery log (producer, verifier, privacy rules, contract)."""
