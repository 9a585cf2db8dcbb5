"""Seeded noise for Piper voices.

A Piper (VITS) voice samples two noise tensors inside its ONNX graph with
``RandomNormalLike``: one for the phoneme durations (scaled by ``noise_w_scale``) and one for
the acoustic latent (scaled by ``noise_scale``). onnxruntime seeds those ops from the clock
when the session is created and then advances one generator shared by every call and thread,
so the same text sounds different each time and the result depends on call order.

``seeded_voice_model`` rewrites each ``RandomNormalLike`` into a read of a new float input
(``voxeval_noise_<k>``): the flat noise buffer is indexed element by element, wrapping around
if the graph needs more values than were given, and reshaped to the op's shape. The caller
then draws the noise with numpy from a generator seeded by whatever it wants (here: the
provider's ``seed`` and the text), so synthesis is a pure function of its inputs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from voxeval.errors import ProviderUnavailable

if TYPE_CHECKING:
    from onnxruntime import InferenceSession

NOISE_INPUT_PREFIX = "voxeval_noise_"
# Values drawn per phoneme id for every noise input. The latent needs (channels x frames):
# 192 channels for medium voices and at most ~4.3 frames per phoneme id at length_scale 1
# (measured on varied English text), so 16 frames per id leaves ample room before wrapping.
LATENT_CHANNELS = 192
FRAMES_PER_ID = 16


def seeded_voice_model(model_path: Path) -> tuple[bytes, list[str]]:
    """The serialised model with its random ops fed from inputs, and those inputs' names."""
    try:
        import onnx
        from onnx import TensorProto, helper
    except ImportError as exc:
        raise ProviderUnavailable(
            "seeded Piper synthesis needs the onnx package (pip install 'voxeval[embedded]')"
        ) from exc

    model = onnx.load(str(model_path))
    graph = model.graph
    nodes: list[Any] = []
    names: list[str] = []
    for node in graph.node:
        if node.op_type != "RandomNormalLike":
            nodes.append(node)
            continue
        dtype = next((a.i for a in node.attribute if a.name == "dtype"), TensorProto.FLOAT)
        if dtype != TensorProto.FLOAT:
            raise ProviderUnavailable(f"{model_path}: random op {node.name!r} is not float32")
        name = f"{NOISE_INPUT_PREFIX}{len(names)}"
        names.append(name)
        graph.input.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, [f"{name}_n"]))
        shape_of, out, p = node.input[0], node.output[0], f"{name}/"
        nodes += [
            helper.make_node("Size", [shape_of], [p + "count"]),
            helper.make_node("Size", [name], [p + "available"]),
            helper.make_node("Range", [p + "zero", p + "count", p + "one"], [p + "index"]),
            helper.make_node("Mod", [p + "index", p + "available"], [p + "wrapped"]),
            helper.make_node("Gather", [name, p + "wrapped"], [p + "flat"], axis=0),
            helper.make_node("Shape", [shape_of], [p + "shape"]),
            helper.make_node("Reshape", [p + "flat", p + "shape"], [out]),
        ]
        graph.initializer.extend(
            [
                helper.make_tensor(p + "zero", TensorProto.INT64, [], [0]),
                helper.make_tensor(p + "one", TensorProto.INT64, [], [1]),
            ]
        )
    if not names:
        raise ProviderUnavailable(f"{model_path}: no random op found to seed (not a VITS voice?)")
    del graph.node[:]
    graph.node.extend(nodes)
    return model.SerializeToString(), names


class SeededSession:
    """Stands in for a voice's ONNX session during one synthesis: every ``run`` (one per
    sentence) gets fresh noise buffers from generators keyed by ``key`` and the sentence
    index, so the result does not depend on earlier calls or other threads."""

    def __init__(
        self,
        session: InferenceSession,
        noise_inputs: list[str],
        key: list[int],
        length_scale: float,
    ):
        self._session = session
        self._noise_inputs = noise_inputs
        self._key = key
        self._frames_per_id = FRAMES_PER_ID * max(1, int(np.ceil(length_scale)))
        self._sentence = 0

    def run(self, output_names: Any, inputs: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        ids = int(np.asarray(inputs["input"]).size)
        size = max(1, ids * LATENT_CHANNELS * self._frames_per_id)
        feeds = dict(inputs)
        for k, name in enumerate(self._noise_inputs):
            rng = np.random.default_rng([*self._key, self._sentence, k])
            feeds[name] = rng.standard_normal(size, dtype=np.float32)
        self._sentence += 1
        return self._session.run(output_names, feeds, *args, **kwargs)
