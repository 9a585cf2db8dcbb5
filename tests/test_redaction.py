from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxeval.redaction import (
    REDACTED,
    add_secrets,
    collect_config_secrets,
    is_credential_field,
    is_secret_field,
    redact_env_secrets,
    redact_text,
    register_config_secrets,
    registered_secrets,
    scrub,
    without_url_credentials,
)


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


def test_config_secret_set_is_built_from_references_and_literals(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JUDGE_CRED", "judge-value-123456")
    monkeypatch.setenv("HDR_VALUE", "Bearer hdr-value-abcdef")
    config = {
        "judge": {"provider": "openai", "api_key_env": "JUDGE_CRED", "max_tokens": 64,
                  "base_url": "https://bob:pw-987654@llm.example/v1?key=q-key-555555&x=1",
                  "extra_body": {"metadata": {"session_token": "xb-token-777777"},
                                 "sort_key": "item_id", "bos_token": "<|im_start|>"}},
        "systems": [{"name": "web", "type": "http", "headers_env": {"Authorization": "HDR_VALUE"},
                     "headers": {"X-Api-Key": "lit-key-888888", "Accept": "audio/wav"}}],
        "suite": "wild-mini",
    }  # fmt: skip
    assert collect_config_secrets(config) == {
        "judge-value-123456",
        "Bearer hdr-value-abcdef",
        "hdr-value-abcdef",
        "bob",
        "pw-987654",
        # the forms URL user-info takes in a Basic Authorization header (issue 37, point 8)
        "bob:pw-987654",
        "Ym9iOnB3LTk4NzY1NA==",
        "Ym9iOnB3LTk4NzY1NA",
        "Basic Ym9iOnB3LTk4NzY1NA==",
        "Ym9iOnB3LTk4NzY1NA%3D%3D",
        "q-key-555555",
        "xb-token-777777",
        "lit-key-888888",
    }


def test_credential_fields_are_narrower_than_secret_fields() -> None:
    for name in ("api_key", "accessKey", "X-Api-Key", "session_token", "Authorization", "password"):
        assert is_credential_field(name), name
    for name in ("sort_key", "key", "voice_key", "max_tokens", "keywords"):
        assert not is_credential_field(name), name


def test_registered_values_are_redacted_everywhere_including_json_and_truncations() -> None:
    secret = "reg-Secret-Value-0123456789"
    register_config_secrets({"api_key": secret})
    assert secret in registered_secrets()
    assert redact_text(f"echo {secret}!") == f"echo {REDACTED}!"
    # a server body cut short in the middle of the key: the readable part goes too
    assert redact_text(f"HTTP 500: bad key {secret[:15]}") == f"HTTP 500: bad key {REDACTED}"
    # a key-like prefix shorter than 12 characters is ordinary text
    assert redact_text("reg-Secret-") == "reg-Secret-"
    text = json.dumps({"msg": f"q\u00e9 {secret}"})
    assert secret not in redact_text(text) and json.loads(redact_text(text))


def test_url_credentials_are_redacted_from_any_text_whatever_their_length() -> None:
    text = "POST https://al:pw@h.example/v1/x?token=t0k&api-version=2 failed; ssh://git@host/r"
    assert redact_text(text) == (
        f"POST https://{REDACTED}@h.example/v1/x?token={REDACTED}&api-version=2 failed; "
        f"ssh://{REDACTED}@host/r"
    )
    assert redact_text("see https://example.com/a?page=2&sig=abc") == (
        f"see https://example.com/a?page=2&sig={REDACTED}"
    )
    assert without_url_credentials("https://u:p@h:8/v1?key=K&x=1") == "https://h:8/v1?x=1"
    assert without_url_credentials("http://h/v1") == "http://h/v1"


def test_short_values_are_not_redacted_by_value() -> None:
    before = set(registered_secrets())
    register_config_secrets({"api_key": "abc12"})
    assert registered_secrets() == before
    assert redact_text("abc12 stays") == "abc12 stays"


LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.sampled_from(["plain", "uses sk-live-7f3a9c2e41 here", "https://u:pw@h/p", "x=1"]),
)
RECORDS = st.recursive(
    LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["value", "details", "api_key", "note"]), inner, max_size=3
        )
    ),
    max_leaves=12,
)


def reference_scrub(data: object) -> object:
    """What ``scrub`` does, written plainly: the fast path for leaves must not change it."""
    if isinstance(data, dict):
        return {
            k: REDACTED
            if is_secret_field(k) and isinstance(v, str) and v and not v.isupper()
            else reference_scrub(v)
            for k, v in data.items()
        }
    if isinstance(data, list | tuple):
        return [reference_scrub(v) for v in data]
    if isinstance(data, str):
        return redact_text(data)
    return data


@settings(max_examples=200, deadline=None)
@given(record=RECORDS)
def test_scrub_redacts_strings_and_keeps_every_other_leaf_as_it_is(record: object) -> None:
    add_secrets(["sk-live-7f3a9c2e41"])
    cleaned = scrub(record)
    assert cleaned == reference_scrub(record)
    assert "sk-live-7f3a9c2e41" not in json.dumps(cleaned)
    assert "u:pw@" not in json.dumps(cleaned)
