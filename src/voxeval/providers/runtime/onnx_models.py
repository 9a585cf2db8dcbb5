"""Finding ONNX model files inside installed packages and opening them with onnxruntime."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

from voxeval.errors import ProviderUnavailable

if TYPE_CHECKING:
    from onnxruntime import InferenceSession


def package_dir(package: str) -> Path | None:
    """Folder of an installed package, found without importing it (None if absent)."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


@functools.cache
def file_sha256(path: Path) -> str:
    """Hex SHA-256 of a model file (cached: identities are asked for often)."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def onnx_session(path: Path, *, threads: int = 1, arena: bool = True) -> InferenceSession:
    """A CPU onnxruntime session for ``path`` with a small thread budget (2-core machines);
    ``arena=False`` for models whose input shapes vary (see below)."""
    try:
        import onnxruntime
    except ImportError as exc:
        raise ProviderUnavailable(f"onnxruntime is not installed (needed for {path.name})") from exc
    opts = onnxruntime.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    # The memory arena keeps the largest buffers every input shape asked for: right for small
    # fixed shapes (Silero's chunks), not for inputs of many sizes (DNSMOS: batches of 1-8
    # windows held over 2 GB after one 20 s clip with it). The values are the same either way.
    opts.enable_cpu_mem_arena = arena
    return onnxruntime.InferenceSession(
        str(path), sess_options=opts, providers=["CPUExecutionProvider"]
    )
