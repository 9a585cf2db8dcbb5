"""G.711 mu-law bytes: identical to the reference coder (CPython's audioop, still present on
3.11) on every 16-bit sample, with the code table's landmarks checked by value."""

import warnings

import numpy as np
import pytest

from voxeval.audio.g711 import SILENCE, decode_mulaw, encode_mulaw, float_to_mulaw, mulaw_to_audio

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    audioop = pytest.importorskip("audioop")


def test_every_sample_codes_as_the_reference() -> None:
    x = np.arange(-32768, 32768, dtype=np.int16)
    assert encode_mulaw(x) == audioop.lin2ulaw(x.tobytes(), 2)
    codes = bytes(range(256))
    assert decode_mulaw(codes).tobytes() == audioop.ulaw2lin(codes, 2)


def test_landmarks() -> None:
    assert encode_mulaw([0]) == bytes([SILENCE]) == b"\xff"
    assert encode_mulaw([32767, -32768]) == b"\x80\x00"  # the loudest codes
    assert decode_mulaw(b"\x80\x00\xff\x7f").tolist() == [32124, -32124, 0, 0]
    assert float_to_mulaw(np.zeros(160)) == b"\xff" * 160
    audio = mulaw_to_audio(b"\x80" * 8)
    assert audio.rate == 8000 and audio.samples[0] == pytest.approx(32124 / 32768)
