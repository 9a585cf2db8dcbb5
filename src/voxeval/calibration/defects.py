"""The catalogue of injected defects: which metric each one must make fail, the expected
label of every dimension of that metric (True flagged, False not, None either way) and how
plain the defect is: ``obvious`` (a judge that reads the call at all should flag it) or
``subtle`` (one character, one value or one turn off: what tells a careful judge apart)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from voxeval.calibration import text_defects
from voxeval.calibration.text_defects import Injector


@dataclass(frozen=True)
class Defect:
    name: str
    metric: str
    description: str
    dimensions: dict[str, bool | None]
    inject: Injector | None = None  # None: built by the audio set (speech_defects)
    severity: Literal["obvious", "subtle"] = "obvious"


DEFECTS: dict[str, Defect] = {
    d.name: d
    for d in (
        Defect(
            "fabricated_tool_parameter",
            "faithfulness",
            "the agent's verification call carries a value the caller never gave",
            {
                "fabricated_tool_parameters": True,
                "misrepresented_tool_results": False,
                "policy_violations": None,
                "failure_to_disambiguate": None,
                "hallucination": None,
            },
            text_defects.fabricated_tool_parameter,
            "subtle",
        ),
        Defect(
            "misread_tool_result",
            "faithfulness",
            "the agent states an amount or code one character off what its tool returned",
            {
                "fabricated_tool_parameters": False,
                "misrepresented_tool_results": True,
                "policy_violations": False,
                "failure_to_disambiguate": None,
                "hallucination": None,
            },
            text_defects.misread_tool_result,
            "subtle",
        ),
        Defect(
            "skipped_policy_step",
            "faithfulness",
            "the agent serves the caller without the verification its policy requires",
            {
                "fabricated_tool_parameters": False,
                "misrepresented_tool_results": False,
                "policy_violations": True,
                "failure_to_disambiguate": None,
                "hallucination": None,
            },
            text_defects.skipped_policy_step,
        ),
        Defect(
            "redundant_question",
            "conversation_progression",
            "the agent asks again for the request and the details already given",
            {
                "unnecessary_tool_calls": False,
                "information_loss": True,
                "redundant_statements": None,
                "question_quality": None,
            },
            text_defects.redundant_question,
        ),
        Defect(
            "verbose_turns",
            "conciseness",
            "every agent turn padded with filler and tool results read out field by field",
            {
                "verbosity_or_filler": True,
                "excess_information_density": None,
                "over_enumeration": True,
                "disproportionate_detail": None,
            },
            text_defects.verbose_turns,
        ),
        Defect(
            "one_enumerated_turn",
            "conciseness",
            "a single agent turn also reads out every field its tool returned",
            {
                "verbosity_or_filler": None,
                "excess_information_density": None,
                "over_enumeration": True,
                "disproportionate_detail": None,
            },
            text_defects.one_enumerated_turn,
            "subtle",
        ),
        Defect(
            "unspeakable_text",
            "speakability",
            "one agent turn written as markdown with bullets, a raw id and a URL",
            {},
            text_defects.unspeakable_text,
        ),
        Defect(
            "raw_id_in_backticks",
            "speakability",
            "one agent turn, otherwise spoken well, ends with a record id in backticks",
            {},
            text_defects.raw_id_in_backticks,
            "subtle",
        ),
        Defect(
            "abandoned_goal",
            "user_behavioural_fidelity",
            "the simulated caller hangs up before its goal is done, for no reason in its goal",
            {
                "extra_modifications": False,
                "premature_ending": True,
                "missing_information": None,
                "duplicate_modifications": False,
                "decision_tree_violation": None,
            },
            text_defects.abandoned_goal,
        ),
        Defect(
            "mispronounced_entity",
            "agent_speech_fidelity",
            "one agent turn's audio says an entity one character off its intended text",
            {},
            severity="subtle",
        ),
    )
}


def defects_for(metrics: list[str]) -> list[Defect]:
    return [d for d in DEFECTS.values() if d.metric in metrics]
