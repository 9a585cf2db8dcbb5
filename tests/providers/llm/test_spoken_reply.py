"""Where a chat completion's spoken answer is found, and how its bytes are decoded."""

from __future__ import annotations

import base64
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxeval.audio import Audio, audio_to_pcm16, audio_to_wav_bytes
from voxeval.errors import AudioError
from voxeval.providers.llm.spoken_reply import (
    SpokenPayload,
    decode_spoken_payload,
    find_reply_channels,
)


def tone(seconds: float, rate: int) -> Audio:
    t = np.arange(round(seconds * rate)) / rate
    return Audio((0.4 * np.sin(2 * np.pi * 220.0 * t)).astype(np.float32), rate)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def choice(message: dict[str, Any]) -> dict[str, Any]:
    return {"index": 0, "message": {"role": "assistant", **message}}


def test_openai_style_audio_with_its_transcript_as_text() -> None:
    found = find_reply_channels(
        [choice({"content": None, "audio": {"data": "QUJD", "transcript": "Hi there."}})]
    )
    assert found.text == "Hi there."
    assert found.spoken == SpokenPayload("QUJD", None, "Hi there.", "choices[0].message.audio")


def test_vllm_omni_style_text_in_the_first_choice_audio_in_the_second() -> None:
    found = find_reply_channels(
        [
            choice({"content": "It opens at nine."}),
            choice({"content": None, "audio": {"data": "QUJD", "format": "WAV"}}),
        ]
    )
    assert found.text == "It opens at nine."
    assert found.spoken is not None
    assert (found.spoken.where, found.spoken.format) == ("choices[1].message.audio", "wav")


@pytest.mark.parametrize("key", ["audio", "output_audio", "input_audio"])
def test_audio_content_parts_are_accepted(key: str) -> None:
    parts = [
        {"type": "text", "text": "Sure."},
        {"type": key, key: {"data": "QUJD", "format": "pcm16"}},
    ]
    found = find_reply_channels([choice({"content": parts})])
    assert found.text == "Sure."
    assert found.spoken is not None
    assert found.spoken.where == f"choices[0].message.content[1].{key}"
    assert found.spoken.format == "pcm16"


def test_no_audio_anywhere() -> None:
    found = find_reply_channels(
        [choice({"content": "Only text."}), choice({"audio": {"data": ""}}), "junk"]
    )
    assert found == type(found)(text="Only text.", spoken=None)


def test_wav_payload_keeps_its_own_rate() -> None:
    spoken = tone(0.5, 22050)
    payload = SpokenPayload(b64(audio_to_wav_bytes(spoken)), None, "", "choices[1].message.audio")
    audio = decode_spoken_payload(payload, pcm_rate=24000, source="s")
    assert audio.rate == 22050 and audio.num_samples == spoken.num_samples


def test_a_file_header_wins_over_a_pcm_label() -> None:
    wav = audio_to_wav_bytes(tone(0.25, 16000))
    audio = decode_spoken_payload(
        SpokenPayload(b64(wav), "pcm16", "", "x"), pcm_rate=24000, source="s"
    )
    assert audio.rate == 16000 and audio.num_samples == 4000


@pytest.mark.parametrize(("fmt", "requested"), [("pcm16", "wav"), (None, "wav"), (None, "pcm16")])
def test_headerless_payload_is_pcm16_at_the_configured_rate(
    fmt: str | None, requested: str
) -> None:
    raw = audio_to_pcm16(tone(0.5, 16000), 16000)
    payload = SpokenPayload(b64(raw), fmt, "", "x")
    assert decode_spoken_payload(
        payload, pcm_rate=16000, source="s", requested_format=requested
    ).duration == pytest.approx(0.5)
    default = decode_spoken_payload(payload, pcm_rate=24000, source="s", requested_format=requested)
    assert default.rate == 24000 and default.num_samples == 8000  # 24 kHz default: 1/3 s


@pytest.mark.parametrize(
    ("data", "fmt", "message"),
    [
        ("not base64!", None, "not base64"),
        (b64(b"\x01\x02\x03"), "pcm16", "odd length"),
        (b64(b"\x01\x02\x03\x04"), "mp3", "cannot decode"),
        (b64(b"RIFF" + b"\x00" * 8), None, "cannot decode"),
    ],
)
def test_undecodable_payloads_name_where_they_were(
    data: str, fmt: str | None, message: str
) -> None:
    payload = SpokenPayload(data, fmt, "", "choices[1].message.audio")
    with pytest.raises(AudioError, match=message) as caught:
        decode_spoken_payload(payload, pcm_rate=24000, source="endpoint m")
    assert "endpoint m (choices[1].message.audio)" in str(caught.value)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(-32768, 32767), min_size=1, max_size=400))
def test_pcm16_samples_decode_exactly(samples: list[int]) -> None:
    raw = np.asarray(samples, dtype="<i2").tobytes()
    if raw.startswith((b"RIFF", b"RIFX", b"RF64", b"FORM", b"fLaC", b"OggS", b"ID3")):
        return  # such bytes are read as that file; a random stream hits them almost never
    audio = decode_spoken_payload(SpokenPayload(b64(raw), None, "", "x"), pcm_rate=8000, source="s")
    assert audio.rate == 8000
    assert np.array_equal(audio.samples * 32768.0, np.asarray(samples, dtype=np.float32))
