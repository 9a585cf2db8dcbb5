"""The ``webrtc`` system: an agent that listens on WebRTC, dialled as deployed (docs/webrtc.md).

The call runs on the wall clock (``clock: wall`` in the call record). The simulated caller's
line goes out as a real-time audio track (``voxeval.systems.live.webrtc_peer``); what comes back
on the agent's track is the agent track. WebRTC audio flows without pause (silence between
replies), so a reply is found by its level: it starts with the first 20 ms chunk louder than
``speech_level_dbfs`` (its latency is that arrival, measured here) and ends after
``reply_gap_ms`` of quieter audio. It goes on the line as it arrives while the caller's line
keeps going out, so the caller can barge in and the agent track shows where the agent stopped
(``voxeval.systems.live.live_audio_agent``).

The agent closing the connection (it hung up) after its last reply has played ends the call; a
failed connection, an offer answered with an error or not an SDP answer, or no connection
within ``connect_timeout_s`` is the agent's fault (``SystemFault``), scored as a failure.
The agent's tools run in its own backend (or over voxeval's tool service): this transport
carries audio only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Unpack

from pydantic import Field

from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject
from voxeval.systems.base import SYSTEMS
from voxeval.systems.live.live_audio_agent import AGENT_RATE, ListeningSettings, LiveAudioAgent
from voxeval.systems.live.live_audio_system import LiveAudioOptions, LiveAudioSystem

if TYPE_CHECKING:
    from voxeval.benchmarks.eva.scenario import Scenario
    from voxeval.benchmarks.tools import ToolRuntime
    from voxeval.systems.live.webrtc_peer import WebRTCPeer


class WebRTCOptions(LiveAudioOptions):
    # the agent's offer endpoint, e.g. a Pipecat runner's http://host:7860/api/offer
    url: str = Field(pattern=r"^https?://")
    request_data: dict[str, Any] = Field(default_factory=dict)  # sent with the offer
    connect_timeout_s: float = Field(default=15.0, gt=0)


class WebRTCAgent(LiveAudioAgent):
    """One call over WebRTC (a ``StreamingCallAgent`` on the wall clock)."""

    name = "webrtc"
    continuous_audio = True  # WebRTC sends silence between replies: quiet is counted in audio

    def __init__(
        self,
        url: str,
        *,
        request_data: JSONObject | None = None,
        connect_timeout_s: float = 15.0,
        **listening: Unpack[ListeningSettings],
    ) -> None:
        super().__init__(**listening)
        self.url = url
        self.request_data = dict(request_data or {})
        self.connect_timeout_s = connect_timeout_s

    def _open(self, scenario: Scenario, tools: ToolRuntime) -> WebRTCPeer:
        try:
            from voxeval.systems.live.webrtc_peer import WebRTCPeer
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


@SYSTEMS.register("webrtc")
class WebRTCSystem(LiveAudioSystem[WebRTCOptions]):
    """Holds live calls only; each call opens its own peer connection (``WebRTCAgent``)."""

    agent_class = WebRTCAgent
    options_model = WebRTCOptions

    def identity(self) -> JSONObject:
        return {"type": "webrtc", "url": self.options.url, "clock": "wall"}
