"""The rater web app: studies built from runs, invite tokens, arena, rubric, score and
record tasks, quality control and export."""
