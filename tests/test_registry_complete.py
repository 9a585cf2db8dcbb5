"""Every built-in component stays registered when modules move between packages (issue 41:
the registry imports subpackages recursively, so a module moved into a subfolder still
registers what it holds). The names below were captured before the folders were split."""

from __future__ import annotations

import json
import subprocess
import sys

from voxeval import registry

EXPECTED: dict[str, frozenset[str]] = {
    "asr": frozenset(["openai", "whisper-base", "whisper-tiny-en"]),
    "audio_llm": frozenset(["openai"]),
    "caller": frozenset(["llm", "scripted"]),
    "llm": frozenset(["gguf", "openai", "smollm2"]),
    "metric": frozenset(
        [
            "agent_backchannel_rate",
            "agent_speech_fidelity",
            "agent_speech_fidelity_asr",
            "assertions",
            "authentication_success",
            "backchannel_rate",
            "backchannel_yield_rate",
            "barge_in_handling_rate",
            "checklist",
            "conciseness",
            "content_density",
            "conversation_finished",
            "conversation_progression",
            "duration",
            "faithfulness",
            "fallback_nudge_rate",
            "false_end_of_turn_rate",
            "false_yield_rate",
            "interruption_uptake",
            "interruption_uptake_judge",
            "key_entity_accuracy",
            "language",
            "mos",
            "pre_tool_speech_rate",
            "response_latency",
            "rubric",
            "rubric_turns",
            "speakability",
            "speaking_rate",
            "stt_wer",
            "talk_over_ratio",
            "task_completion",
            "tool_call_validity",
            "turn_taking",
            "user_behavioural_fidelity",
            "user_speech_fidelity",
            "user_speech_fidelity_asr",
            "wer",
            "yield_latency",
        ]
    ),
    "mos": frozenset(["distillmos", "dnsmos"]),
    "perturbation": frozenset(["accent", "connection", "noise", "persona", "playback", "reverb"]),
    "protocol": frozenset(["live_call", "multi_turn", "single_turn"]),
    "suite": frozenset(
        ["clinic-calls", "helpdesk-calls", "mtalk-mini", "utility-calls", "wild-mini"]
    ),
    "system": frozenset(
        [
            "cascade",
            "http",
            "hybrid",
            "openai-audio",
            "openai-realtime",
            "phone-stream",
            "pipecat",
            "replay",
            "scripted",
            "webrtc",
            "websocket",
        ]
    ),
    "tts": frozenset(["espeak", "flite", "kokoro", "openai", "piper"]),
    "vad": frozenset(["pysilero", "silero"]),
}


def test_every_builtin_name_is_still_registered() -> None:
    # A fresh interpreter: tests in this process may have registered components of their own.
    script = (
        "import json; from voxeval import registry; registry.load_all(); "
        "print(json.dumps({k: sorted(v) for k, v in registry._REGISTRY.items()}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    found = json.loads(out.strip().splitlines()[-1])
    assert {kind: frozenset(found.get(kind, [])) for kind in EXPECTED} == EXPECTED
    assert set(found) == set(EXPECTED)


def test_builtin_packages_are_walked_into_subpackages(tmp_path, monkeypatch) -> None:
    # A module two folders down registers its component on first lookup.
    package = tmp_path / "i41_walk_pkg"
    (package / "inner").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "inner" / "__init__.py").write_text("")
    (package / "inner" / "deep.py").write_text(
        "from voxeval.registry import register\n"
        "@register('i41-walk', 'deep')\n"
        "def deep():\n    return 1\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(registry._BUILTIN_PACKAGES, "i41-walk", ("i41_walk_pkg",))
    assert registry.lookup("i41-walk", "deep")() == 1
