"""EVA-Bench family: live-call scenarios, the built-in call suites and the release
importer."""
