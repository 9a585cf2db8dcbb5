"""Metrics of a single spoken reply: the record they score, the checklist judge, assertions,
transcripts and the reply-audio metrics (MOS, WER, language, duration)."""
