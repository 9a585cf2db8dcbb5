"""The numpy 16-bit PCM WAV codec writes exactly libsndfile's bytes and reads what it reads;
everything else is left to soundfile (None)."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from voxeval.audio import Audio, audio_from_bytes, audio_to_wav_bytes, read_audio, write_audio
from voxeval.audio.io import AudioLimits, probe_audio
from voxeval.audio.pcm_wav import decode_pcm16_wav, encode_pcm16_wav, pcm16_wav_header
from voxeval.errors import AudioError


def libsndfile_wav(samples: np.ndarray, rate: int, subtype: str = "PCM_16") -> bytes:
    buffer = io.BytesIO()
    sf.write(buffer, np.clip(samples, -1.0, 1.0), rate, format="WAV", subtype=subtype)
    return buffer.getvalue()


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(
        np.float32,
        st.integers(0, 3000),
        elements=st.floats(-1.5, 1.5, width=32, allow_nan=False, allow_infinity=False),
    ),
    st.sampled_from([8000, 16000, 22050, 24000, 48000]),
)
def test_encoding_is_byte_for_byte_libsndfile(samples: np.ndarray, rate: int) -> None:
    assert encode_pcm16_wav(samples, rate) == libsndfile_wav(samples, rate)


def test_encoding_golden_values_at_the_edges() -> None:
    # floor(x * 32768), clipped: 1.0 -> 32767, -1.0 -> -32768, half a step down -> -1
    samples = np.array([1.0, -1.0, 2.0, -2.0, 0.5 / 32768, -0.5 / 32768, 0.25], np.float32)
    data = encode_pcm16_wav(samples, 16000)
    assert data[:4] == b"RIFF" and len(data) == 44 + 2 * samples.size
    assert np.frombuffer(data[44:], "<i2").tolist() == [32767, -32768, 32767, -32768, 0, -1, 8192]
    assert data == libsndfile_wav(samples, 16000)


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.int16, st.integers(1, 2000)), st.integers(1, 3))
def test_decoding_matches_soundfile(pcm: np.ndarray, channels: int) -> None:
    frames = pcm[: pcm.size - pcm.size % channels].reshape(-1, channels)
    buffer = io.BytesIO()
    sf.write(buffer, frames, 16000, format="WAV", subtype="PCM_16")
    expected, rate = sf.read(io.BytesIO(buffer.getvalue()), dtype="float32", always_2d=True)
    decoded = decode_pcm16_wav(buffer.getvalue())
    assert decoded is not None
    samples, got_rate, got_channels = decoded
    assert (got_rate, got_channels) == (rate, channels)
    assert np.array_equal(samples.reshape(-1, channels), expected)


def _wav(fmt: bytes, data: bytes, before_data: bytes = b"") -> bytes:
    chunks = b"fmt " + struct.pack("<I", len(fmt)) + fmt + before_data
    chunks += b"data" + struct.pack("<I", len(data)) + data
    return b"RIFF" + struct.pack("<I", 4 + len(chunks)) + b"WAVE" + chunks


def test_extensible_headers_odd_chunks_and_foreign_formats() -> None:
    pcm = np.array([0, 16384, -16384], "<i2").tobytes()
    plain = struct.pack("<HHIIHH", 1, 1, 8000, 16000, 2, 16)
    odd_chunk = b"LIST" + struct.pack("<I", 3) + b"abc" + b"\x00"  # padded to even length
    samples, rate, _ = decode_pcm16_wav(_wav(plain, pcm, odd_chunk)) or (None, 0, 0)
    assert samples is not None and samples.tolist() == [0.0, 0.5, -0.5] and rate == 8000
    guid_tail = b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"
    extensible = struct.pack("<HHIIHHHHI", 0xFFFE, 1, 8000, 16000, 2, 16, 22, 16, 4)
    assert decode_pcm16_wav(_wav(extensible + b"\x01\x00" + guid_tail, pcm)) is not None
    # IEEE float sub-format, 24-bit, A-law, truncated data, no data chunk, not RIFF at all
    assert decode_pcm16_wav(_wav(extensible + b"\x03\x00" + guid_tail, pcm)) is None
    assert decode_pcm16_wav(libsndfile_wav(np.zeros(10), 16000, "PCM_24")) is None
    assert decode_pcm16_wav(libsndfile_wav(np.zeros(10), 16000, "FLOAT")) is None
    assert decode_pcm16_wav(_wav(struct.pack("<HHIIHH", 6, 1, 8000, 8000, 1, 8), pcm)) is None
    assert decode_pcm16_wav(_wav(plain, pcm)[:-2]) is None
    assert decode_pcm16_wav(_wav(plain, pcm)[:36]) is None
    assert decode_pcm16_wav(b"OggS" + bytes(40)) is None


def test_bytes_round_trip_and_other_formats_still_decode() -> None:
    audio = Audio(np.linspace(-0.9, 0.9, 1600, dtype=np.float32), 16000)
    back = audio_from_bytes(audio_to_wav_bytes(audio))
    assert back.rate == 16000 and np.max(np.abs(back.samples - audio.samples)) <= 1 / 32768
    as_float = libsndfile_wav(audio.samples, 16000, "FLOAT")  # soundfile decodes this one
    assert np.array_equal(audio_from_bytes(as_float).samples, audio.samples)
    with pytest.raises(AudioError, match="cannot decode"):
        audio_from_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk")


def test_files_read_through_the_fast_path_equal_soundfile(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    stereo = rng.uniform(-1, 1, (800, 2)).astype(np.float32)
    path = tmp_path / "stereo.wav"
    sf.write(path, stereo, 16000, subtype="PCM_16")
    expected = sf.read(path, dtype="float32")[0]
    assert np.array_equal(read_audio(path, channels="left").samples, expected[:, 0])
    assert np.array_equal(read_audio(path, channels="right").samples, expected[:, 1])
    assert np.array_equal(read_audio(path, channels="mix").samples, expected.mean(axis=1))
    with pytest.raises(AudioError, match="2 channels"):
        read_audio(path)
    with pytest.raises(AudioError, match="max_audio_s"):
        read_audio(path, channels="mix", limits=AudioLimits(max_seconds=0.01))
    mono = Audio(rng.uniform(-1, 1, 4000).astype(np.float32), 8000)
    written = write_audio(mono, tmp_path / "mono.wav")
    assert written.read_bytes() == libsndfile_wav(mono.samples, 8000)
    assert np.array_equal(read_audio(written).samples, sf.read(written, dtype="float32")[0])
    sf.write(tmp_path / "empty.wav", np.zeros(0, np.float32), 16000, subtype="PCM_16")
    with pytest.raises(AudioError, match="no samples"):
        read_audio(tmp_path / "empty.wav")


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.int16, st.integers(1, 3000)), st.sampled_from([8000, 16000, 44100]))
def test_canonical_bytes_are_kept_and_reused_exactly(pcm: np.ndarray, rate: int) -> None:
    # what libsndfile (and our encoder) writes for mono PCM16: decoding and encoding again
    # are lossless, so the decoded value keeps these very bytes as its encoding
    data = libsndfile_wav(pcm.astype(np.float32) / 32768, rate)
    audio = audio_from_bytes(data)
    assert audio.encoded_wav is data
    assert audio_to_wav_bytes(audio) is data
    assert encode_pcm16_wav(audio.samples, rate) == data
    # a new value made from those samples encodes to the same bytes, on its own
    fresh = audio.with_samples(audio.samples)
    assert fresh.encoded_wav is None
    assert audio_to_wav_bytes(fresh) == data
    assert audio_to_wav_bytes(fresh) is fresh.encoded_wav  # encoded once, then reused


def test_other_layouts_are_decoded_but_encoded_afresh(tmp_path: Path) -> None:
    pcm = np.array([0, 16384, -16384, 8192], "<i2")
    plain = struct.pack("<HHIIHH", 1, 1, 8000, 16000, 2, 16)
    odd_chunk = b"LIST" + struct.pack("<I", 3) + b"abc" + b"\x00"
    stereo = libsndfile_wav(np.stack([pcm, pcm], axis=1).astype(np.float32) / 32768, 8000)
    for data in (_wav(plain, pcm.tobytes(), odd_chunk), stereo, _wav(plain, pcm.tobytes()) + b"x"):
        audio = audio_from_bytes(data)
        assert audio.encoded_wav is None
        assert audio_to_wav_bytes(audio) == encode_pcm16_wav(audio.samples, 8000) != data
    path = tmp_path / "extra.wav"
    path.write_bytes(_wav(plain, pcm.tobytes(), odd_chunk))
    assert read_audio(path).encoded_wav is None
    canonical = tmp_path / "plain.wav"
    canonical.write_bytes(_wav(plain, pcm.tobytes()))
    assert read_audio(canonical).encoded_wav == canonical.read_bytes()
    assert audio_to_wav_bytes(read_audio(canonical)) == canonical.read_bytes()


def test_large_encodings_are_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    from voxeval.audio import io as audio_io

    monkeypatch.setattr(audio_io, "KEEP_ENCODED_MAX_BYTES", 100)
    long = Audio(np.zeros(200, np.float32), 8000)
    assert len(audio_to_wav_bytes(long)) == 444 and long.encoded_wav is None
    assert audio_from_bytes(audio_to_wav_bytes(long)).encoded_wav is None
    short = Audio(np.zeros(20, np.float32), 8000)
    assert audio_to_wav_bytes(short) is short.encoded_wav


def test_header_probe_agrees_with_soundfile_on_every_layout(tmp_path: Path) -> None:
    """``probe_audio`` reads 16-bit PCM headers itself; frames, rate and channels must be
    what libsndfile reports, and every other file still goes to libsndfile."""
    pcm = np.arange(-300, 300, dtype="<i2").tobytes()  # 600 samples
    stereo = struct.pack("<HHIIHH", 1, 2, 22050, 88200, 4, 16)
    guid_tail = b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"
    extensible = struct.pack("<HHIIHHHHI", 0xFFFE, 1, 8000, 16000, 2, 16, 22, 16, 4)
    metadata = b"LIST" + struct.pack("<I", 5) + b"abcde" + b"\x00"
    files = {
        "plain.wav": audio_to_wav_bytes(Audio(np.zeros(1234, np.float32), 16000)),
        "stereo_after_metadata.wav": _wav(stereo, pcm, metadata),
        "extensible.wav": _wav(extensible + b"\x01\x00" + guid_tail, pcm),
        "pcm24.wav": libsndfile_wav(np.zeros(10), 16000, "PCM_24"),
        "float.wav": libsndfile_wav(np.zeros(10), 16000, "FLOAT"),
    }
    expected_fast = {"plain.wav": (1234, 16000, 1), "stereo_after_metadata.wav": (300, 22050, 2)}
    expected_fast["extensible.wav"] = (600, 8000, 1)
    for name, data in files.items():
        path = tmp_path / name
        path.write_bytes(data)
        info = probe_audio(path)
        reference = sf.info(str(path))
        assert (info.frames, info.rate, info.channels) == (
            reference.frames,
            reference.samplerate,
            reference.channels,
        ), name
        fast = pcm16_wav_header(data[:128], len(data))
        assert fast == expected_fast.get(name), name
    # the data chunk must start within the bytes read, and must fit in the file
    data = files["plain.wav"]
    assert pcm16_wav_header(data[:20], len(data)) is None
    assert pcm16_wav_header(data[:64], len(data) - 2) is None
