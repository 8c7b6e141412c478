"""The policy gate: an ordered table of rules over facts the service gathers from the baseline."""
