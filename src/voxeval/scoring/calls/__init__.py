"""Metrics of a live call computed from what it recorded (timeline, database, audio): task
completion, turn-taking, full-duplex events, diagnostics and simulation gates; and the record
they score, ``LiveCallRecord``."""
