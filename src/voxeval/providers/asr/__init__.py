"""Speech recognition: embedded Whisper and OpenAI-compatible transcription, plus the spoken-
language identifier protocol.
"""
