"""Price tables and what a run cost."""
