"""Audio values and operations."""

from voxeval.audio.io import audio_from_bytes, audio_to_wav_bytes, read_audio, write_audio
from voxeval.audio.value import Audio

__all__ = ["Audio", "audio_from_bytes", "audio_to_wav_bytes", "read_audio", "write_audio"]
