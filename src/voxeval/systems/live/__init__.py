"""Systems reached over a live transport during a call: WebRTC, Pipecat pipelines, phone
media streams, the websocket bridges and OpenAI-Realtime-compatible endpoints."""
