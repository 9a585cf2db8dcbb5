"""The call engine's parts (``voxeval.simulation.engine`` runs a call with them)."""
