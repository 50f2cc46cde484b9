#!/usr/bin/env bash
# B2RMK on a lent GPU (backend="jax", docs/bayes.md "B2RMK on a GPU"), in one call:
#   1. bench: seconds per sweep on the device against the numpy host path
#      (benchmarks/bench_bayes_device.py), sizes up to usps's 7,438 training rows;
#   2. reproduce: Table 3's B2RMK column on the sets still open on a CPU (spambase, usps),
#      through the runner with --backend jax, in PARTS processes sharing the GPU (each
#      `--sequential --shard j/PARTS`, its own output $OUT/b2rmk_j, at most 0.9/PARTS of
#      the GPU's memory (XLA_CLIENT_MEM_FRACTION; JAX 0.11 refuses it beside the
#      deprecated XLA_PYTHON_CLIENT_MEM_FRACTION) and cores/PARTS host threads), each stopping new cells after
#      T_REPRO seconds; the finished cells come back in $OUT/b2rmk_*/.cache (same cache
#      keys as host runs of this commit: merge them into a host output's .cache).
# Defaults fit one device call of under 600 s: bench <= 75 s, reproduce T_REPRO = 330 s
# + the cells then running (killed 130 s after T_REPRO; a killed cell is lost, the
# finished ones kept).
# Usage (repository root; data in $OPTRANK_DATA, e.g. the carried .gpudata):
#     OUT=/some/dir bash benchmarks/device_bayes.sh
# BENCH=0 skips the benchmark; PARTS, T_REPRO, SETS as above; GRACE (130 s) is how long
# the cells running at T_REPRO may take before they are killed.
# Dry run on a CPU: GPU=cpu SIZES="300 600" SETS=sonar QUICK=--quick PARTS=2 bash benchmarks/device_bayes.sh
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
[ "${BENCH:-1}" = 0 ] || stage bayes_bench "${T_BENCH:-75}" $PY benchmarks/bench_bayes_device.py \
    --sizes ${SIZES:-2000 3680 7438} --sweeps "${SWEEPS:-5}" --host-max "${HOST_MAX:-2000}"
PARTS=${PARTS:-5}
T_REPRO=${T_REPRO:-330}
THREADS=$(( $(nproc) / PARTS > 0 ? $(nproc) / PARTS : 1 ))
FRACTION=$($PY -c "print(round(0.9 / $PARTS, 3))")
echo "=== b2rmk_reproduce: $PARTS parts, $THREADS host threads and GPU memory fraction" \
    "$FRACTION each, no new cell after ${T_REPRO}s $(date -u +%T)" | tee "$OUT/b2rmk_reproduce.log"
nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv -l 20 \
    > "$OUT/gpu_usage.log" 2>&1 &
SAMPLER=$!
PIDS=()
for j in $(seq 1 "$PARTS"); do
    # shellcheck disable=SC2086
    JAX_PLATFORMS=$GPU OMP_NUM_THREADS=$THREADS OPENBLAS_NUM_THREADS=$THREADS \
    MKL_NUM_THREADS=$THREADS XLA_CLIENT_MEM_FRACTION=$FRACTION timeout "$(( T_REPRO + ${GRACE:-130} ))" \
        $PY -m optrank.cli reproduce b2rmk-table3 --datasets "${SETS:-spambase,usps}" \
        --backend jax --sequential --time-limit "$T_REPRO" --shard "$j/$PARTS" ${QUICK:-} \
        --output "$OUT/b2rmk_$j" > "$OUT/b2rmk_$j.log" 2>&1 &
    PIDS+=($!)
done
wait "${PIDS[@]}"
kill "$SAMPLER" 2>/dev/null
for j in $(seq 1 "$PARTS"); do
    echo "--- part $j/$PARTS"
    grep -v "^WARNING" "$OUT/b2rmk_$j.log" | tr '\r' '\n' | grep -E "cells|error|Error|Traceback" | tail -5
    ls "$OUT/b2rmk_$j/.cache" 2>/dev/null | grep -c json
done 2>&1 | tee -a "$OUT/b2rmk_reproduce.log"
echo "=== b2rmk_reproduce end $(date -u +%T)" | tee -a "$OUT/b2rmk_reproduce.log"
# The device call returns few files: everything goes back as one archive, $OUT/device.tgz.
tar -czf /tmp/device.tgz -C "$OUT" . && rm -rf "${OUT:?}"/* && mv /tmp/device.tgz "$OUT/"
