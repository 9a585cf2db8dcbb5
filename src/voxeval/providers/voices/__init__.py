"""The voice catalogue, speaker profiles and transforms, engine-confound-free voice assignment, and
rendering a party's text to speech.
"""
