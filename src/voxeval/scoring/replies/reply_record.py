"""What reply metrics score (``ReplyRecord``) and the shared, lazily created scoring resources
(ASR for transcripts, judge, audio judge, MOS predictor, spoken-language identifier). Reply
metrics are ``Metric[ReplyRecord]`` registered with ``@metric(NAME, ...)``
(``voxeval.scoring.metric``)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, overload

from voxeval.audio import Audio
from voxeval.errors import HarnessFault, ProviderUnavailable
from voxeval.json_types import JSONObject
from voxeval.providers.asr.spoken_language import LanguageIdentifier
from voxeval.providers.base import ASR, MOS
from voxeval.scoring.judge import Judge
from voxeval.scoring.replies.checklist_settings import ChecklistJudging
from voxeval.scoring.replies.reply_language import LanguageVerdict
from voxeval.scoring.replies.transcripts import (
    TranscriptSet,
    TranscriptSettings,
    load_transcripts,
    save_transcripts,
    transcribe_k,
)


class AssertionLike(Protocol):
    """A deterministic check (see ``voxeval.benchmarks.wildspeech.spoken_query.Assertion``)."""

    @property
    def kind(self) -> str: ...
    @property
    def values(self) -> list[str]: ...
    @property
    def threshold(self) -> float: ...
    @property
    def tolerance(self) -> float: ...


@dataclass(frozen=True)
class ReplyRecord:
    """One stored reply to one spoken query. ``reply_text`` is the system's own text channel
    (None when it has none). ``unit_dir`` is where derived artifacts (transcripts) are kept."""

    item_id: str
    query: str
    reply_audio: Audio | None
    reply_text: str | None = None
    category: str = ""
    checklist: Sequence[str] = ()
    assertions: Sequence[AssertionLike] = ()
    expected_language: str = "en"
    unit_dir: Path | None = None
    seed: int = 0
    meta: dict[str, Any] = field(default_factory=dict)


_Resource = Literal["asr", "judge", "mos", "language_id", "audio_judge"]
NO_AUDIO_JUDGE = "no audio judge configured (set `audio_judge:`)"
_RecentKey = tuple[str, str, int]


class _Unavailable:
    """A resource whose factory said it is unavailable, and why."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


class ScoringResources:
    """Providers that metrics share, created on first use. A factory that raises
    ``ProviderUnavailable`` makes the metrics needing it report ``not_run`` with its reason."""

    def __init__(
        self,
        *,
        asr: Callable[[], ASR] | None = None,
        judge: Callable[[], Judge] | None = None,
        judge_unavailable: str = "no judge is configured (set `judge:` in the run config)",
        mos: Callable[[], MOS] | None = None,
        # the protocols hand their ASR model here (faster-whisper identifies languages too)
        language_id: Callable[[], LanguageIdentifier | ASR] | None = None,
        audio_judge: Callable[[], Judge] | None = None,
        transcript_settings: TranscriptSettings | None = None,
        checklist_judging: ChecklistJudging | None = None,
    ) -> None:
        self._factories: dict[str, Callable[[], ASR | Judge | MOS | LanguageIdentifier] | None] = {
            "asr": asr,
            "judge": judge,
            "mos": mos,
            "language_id": language_id,
            "audio_judge": audio_judge,
        }
        self._missing = {
            "asr": "no ASR is configured for scoring",
            "judge": judge_unavailable,
            "audio_judge": NO_AUDIO_JUDGE,
            "mos": "no MOS predictor is configured",
            "language_id": "no spoken-language identifier is configured",
        }
        self._made: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._transcripts_lock = threading.Lock()
        # The few most recent sets, so the metrics of one record share one decode even
        # without a unit folder; entries hold their audio so ids stay unique while cached.
        self._recent: OrderedDict[_RecentKey, tuple[Audio, TranscriptSet]] = OrderedDict()
        self._decoding: dict[_RecentKey, threading.Lock] = {}  # a lock per record being decoded
        self._languages: OrderedDict[_RecentKey, tuple[Audio, LanguageVerdict]] = OrderedDict()
        self.transcript_settings = transcript_settings or TranscriptSettings()
        # the checklist judge's setting (``checklist_settings.ChecklistJudging``; None: ours)
        self.checklist_judging = checklist_judging

    @overload
    def _get(self, what: Literal["asr"]) -> ASR: ...
    @overload
    def _get(self, what: Literal["judge", "audio_judge"]) -> Judge: ...
    @overload
    def _get(self, what: Literal["mos"]) -> MOS: ...
    @overload
    def _get(self, what: Literal["language_id"]) -> LanguageIdentifier: ...
    def _get(self, what: _Resource) -> ASR | Judge | MOS | LanguageIdentifier:
        with self._lock:
            if what not in self._made:
                factory = self._factories[what]
                if factory is None:
                    raise ProviderUnavailable(self._missing[what])
                try:
                    self._made[what] = factory()
                except ProviderUnavailable as exc:
                    # its message, raised anew each time: a kept exception would keep the
                    # frames of its traceback, and through them these resources and the
                    # run's models, in a reference cycle
                    self._made[what] = _Unavailable(str(exc))
            made = self._made[what]
        if isinstance(made, _Unavailable):
            raise ProviderUnavailable(made.reason)
        if made is None:
            raise ProviderUnavailable(self._missing[what])
        return made

    def asr(self) -> ASR:
        asr: ASR = self._get("asr")
        return asr

    def judge(self) -> Judge:
        judge: Judge = self._get("judge")
        return judge

    def audio_judge(self) -> Judge:
        """The audio-capable judge (a ``Judge`` with ``modality="audio"``)."""
        judge: Judge = self._get("audio_judge")
        return judge

    def mos(self) -> MOS:
        mos: MOS = self._get("mos")
        return mos

    def language_id(self) -> LanguageIdentifier:
        identifier: LanguageIdentifier = self._get("language_id")
        return identifier

    def reply_language(self, record: ReplyRecord) -> LanguageVerdict:
        """The spoken language of the record's reply audio against its expected language
        (the reply must have audio). Shared by the ``language`` metric and the judge gate."""
        audio = record.reply_audio
        if audio is None or audio.is_empty():
            raise ValueError(f"{record.item_id}: the reply has no audio to identify")
        identifier = self.language_id()
        key = (str(record.unit_dir), record.item_id, id(audio))
        with self._transcripts_lock:
            known = self._languages.get(key)
            if known is not None and known[1].expected == record.expected_language:
                return known[1]
        try:
            detected = identifier.identify_language(audio)
        except (ProviderUnavailable, HarnessFault):
            raise
        except Exception as exc:  # our scoring model failed, not the reply
            raise HarnessFault(
                f"spoken-language identification failed: {type(exc).__name__}: {exc}",
                component="language_id",
            ) from exc
        verdict = LanguageVerdict(record.expected_language, detected)
        with self._transcripts_lock:
            self._languages[key] = (audio, verdict)
            while len(self._languages) > 8:
                self._languages.popitem(last=False)
        return verdict

    def transcripts(self, record: ReplyRecord) -> TranscriptSet:
        """The record's k transcripts: read from ``transcripts.json`` when they were made with
        the same ASR and settings, else decoded now and stored there."""
        settings = TranscriptSettings(**{**self.transcript_settings.__dict__, "seed": record.seed})
        if record.reply_audio is None or record.reply_audio.is_empty():
            return transcribe_k(None, None, settings, {})  # type: ignore[arg-type]
        asr = self.asr()
        identity: dict[str, Any] = asr.identity()
        key = (str(record.unit_dir), record.item_id, id(record.reply_audio))
        with self._transcripts_lock:
            recent = self._recent.get(key)
            if recent is not None and recent[1].settings == settings:
                return recent[1]
            decoding = self._decoding.setdefault(key, threading.Lock())
        # One decode per record (its metrics share it); other records decode meanwhile, so a
        # remote scoring ASR gets as many requests at once as records are being scored.
        with decoding:
            try:
                with self._transcripts_lock:
                    recent = self._recent.get(key)
                    if recent is not None and recent[1].settings == settings:
                        return recent[1]
                stored = None
                if record.unit_dir is not None:
                    stored = load_transcripts(record.unit_dir, settings, identity)
                result = stored or _transcribe(asr, record.reply_audio, settings, identity)
                if stored is None and record.unit_dir is not None:
                    save_transcripts(record.unit_dir, result)
                with self._transcripts_lock:
                    self._recent[key] = (record.reply_audio, result)
                    while len(self._recent) > 8:
                        self._recent.popitem(last=False)
                return result
            finally:
                with self._transcripts_lock:
                    self._decoding.pop(key, None)


@contextmanager
def scoring_asr_faults() -> Iterator[None]:
    """Inside the block, a failure of the scoring ASR is our side's fault (the score stays
    pending), never a result about the system: any error but an unavailable provider or an
    already classified fault becomes a ``HarnessFault`` of the ``scoring_asr`` component."""
    try:
        yield
    except (ProviderUnavailable, HarnessFault):
        raise
    except Exception as exc:
        raise HarnessFault(
            f"scoring ASR failed: {type(exc).__name__}: {exc}", component="scoring_asr"
        ) from exc


def _transcribe(
    asr: ASR, audio: Audio, settings: TranscriptSettings, identity: JSONObject
) -> TranscriptSet:
    """``transcribe_k``, its failures classified by ``scoring_asr_faults``."""
    with scoring_asr_faults():
        return transcribe_k(asr, audio, settings, identity)
