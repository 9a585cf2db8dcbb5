import numpy as np
import pytest

from tests.simulation.parties import ListAgent, ListCaller, NoTools, tone_voice
from voxeval.audio import Audio, rms, rms_db
from voxeval.audio.noise_environments import ENVIRONMENTS, environment_noise
from voxeval.errors import ConfigError
from voxeval.simulation.engine import run_call
from voxeval.simulation.latency import ComponentLatency, LatencyModel
from voxeval.simulation.perturbations import parse_conditions

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
        parse_conditions([{"name": "reverb"}])
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
