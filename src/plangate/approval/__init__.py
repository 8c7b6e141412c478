"""Approval: the C-3' arbiter, the c3-prime record, its producer and its acceptor."""
