"""Models that judge audio: DNSMOS and DistillMOS quality predictors and Silero voice activity
detection.
"""
