"""Harness identity: the definition, the content-addressed manifest, and their IO service."""
