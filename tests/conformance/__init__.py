"""The conformance runner: case format, comparison, protocol, CLI, and the import corpus."""
