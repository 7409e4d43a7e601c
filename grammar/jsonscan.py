"""The wire importer's JSON scanner: ``dotboxd.core.jsonscan`` under the wire format's budgets.

The scanner moved to ``core`` so that every JSON reader of the project (policies and binding
manifests in the lower layers too) shares one budgeted, iterative implementation; the grammar
layer keeps importing it from here.
"""

from dotboxd.core.jsonscan import (
    MAX_DEPTH,
    MAX_DOCUMENT_BYTES,
    MAX_ITEMS,
    MAX_STRING_BYTES,
    MAX_TOKENS,
    MAX_TOTAL_STRING_BYTES,
    WIRE_BUDGETS,
    Document,
    JArray,
    JBool,
    JNull,
    JNumber,
    JObject,
    JsonBudgets,
    JString,
    JValue,
    kind_name,
    scan_document,
)

__all__ = [
    "MAX_DEPTH",
    "MAX_DOCUMENT_BYTES",
    "MAX_ITEMS",
    "MAX_STRING_BYTES",
    "MAX_TOKENS",
    "MAX_TOTAL_STRING_BYTES",
    "WIRE_BUDGETS",
    "Document",
    "JArray",
    "JBool",
    "JNull",
    "JNumber",
    "JObject",
    "JString",
    "JValue",
    "JsonBudgets",
    "kind_name",
    "scan_document",
]
