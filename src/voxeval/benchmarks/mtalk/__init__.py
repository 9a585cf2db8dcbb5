"""MTalk-Bench family: multi-turn dialogues, their suites, the release importer and the
renderer of user turns."""
