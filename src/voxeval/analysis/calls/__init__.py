"""Statistics of live-call scores: EVA composites, perturbation effects, variance
components, trial counts and the caller's timing."""
