"""Export of collected ratings: files, the database dump, recordings, the analysis and its
summary."""
