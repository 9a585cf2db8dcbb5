"""voxeval.arena"""
