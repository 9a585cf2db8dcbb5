"""Metrics: each takes a typed record and returns a ``Score``; importing this package
registers the built-in metrics."""

from voxeval.scoring.calls.call_diagnostics import (
    authentication_success,
    conversation_finished,
    fallback_nudge_rate,
    key_entity_accuracy,
    pre_tool_speech_rate,
    response_latency,
    stt_wer,
    tool_call_validity,
)
from voxeval.scoring.calls.call_turns import CallTurns, number_turns
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.task_completion import compare_final_state, task_completion
from voxeval.scoring.calls.turn_taking import (
    latency_score,
    turn_taking,
    turn_taking_score,
)
from voxeval.scoring.dialogues.content_density import content_density, judge_content_density
from voxeval.scoring.dialogues.dialogue_record import DialogueRecord, DialogueScoringResources
from voxeval.scoring.dialogues.dialogue_replies import DialogueReplies
from voxeval.scoring.dialogues.rubric import rubric, rubric_turns
from voxeval.scoring.judge import (
    Judge,
    JudgeOutputError,
    JudgeResult,
    JudgeTemplate,
    parse_score_line,
)
from voxeval.scoring.metric import METRICS, Metric
from voxeval.scoring.metric_runner import run_metric, run_metrics
from voxeval.scoring.replies.assertions import assertion_score, best_match, check, numbers_in
from voxeval.scoring.replies.audio_metrics import (
    duration_score,
    language_score,
    mos_score,
    speaking_rate_score,
    wer_score,
)
from voxeval.scoring.replies.checklist import CHECKLIST_TEMPLATE, checklist_score, format_checklist
from voxeval.scoring.replies.reply_record import ReplyRecord, ScoringResources
from voxeval.scoring.replies.transcripts import (
    TRANSCRIPTS_FILE,
    TranscriptSet,
    TranscriptSettings,
    has_repeated_sentences,
    transcribe_k,
)
from voxeval.scoring.score import Score
from voxeval.scoring.text.text_normaliser import normalise_english

__all__ = [
    "CHECKLIST_TEMPLATE",
    "METRICS",
    "TRANSCRIPTS_FILE",
    "CallTurns",
    "DialogueRecord",
    "DialogueReplies",
    "DialogueScoringResources",
    "Judge",
    "JudgeOutputError",
    "JudgeResult",
    "JudgeTemplate",
    "LiveCallRecord",
    "Metric",
    "ReplyRecord",
    "Score",
    "ScoringResources",
    "TranscriptSet",
    "TranscriptSettings",
    "assertion_score",
    "authentication_success",
    "best_match",
    "check",
    "checklist_score",
    "compare_final_state",
    "content_density",
    "conversation_finished",
    "duration_score",
    "fallback_nudge_rate",
    "format_checklist",
    "has_repeated_sentences",
    "judge_content_density",
    "key_entity_accuracy",
    "language_score",
    "latency_score",
    "mos_score",
    "normalise_english",
    "number_turns",
    "numbers_in",
    "parse_score_line",
    "pre_tool_speech_rate",
    "response_latency",
    "rubric",
    "rubric_turns",
    "run_metric",
    "run_metrics",
    "speaking_rate_score",
    "stt_wer",
    "task_completion",
    "tool_call_validity",
    "transcribe_k",
    "turn_taking",
    "turn_taking_score",
    "wer_score",
]
