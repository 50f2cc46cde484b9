#!/usr/bin/env bash
# B2RMK on a lent GPU (backend="jax", docs/bayes.md "B2RMK on a GPU"), in one call:
#   1. bench: seconds per sweep on the device against the numpy host path
#      (benchmarks/bench_bayes_device.py), sizes up to usps's 7,438 training rows;
#   2. reproduce: Table 3's B2RMK column on the sets still open on a CPU (spambase, usps),
#      through the runner with --backend jax, one cell after another, stopping new cells
#      after T_REPRO seconds; the finished cells come back in $OUT/b2rmk/.cache (same cache
#      keys as host runs of this commit: merge them into a host output's .cache).
# Defaults fit one device call of 600 s: bench <= 100 s, reproduce 300 s + the last cell
# (the stage is killed 120 s after T_REPRO; a killed cell is lost, the finished ones kept).
# Usage (repository root; data in $OPTRANK_DATA, e.g. the carried .gpudata):
#     OUT=/some/dir bash benchmarks/device_bayes.sh
# Dry run on a CPU: GPU=cpu SIZES="300 600" SETS=sonar QUICK=--quick bash benchmarks/device_bayes.sh
set -u
OUT=${OUT:-/tmp/device_out}
PY=${PY:-python3}
GPU=${GPU:-cuda}
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export XLA_PYTHON_CLIENT_PREALLOCATE=false
stage() {  # stage NAME SECONDS COMMAND...
    local name=$1 limit=$2
    shift 2
    echo "=== $name (limit ${limit}s, JAX_PLATFORMS=$GPU) $(date -u +%T)" | tee "$OUT/$name.log"
    JAX_PLATFORMS=$GPU timeout "$limit" "$@" 2>&1 | grep -v "^WARNING" | tee -a "$OUT/$name.log"
    echo "=== $name exit ${PIPESTATUS[0]} $(date -u +%T)" | tee -a "$OUT/$name.log"
}
{
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1
    $PY -c "import jax, numpy, scipy; print('jax', jax.__version__, jax.devices(), 'numpy', numpy.__version__, 'scipy', scipy.__version__)"
    lscpu | grep -E "Model name|^CPU\(s\)"
} 2>&1 | tee "$OUT/env.log"
# shellcheck disable=SC2086
stage bayes_bench "${T_BENCH:-100}" $PY benchmarks/bench_bayes_device.py \
    --sizes ${SIZES:-1000 2000 3680 5148 7438} --sweeps "${SWEEPS:-10}" --host-max "${HOST_MAX:-2000}"
# shellcheck disable=SC2086
stage b2rmk_reproduce "$(( ${T_REPRO:-300} + 120 ))" $PY -m optrank.cli reproduce b2rmk-table3 \
    --datasets "${SETS:-spambase,usps}" --backend jax --sequential \
    --time-limit "${T_REPRO:-300}" ${QUICK:-} --output "$OUT/b2rmk"
