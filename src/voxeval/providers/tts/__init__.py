"""Speech synthesis engines: Piper, Kokoro, espeak-ng, flite and OpenAI-compatible /audio/speech."""
