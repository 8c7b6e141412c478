"""Pre-registration: evaluation plans and candidates, validated purely and stored in the ledger."""
