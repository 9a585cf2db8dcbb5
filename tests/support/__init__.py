"""Real local components for tests: headless Chromium, a throwaway PostgreSQL cluster and a
uvicorn server on 127.0.0.1."""
