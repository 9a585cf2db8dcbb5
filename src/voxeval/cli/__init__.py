"""voxeval.cli"""
