"""The parts of the SARIF 2.1.0 schema a code-scanning upload relies on, as a JSON Schema.

The full schema is not shipped with any installed package; this one holds what GitHub's
upload reads: the version, each run's tool driver, each result's rule, level and message.
"""

from __future__ import annotations

SARIF_MIN_SCHEMA = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "version": {"const": "2.1.0"},
        "runs": {"type": "array", "minItems": 1, "items": {
            "type": "object",
            "required": ["tool", "results"],
            "properties": {
                "tool": {"type": "object", "required": ["driver"], "properties": {
                    "driver": {"type": "object", "required": ["name"]}}},
                "results": {"type": "array", "items": {
                    "type": "object",
                    "required": ["ruleId", "level", "message"],
                    "properties": {
                        "level": {"enum": ["error", "warning", "note", "none"]},
                        "message": {"type": "object", "required": ["text"]},
                    },
                }},
            },
        }},
    },
}
