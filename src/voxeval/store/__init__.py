"""voxeval.store"""
