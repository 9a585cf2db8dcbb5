"""The ``webrtc`` system: an agent that listens on WebRTC, dialled as deployed (docs/webrtc.md).

The call runs on the wall clock (``clock: wall`` in the call record). The simulated caller's
line goes out as a real-time audio track (``voxeval.systems.webrtc_peer``); what comes back
on the agent's track is the agent track. WebRTC audio flows without pause (silence between
replies), so a reply is found by its level: it starts with the first 20 ms chunk louder than
``speech_level_dbfs`` (its latency is that arrival, measured here) and ends after
``reply_gap_ms`` of quieter audio. It goes on the line as it arrives while the caller's line
keeps going out, so the caller can barge in and the agent track shows where the agent stopped
(``voxeval.systems.live_audio_agent``).

The agent closing the connection (it hung up) after its last reply has played ends the call; a
failed connection, an offer answered with an error or not an SDP answer, or no connection
within ``connect_timeout_s`` is the agent's fault (``SystemFault``), scored as a failure.
The agent's tools run in its own backend (or over voxeval's tool service): this transport
carries audio only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from voxeval.config import SystemSpec
from voxeval.errors import ConfigError
from voxeval.providers.factory import ProviderSource
from voxeval.systems.base import CALL, SYSTEMS
from voxeval.systems.live_audio_agent import AGENT_RATE, LiveAudioAgent
from voxeval.systems.options import parse_options

if TYPE_CHECKING:
    from voxeval.benchmarks.scenario import Scenario
    from voxeval.benchmarks.tools import ToolRuntime
    from voxeval.systems.webrtc_peer import WebRTCPeer


class WebRTCOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # the agent's offer endpoint, e.g. a Pipecat runner's http://host:7860/api/offer
    url: str = Field(pattern=r"^https?://")
    request_data: dict[str, Any] = Field(default_factory=dict)  # sent with the offer
    connect_timeout_s: float = Field(default=15.0, gt=0)
    greeting_wait_s: float = Field(default=2.0, ge=0)  # how long the agent has to greet first
    speech_level_dbfs: float = Field(default=-45.0, lt=0)  # louder chunks are the agent speaking
    reply_gap_ms: float = Field(default=400.0, gt=0)  # quiet that ends a reply
    turn_timeout_s: float = Field(default=60.0, gt=0)  # longest reply being received
    # the caller plans its reactions to a reply (barge-in) for this long: its real length is
    # unknown while it arrives; caller speech this close to a reply's end: the agent yielded
    expected_reply_s: float = Field(default=3.0, gt=0)
    yield_window_s: float = Field(default=1.0, ge=0)


@SYSTEMS.register("webrtc")
class WebRTCSystem:
    """Holds live calls only; each call opens its own peer connection (``WebRTCAgent``)."""

    capabilities = frozenset({CALL})

    def __init__(self, name: str, options: WebRTCOptions) -> None:
        self.name = name
        self.options = options

    @classmethod
    def from_spec(cls, spec: SystemSpec, ctx: ProviderSource | None = None) -> WebRTCSystem:
        return cls(spec.name, parse_options(spec, WebRTCOptions))

    def identity(self) -> dict[str, Any]:
        return {"type": "webrtc", "url": self.options.url, "clock": "wall"}

    def open_call(self) -> WebRTCAgent:
        return WebRTCAgent(**self.options.model_dump())


class WebRTCAgent(LiveAudioAgent):
    """One call over WebRTC (a ``StreamingCallAgent`` on the wall clock)."""

    name = "webrtc"
    continuous_audio = True  # WebRTC sends silence between replies: quiet is counted in audio

    def __init__(
        self,
        url: str,
        *,
        request_data: dict[str, Any] | None = None,
        connect_timeout_s: float = 15.0,
        greeting_wait_s: float = 2.0,
        speech_level_dbfs: float = -45.0,
        reply_gap_ms: float = 400.0,
        turn_timeout_s: float = 60.0,
        expected_reply_s: float = 3.0,
        yield_window_s: float = 1.0,
    ) -> None:
        super().__init__(
            greeting_wait_s=greeting_wait_s,
            speech_level_dbfs=speech_level_dbfs,
            reply_gap_ms=reply_gap_ms,
            turn_timeout_s=turn_timeout_s,
            expected_reply_s=expected_reply_s,
            yield_window_s=yield_window_s,
        )
        self.url = url
        self.request_data = dict(request_data or {})
        self.connect_timeout_s = connect_timeout_s

    def _open(self, scenario: Scenario, tools: ToolRuntime) -> WebRTCPeer:
        try:
            from voxeval.systems.webrtc_peer import WebRTCPeer
        except ImportError as exc:  # aiortc is an optional extra
            raise ConfigError(
                "the webrtc system needs aiortc: pip install 'voxeval[webrtc]'"
            ) from exc
        peer = WebRTCPeer(self.url, rate=AGENT_RATE)
        self.link = peer  # closed with the call even when connecting fails
        peer.connect(
            {"voxeval_scenario_id": scenario.id, **self.request_data}, self.connect_timeout_s
        )
        return peer

    def _failure(self) -> str:
        return f"webrtc: the connection to {self.url} failed"


__all__ = ["WebRTCAgent", "WebRTCOptions", "WebRTCSystem"]
