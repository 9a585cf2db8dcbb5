"""`voxeval view`: a local web app to browse runs, their units, audio, timelines and scores."""
