import pytest

from voxeval.errors import ProviderUnavailable
from voxeval.systems.live.realtime_ws import RealtimeAgent


def test_remote_endpoint_needs_its_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VOXEVAL_TEST_RT_KEY", raising=False)
    with pytest.raises(ProviderUnavailable, match="VOXEVAL_TEST_RT_KEY"):
        RealtimeAgent(api_key_env="VOXEVAL_TEST_RT_KEY")


def test_local_endpoint_and_options(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOXEVAL_TEST_RT_KEY", "k")
    agent = RealtimeAgent(
        url="ws://127.0.0.1:9/v1/realtime", model="m", api_key_env="VOXEVAL_TEST_RT_KEY"
    )
    assert agent.url == "ws://127.0.0.1:9/v1/realtime?model=m"
    assert agent.headers["Authorization"] == "Bearer k"
    assert agent.clock == "wall" and agent.reports_latency
