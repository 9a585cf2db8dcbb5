#!/usr/bin/env bash
# Build the llama-cpp-python wheel from source, with portable CPU flags, into a wheel folder:
#   scripts/build_llama.sh PIP VERSION WHEEL_DIR
# Only a wheel is built (nothing is installed), so `make setup` runs this in the background while
# pip installs the rest into the same .venv, and installs the wheel once both are done.
# A prebuilt wheel (a local wheel folder, pip's cache) may be compiled for another CPU and die
# with SIGILL: hence --no-binary and --no-cache-dir. LLAVA_BUILD=OFF leaves out the multimodal
# (mtmd/CLIP) library: SmolLM2 is text only, and llama_cpp loads that library only for its image
# chat handlers.
set -euo pipefail
pip=$1 version=$2 out=$3
mkdir -p "$out"
CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DLLAVA_BUILD=OFF" \
  "$pip" wheel -q --no-deps --no-cache-dir --no-binary llama-cpp-python \
  "llama-cpp-python==$version" -w "$out"
