"""The multi-turn protocol's arena: pairing, judge inputs and verdicts, the reference mode."""
