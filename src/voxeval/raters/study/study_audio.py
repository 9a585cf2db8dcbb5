"""Stimulus files of a study: every clip a page plays is copied into the study's ``audio/``
folder as WAV, so the app serves only its own files and the study survives the run being
moved or deleted. Durations are measured from the written files, never taken from metadata."""

from __future__ import annotations

import shutil
from pathlib import Path

import soundfile

from voxeval.audio import Audio, read_audio, write_audio
from voxeval.errors import AudioError, ConfigError
from voxeval.raters.study.study_files import AUDIO_DIR
from voxeval.store.layout import safe_name


class StudyAudio:
    """Writes stimuli under ``<study>/audio/<item>/<stimulus>.wav``."""

    def __init__(self, study_dir: Path) -> None:
        self.study_dir = study_dir

    def _target(self, item_id: str, stimulus_id: str) -> tuple[Path, str]:
        relative = f"{AUDIO_DIR}/{safe_name(item_id)}/{safe_name(stimulus_id)}.wav"
        target = self.study_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        return target, relative

    def copy(self, source: Path, item_id: str, stimulus_id: str, where: str) -> tuple[str, float]:
        """Copy ``source`` (converted to WAV unless it is one); ``where`` names the run file
        and field the path came from, for the error when it is missing or unreadable."""
        if not source.is_file():
            raise ConfigError(f"{where}: audio file not found: {source}")
        target, relative = self._target(item_id, stimulus_id)
        try:
            if source.suffix.lower() == ".wav":
                shutil.copyfile(source, target)  # the exact bytes the system produced
            else:
                write_audio(read_audio(source), target)
            duration = float(soundfile.info(str(target)).duration)
        except (AudioError, RuntimeError, soundfile.LibsndfileError) as exc:
            raise ConfigError(f"{where}: unreadable audio {source}: {exc}") from exc
        if duration <= 0:
            raise ConfigError(f"{where}: audio file {source} is empty")
        return relative, duration

    def write(self, audio: Audio, item_id: str, stimulus_id: str) -> tuple[str, float]:
        """Write a clip we made (attention clip, missing-reply cue)."""
        target, relative = self._target(item_id, stimulus_id)
        write_audio(audio, target, subtype="PCM_16")
        return relative, float(soundfile.info(str(target)).duration)
