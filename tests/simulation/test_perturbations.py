import numpy as np
import pytest

from tests.simulation.parties import ListAgent, ListCaller, NoTools, tone_voice
from voxeval.audio import Audio, rms, rms_db
from voxeval.audio.noise_environments import ENVIRONMENTS, environment_noise
from voxeval.errors import ConfigError
from voxeval.simulation.engine import run_call
from voxeval.simulation.latency import ComponentLatency, LatencyModel
from voxeval.simulation.line import ContinuousNoise, LineEffect
from voxeval.simulation.perturbations import (
    CallerAudioTransform,
    Condition,
    LineEffectPerturbation,
    PerturbationBase,
    PlaybackPerturbation,
    ReverbPerturbation,
    parse_conditions,
)

FIXED = LatencyModel(agent=ComponentLatency(kind="fixed", ms=800))


def speech() -> Audio:
    return tone_voice("one two three four five")


def test_every_environment_is_seeded_and_distinct() -> None:
    assert len(ENVIRONMENTS) == 8
    first = {name: environment_noise(name, 1.0, seed=1) for name in ENVIRONMENTS}
    for name, audio in first.items():
        assert audio == environment_noise(name, 1.0, seed=1)
        assert not np.array_equal(audio.samples, environment_noise(name, 1.0, seed=2).samples)
        assert audio.duration == pytest.approx(1.0)


def test_conditions_parse_compose_and_are_seeded() -> None:
    conditions = parse_conditions(
        [
            {"name": "noise", "environment": "street", "snr_db": 10},
            {"condition": "bad-line", "apply": [{"name": "noise"}, {"name": "connection"}]},
            {"name": "persona", "persona": "elderly_slow"},
            {"name": "accent", "accent": "scottish", "gender": "female"},
        ]
    )
    assert [c.name for c in conditions] == [
        "clean",
        "noise-street-10db",
        "bad-line",
        "persona-elderly_slow",
        "accent-scottish",
    ]
    assert conditions[0].transform(1) is None and conditions[0].line_effects(1) == []
    assert conditions[3].persona == "elderly_slow" and conditions[3].transform(1) is None
    assert conditions[4].voice == "female,adult,scottish"
    # noise and connection act on the caller's whole line in a call, not per utterance
    assert conditions[2].transform(7) is None

    def line(effects, start=0):  # type: ignore[no-untyped-def]
        out = speech().samples
        for effect in effects:
            effect.calibrate(rms(speech()))
            out = effect.apply(out, start, 16000)
        return out

    a, b = conditions[2].line_effects(7), conditions[2].line_effects(7)
    assert np.array_equal(line(a), line(b))
    assert not np.array_equal(line(a), line(conditions[2].line_effects(8)))  # other call
    assert not np.array_equal(line(a), line(conditions[2].line_effects(7), 16000))  # later
    # the noise under the line is 10 dB below the caller's speech level
    (noise,) = conditions[1].line_effects(3)
    noise.calibrate(rms(speech()))
    alone = noise.apply(np.zeros(16000 * 10, np.float32), 0, 16000)  # one noise block
    snr = rms_db(speech()) - rms_db(Audio(alone, 16000))
    assert snr == pytest.approx(10.0, abs=0.1)


def test_bad_perturbations_are_reported() -> None:
    with pytest.raises(ConfigError, match="environment"):
        parse_conditions([{"name": "noise", "environment": "moon"}])
    with pytest.raises(ConfigError, match="unknown perturbation"):
        parse_conditions([{"name": "echo-chamber"}])
    with pytest.raises(ConfigError, match="twice"):
        parse_conditions([{"name": "connection"}, {"name": "connection"}])


def test_perturbations_touch_only_the_caller_track() -> None:
    (clean, noisy) = parse_conditions([{"name": "noise", "environment": "coffee_shop"}])

    def run(condition):  # type: ignore[no-untyped-def]
        return run_call(
            None,
            ListCaller("i need help", ["thanks"]),
            ListAgent(["a b c"]),
            NoTools(),
            mode="audio",
            latency_model=FIXED,
            caller_voice=tone_voice,
            agent_voice=tone_voice,
            line_effects=condition.line_effects(5),
            seed=5,
        )

    base, perturbed, again = run(clean), run(noisy), run(noisy)
    assert base.assistant_track == perturbed.assistant_track
    assert base.user_track != perturbed.user_track
    assert perturbed.user_track == again.user_track  # seeded
    assert [s.start for s in base.timeline.segments] == [
        s.start for s in perturbed.timeline.segments
    ]


def test_room_and_playback_conditions_parse_with_their_options() -> None:
    conditions = parse_conditions(
        [
            {"name": "reverb"},
            {"name": "reverb", "room": "hall", "rt60_s": 1.2, "distance_m": 4},
            {"name": "playback"},
            {"name": "playback", "device": "laptop", "room": "none"},
            {"condition": "far-noisy", "apply": [{"name": "reverb"}, {"name": "noise"}]},
        ]
    )
    assert [c.name for c in conditions[1:]] == [
        "reverb-living_room",
        "reverb-hall-1.2s-4m",
        "playback-phone-small_office",
        "playback-laptop",
        "far-noisy",
    ]
    assert conditions[2].perturbations[0].setup.rt60_s == 1.2
    assert conditions[4].perturbations[0].setup is None  # played back without a room
    for bad, match in [
        ({"name": "reverb", "room": "cave"}, "unknown room"),
        ({"name": "reverb", "room": "car", "distance_m": 5}, "distance_m"),
        ({"name": "reverb", "tail": "fade"}, "tail"),
        ({"name": "reverb", "room": "car", "rt60_s": 2.0}, "image order"),
        ({"name": "playback", "device": "gramophone"}, "unknown device"),
        ({"name": "playback", "room": "none", "distance_m": 1}, "need a room"),
    ]:
        with pytest.raises(ConfigError, match=match):
            parse_conditions([bad])


def test_a_caller_keeps_their_place_in_the_room_for_the_whole_call() -> None:
    (_, reverb) = parse_conditions([{"name": "reverb", "room": "small_office"}])
    call = reverb.transform(7)
    assert call is not None
    first, second = call(speech()), call(speech())
    assert first == second  # utterance 2 is picked up from the same place as utterance 1
    assert first.num_samples > speech().num_samples  # the room rings on after the words
    other_call = reverb.transform(8)
    assert other_call is not None
    assert other_call(speech()) != first


def test_reverb_composes_with_noise_added_at_the_microphone() -> None:
    (_, far_noisy) = parse_conditions(
        [
            {
                "condition": "far-noisy",
                "apply": [
                    {"name": "reverb", "room": "small_office", "distance_m": 2},
                    {"name": "noise", "environment": "street", "snr_db": 10},
                ],
            }
        ]
    )
    # the room acts on each utterance; the noise runs on the whole line after it
    call = far_noisy.transform(3)
    assert isinstance(call, CallerAudioTransform)
    (room,) = call.perturbations
    assert isinstance(room, ReverbPerturbation)
    heard = call(speech())
    reverberant = room.apply(speech(), int(call.call_seeds[0]))
    assert heard == reverberant
    (noise,) = far_noisy.line_effects(3)
    noise.calibrate(rms(reverberant))
    # over one whole 10 s noise block the line's noise sits exactly 10 dB under the speech
    silence = np.zeros(10 * reverberant.rate, np.float32)
    line_noise = Audio(noise.apply(silence, 0, reverberant.rate), reverberant.rate)
    assert rms_db(reverberant) - rms_db(line_noise) == pytest.approx(10.0, abs=0.01)
    # a second utterance: same room, so the same reverberant speech
    assert call(speech()) == heard


def test_playback_changes_what_the_agent_hears_only() -> None:
    (clean, played) = parse_conditions([{"name": "playback", "device": "phone"}])
    assert isinstance(played.perturbations[0], PlaybackPerturbation)

    def run(condition):  # type: ignore[no-untyped-def]
        return run_call(
            None,
            ListCaller("i need help", ["thanks"]),
            ListAgent(["a b c"]),
            NoTools(),
            mode="audio",
            latency_model=FIXED,
            caller_voice=tone_voice,
            agent_voice=tone_voice,
            caller_transform=condition.transform(5),
            seed=5,
        )

    base, perturbed, again = run(clean), run(played), run(played)
    agent = lambda r: [  # noqa: E731
        (s.intended_text, round(s.end - s.start, 3))
        for s in r.timeline.segments
        if s.speaker == "assistant"
    ]
    assert agent(base) == agent(perturbed)  # the agent says the same, for as long
    assert base.user_track != perturbed.user_track
    assert perturbed.user_track == again.user_track  # seeded
    # the agent hears the room ring out after each caller turn, so it answers a little later
    starts = lambda r: [s.start for s in r.timeline.segments if s.speaker == "assistant"]  # noqa: E731
    assert all(p >= b for p, b in zip(starts(perturbed), starts(base), strict=True))


class SeedRecorder(PerturbationBase):
    """A plugin perturbation with only the required members: it notes each seed it gets."""

    label = "seed-recorder"

    def __init__(self) -> None:
        self.seeds: list[int] = []

    def apply(self, audio: Audio, seed: int) -> Audio:
        self.seeds.append(seed)
        return audio


class PlacedOnce(SeedRecorder):
    per_call = True


class Hum(SeedRecorder):
    """Acts on the whole line in a call."""

    def line_effect(self, seed: int) -> LineEffect:
        return ContinuousNoise("street", 20.0, seed)


def test_a_plugin_perturbation_is_seeded_per_utterance_unless_it_declares_per_call() -> None:
    plain, placed = SeedRecorder(), PlacedOnce()
    assert (plain.per_call, placed.per_call) == (False, True)
    transform = CallerAudioTransform([plain, placed], seed=11)
    for _ in range(3):
        transform(speech())
    assert len(set(plain.seeds)) == 3  # a fresh seed for each utterance
    assert len(placed.seeds) == 3 and len(set(placed.seeds)) == 1  # one for the call


def test_a_perturbation_with_a_line_effect_acts_on_the_line_not_on_each_utterance() -> None:
    hum, plain = Hum(), SeedRecorder()
    assert isinstance(hum, LineEffectPerturbation)
    assert not isinstance(plain, LineEffectPerturbation)
    condition = Condition("hum", (hum, plain))
    transform = condition.transform(5)
    assert transform is not None and transform.perturbations == [plain]
    effects = condition.line_effects(5)
    assert len(effects) == 1 and isinstance(effects[0], ContinuousNoise)
    assert effects[0].environment == "street" and effects[0].snr_db == 20.0
    assert Condition("plain", (plain,)).line_effects(5) == []
