from __future__ import annotations

import pytest

from voxeval.store.secrets import REDACTED, is_secret_field, redact_env_secrets, scrub


@pytest.mark.parametrize(
    "name",
    ["api_key", "apiKey", "API-KEY", "hf_token", "client_secret", "password", "Authorization"],
)
def test_secret_field_names(name: str) -> None:
    assert is_secret_field(name)


@pytest.mark.parametrize("name", ["max_tokens", "keywords", "model", "monkey", "api_key_env_x"])
def test_ordinary_field_names(name: str) -> None:
    # "api_key_env_x" has a "key" part, so it counts as secret-named; only its value decides
    assert is_secret_field(name) == (name == "api_key_env_x")


def test_scrub_keeps_env_var_names_and_non_strings() -> None:
    data = {
        "api_key": "sk-123",
        "api_key_env": "OPENAI_API_KEY",
        "token": 5,
        "nested": [{"secret": "hush"}],
        "max_tokens": 10,
    }
    assert scrub(data) == {
        "api_key": REDACTED,
        "api_key_env": "OPENAI_API_KEY",
        "token": 5,
        "nested": [{"secret": REDACTED}],
        "max_tokens": 10,
    }


def test_env_values_are_redacted_from_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-abcdef-42")
    assert redact_env_secrets("sent tok-abcdef-42 to x") == f"sent {REDACTED} to x"
