"""Chat models: OpenAI-compatible chat (text and audio), local GGUF/SmolLM2, and turning raw
replies into checked values.
"""
