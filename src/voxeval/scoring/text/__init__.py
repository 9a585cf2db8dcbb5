"""Text helpers the metrics share: normalisation, word errors and spoken key entities."""
