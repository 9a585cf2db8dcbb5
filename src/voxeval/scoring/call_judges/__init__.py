"""Judged metrics of a live call: an LLM or audio judge rates the agent turns (faithfulness,
conciseness, progression, speakability, speech fidelity, interruption uptake)."""
