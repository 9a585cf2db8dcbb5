"""voxeval.report"""
