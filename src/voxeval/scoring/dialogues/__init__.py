"""Metrics of a multi-turn dialogue: the record they score, rubric judging and drafting,
content density."""
