"""Live simulated calls."""

from voxeval.benchmarks.tools import ToolRuntime, ToolSpec, load_tool_specs, parse_tool_specs
from voxeval.providers.voices.speech_renderer import SpeechRenderer
from voxeval.simulation import callers
from voxeval.simulation.bus import AudioBus
from voxeval.simulation.clock import VirtualClock, WallClock
from voxeval.simulation.engine import CallResult, EngineSettings, run_call
from voxeval.simulation.latency import ComponentLatency, LatencyModel
from voxeval.simulation.parties import (
    AgentTurn,
    CallAgent,
    Caller,
    CallerBase,
    CallerTurn,
    ToolCallRecord,
)
from voxeval.simulation.personas import PERSONAS, Persona
from voxeval.simulation.perturbations import Condition, PerturbationBase, parse_conditions
from voxeval.simulation.recorder import load_call, record_call
from voxeval.simulation.simulation_config import SimulationConfig, parse_simulation
from voxeval.simulation.timeline import EndEvent, SpeakerSegment, Timeline, ToolEvent
from voxeval.simulation.turn_detection import EnergyVAD, TurnDetector, Utterance

__all__ = [
    "PERSONAS",
    "AgentTurn",
    "AudioBus",
    "CallAgent",
    "CallResult",
    "Caller",
    "CallerBase",
    "CallerTurn",
    "ComponentLatency",
    "Condition",
    "EndEvent",
    "EnergyVAD",
    "EngineSettings",
    "LatencyModel",
    "Persona",
    "PerturbationBase",
    "SimulationConfig",
    "SpeakerSegment",
    "SpeechRenderer",
    "Timeline",
    "ToolCallRecord",
    "ToolEvent",
    "ToolRuntime",
    "ToolSpec",
    "TurnDetector",
    "Utterance",
    "VirtualClock",
    "WallClock",
    "callers",
    "load_call",
    "load_tool_specs",
    "parse_conditions",
    "parse_simulation",
    "parse_tool_specs",
    "record_call",
    "run_call",
]
