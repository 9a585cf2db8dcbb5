"""WildSpeech-Bench family: single-turn spoken queries, their suites, curation and
rendering."""
