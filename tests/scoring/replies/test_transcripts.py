from __future__ import annotations

import json

import pytest

from tests.scoring.helpers import remote_resources, transcription
from voxeval.scoring import ReplyRecord, has_repeated_sentences

LOOP = "Thanks for watching. Thanks for watching. Thanks for watching."


def test_repeated_sentence_filter() -> None:
    assert has_repeated_sentences(LOOP)
    assert has_repeated_sentences("Hi there. Yes! yes. YES? Done.")  # case/punctuation-blind
    assert not has_repeated_sentences("Thanks. Thanks. Something else. Thanks.")
    assert not has_repeated_sentences("")
    assert has_repeated_sentences("A. A.", limit=2)


@pytest.mark.parametrize(
    "loop",
    [
        "Thank you.Thank you.Thank you.",  # no space after the full stop
        "Thank you, thank you, thank you",  # commas only
        "Thank you thank you Thank you",  # no punctuation at all
        "Thank you… Thank you… Thank you…",  # ellipsis character
        "Go home; GO HOME! go home",
        "Yes.Yes.Yes.",
        "It costs 3.5 dollars. It costs 3.5 dollars. It costs 3.5 dollars.",
        "Sure, here it is. Thanks for watching, thanks for watching thanks for watching",
    ],
)
def test_repeated_sentences_found_whatever_the_punctuation(loop: str) -> None:
    assert has_repeated_sentences(loop)


@pytest.mark.parametrize(
    "text",
    [
        "It costs 3.5 dollars. 3.5 dollars is fine.",  # a decimal point ends no sentence
        "That is very very very good.",  # a one-word repeat without full stops is emphasis
        "Thanks. Thanks. Something else. Thanks.",
        "Thank you, thank you.",
    ],
)
def test_ordinary_replies_are_not_loops(text: str) -> None:
    assert not has_repeated_sentences(text)


def test_k_transcripts_skip_hallucinated_candidates(openai_server, tone, tmp_path) -> None:
    openai_server.push(
        transcription("Paris is the capital."),  # greedy decode
        transcription(LOOP),
        transcription(LOOP),
        transcription("Paris is the capital city."),
        transcription("Paris is a capital."),
    )
    resources = remote_resources(openai_server)
    record = ReplyRecord(item_id="q1", query="capital?", reply_audio=tone, unit_dir=tmp_path)
    result = resources.transcripts(record)
    assert result.texts == (
        "Paris is the capital.",
        "Paris is the capital city.",
        "Paris is a capital.",
    )
    assert result.rejected == 2
    assert result.greedy == "Paris is the capital."
    assert len(openai_server.requests) == 5
    stored = json.loads((tmp_path / "transcripts.json").read_text())
    assert stored["rejected"] == 2 and len(stored["candidates"]) == 5
    # The second call reads transcripts.json and sends nothing.
    again = remote_resources(openai_server).transcripts(record)
    assert again.texts == result.texts
    assert len(openai_server.requests) == 5


def test_real_repetition_is_kept_when_no_clean_candidate(openai_server, tone) -> None:
    openai_server.push(*[transcription(LOOP) for _ in range(4)])
    resources = remote_resources(openai_server, k=2)
    resources.transcript_settings = type(resources.transcript_settings)(k=2, max_decodes=4)
    result = resources.transcripts(ReplyRecord(item_id="q", query="q", reply_audio=tone))
    assert result.texts == (LOOP, LOOP)
    assert result.rejected == 4 and result.filled_with_rejected == 2


def test_no_audio_gives_one_empty_transcript(openai_server) -> None:
    result = remote_resources(openai_server).transcripts(
        ReplyRecord(item_id="q", query="q", reply_audio=None)
    )
    assert result.texts == ("",) and result.no_audio
    assert openai_server.requests == []


def test_a_transcript_set_round_trips_through_its_dict_like_asdict() -> None:
    from dataclasses import asdict

    from voxeval.scoring.replies.transcripts import Candidate, TranscriptSet, TranscriptSettings

    made = TranscriptSet(
        texts=("hello there", "hello their"),
        greedy="hello there",
        candidates=(
            Candidate("hello there", 0.0, None, False),
            Candidate("hello their", 0.5, 7, False),
            Candidate("hi hi hi", 0.5, 8, True),
        ),
        rejected=1,
        filled_with_rejected=0,
        settings=TranscriptSettings(k=2, language=None, seed=3),
        asr={"provider": "whisper", "options": {"beam": [1, 2]}},
        no_audio=False,
    )
    as_dict = made.to_dict()
    assert as_dict == asdict(made)
    assert json.dumps(as_dict, sort_keys=True) == json.dumps(asdict(made), sort_keys=True)
    assert TranscriptSet.from_dict(json.loads(json.dumps(as_dict))) == made
    as_dict["asr"]["options"]["beam"].append(3)  # a copy: the set itself is unchanged
    assert made.asr == {"provider": "whisper", "options": {"beam": [1, 2]}}
