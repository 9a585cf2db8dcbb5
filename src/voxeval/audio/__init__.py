"""Audio values and operations."""

from voxeval.audio.io import audio_from_bytes, audio_to_wav_bytes, read_audio, write_audio
from voxeval.audio.levels import (
    db_to_amplitude,
    gain_db,
    loudness_lufs,
    normalise_loudness,
    normalise_peak,
    normalise_rms,
    peak,
    peak_db,
    rms,
    rms_db,
)
from voxeval.audio.mix import (
    babble,
    concatenate,
    fit_to_length,
    mix_at_ratio,
    mix_at_snr,
    noise_at_snr,
    overlay,
    ratio_to_snr_db,
)
from voxeval.audio.resample import resample
from voxeval.audio.speech_segments import segments_from_probabilities, speech_mask, speech_seconds
from voxeval.audio.telephony import (
    degrade_connection,
    gain_curve,
    gain_fluctuation,
    lost_frames,
    mulaw_decode,
    mulaw_encode,
    mulaw_roundtrip,
    packet_loss,
    telephone_band,
)
from voxeval.audio.trim import speech_bounds, trim_silence
from voxeval.audio.value import Audio

__all__ = [
    "Audio",
    "audio_from_bytes",
    "audio_to_wav_bytes",
    "babble",
    "concatenate",
    "db_to_amplitude",
    "degrade_connection",
    "fit_to_length",
    "gain_curve",
    "gain_db",
    "gain_fluctuation",
    "lost_frames",
    "loudness_lufs",
    "mix_at_ratio",
    "mix_at_snr",
    "mulaw_decode",
    "mulaw_encode",
    "mulaw_roundtrip",
    "noise_at_snr",
    "normalise_loudness",
    "normalise_peak",
    "normalise_rms",
    "overlay",
    "packet_loss",
    "peak",
    "peak_db",
    "ratio_to_snr_db",
    "read_audio",
    "resample",
    "rms",
    "rms_db",
    "segments_from_probabilities",
    "speech_bounds",
    "speech_mask",
    "speech_seconds",
    "telephone_band",
    "trim_silence",
    "write_audio",
]
