"""Audio processing speed as multiples of real time (audio seconds per compute second).

One run over 60 s of a synthetic speech-like signal at 16 kHz:
1. mix_at_snr with 10 s of noise looped to length;
2. the connection chain: mu-law round trip + 3 % packet loss + gain fluctuation;
3. Silero VAD (ONNX) and DNSMOS, when the embedded models are installed.

Last line: ``audio_mix_x_realtime: N`` (mix_at_snr).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from voxeval.audio import Audio, degrade_connection, mix_at_snr
from voxeval.errors import ProviderUnavailable
from voxeval.providers import create_provider

RATE = 16000
SECONDS = 60.0


def speech_like(seconds: float, seed: int = 0) -> Audio:
    """Noise shaped by a syllable-rate (4 Hz) envelope: level statistics like speech."""
    rng = np.random.default_rng(seed)
    t = np.arange(round(seconds * RATE)) / RATE
    envelope = np.clip(np.sin(2 * np.pi * 4 * t + rng.uniform(0, 6.28)), 0, None) ** 2
    return Audio((0.3 * envelope * rng.standard_normal(t.size)).astype(np.float32), RATE, "bench")


def x_realtime(call: Callable[[], Any], seconds: float, repeats: int) -> float:
    call()  # warm-up (imports, model sessions, filter design caches)
    started = time.perf_counter()
    for _ in range(repeats):
        call()
    elapsed = (time.perf_counter() - started) / repeats
    return seconds / elapsed


def main() -> None:
    speech = speech_like(SECONDS)
    noise = speech_like(10.0, seed=1)
    mix = x_realtime(lambda: mix_at_snr(speech, noise, 5.0, seed=3), SECONDS, 20)
    print(f"mix_at_snr (60 s, noise looped): {mix:,.0f}x real time")
    chain = x_realtime(lambda: degrade_connection(speech, seed=3), SECONDS, 5)
    print(f"mu-law + packet loss + gain chain: {chain:,.0f}x real time")
    for kind, name, seconds in (("vad", "silero", SECONDS), ("mos", "dnsmos", 20.0)):
        try:
            provider = create_provider(kind, name)
        except ProviderUnavailable as exc:
            print(f"{kind} {name}: not run ({exc})")
            continue
        clip = speech.slice(0, seconds)
        run = provider.segments if kind == "vad" else provider.predict
        speed = x_realtime(lambda run=run, clip=clip: run(clip), seconds, 2)
        print(f"{kind} {name} ({seconds:.0f} s): {speed:,.1f}x real time (RTF {1 / speed:.3f})")
    print(f"audio_mix_x_realtime: {mix:.0f}")


if __name__ == "__main__":
    main()
