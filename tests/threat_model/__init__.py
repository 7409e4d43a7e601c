"""The threat model: its tables name real tests, and the import-stage threats are defended."""
