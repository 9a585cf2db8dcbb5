"""voxeval.analysis"""
