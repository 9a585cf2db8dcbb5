"""Studies: what raters are given, built from runs (clips, queries, dialogues, gold items)
and the study files."""
