#!/usr/bin/env bash
# The GPU figures of the JAX learners and of PRSVM+'s Newton oracle, in one call on a lent
# accelerator machine (its python3 holds JAX with CUDA; see docs/gpu.md).
#
# Usage (from the repository root, data in $OPTRANK_DATA):
#     OUT=/some/dir bash benchmarks/device_check.sh
# Each stage has its own time limit and log under $OUT, so that one slow stage does not cost
# the others. Stage sizes are smaller than the CPU runs' defaults: a scan over a stream is
# sequential, so on a GPU each step is bounded by kernel-launch latency, not by arithmetic.
set -u
OUT=${OUT:-/tmp/device_out}
PY=${PY:-python3}
GPU=${GPU:-cuda}  # JAX platform of the GPU stages (cpu for a dry run here)
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export XLA_PYTHON_CLIENT_PREALLOCATE=false
stage() {  # stage NAME SECONDS PLATFORM COMMAND...
    local name=$1 limit=$2 platform=$3
    shift 3
    echo "=== $name (limit ${limit}s, JAX_PLATFORMS=$platform) $(date -u +%T)" | tee "$OUT/$name.log"
    JAX_PLATFORMS=$platform timeout "$limit" "$@" 2>&1 | grep -v "^WARNING" | tee -a "$OUT/$name.log"
    echo "=== $name exit ${PIPESTATUS[0]} $(date -u +%T)" | tee -a "$OUT/$name.log"
}
{
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv
    $PY -c "import jax, numpy, sklearn; print('jax', jax.__version__, jax.devices(), 'numpy', numpy.__version__, 'sklearn', sklearn.__version__)"
    lscpu | grep -E "Model name|^CPU\(s\)"
} 2>&1 | tee "$OUT/env.log"
N_ONLINE=${N_ONLINE:-5000}
stage online "${T_ONLINE:-150}" "$GPU" $PY benchmarks/bench_online.py \
    --n "$N_ONLINE" --n-numpy 1000 --n-grid "${N_GRID:-2000}" --repeat 2
stage prsvm "${T_PRSVM:-120}" "$GPU" $PY benchmarks/bench_prsvm.py \
    --cases ijcnn1 covtype --solvers prsvm-jax prsvm-numpy linearsvc --repeats 3 --no-memory
stage stochastic "${T_STOCH:-150}" "$GPU" $PY benchmarks/bench_stochastic.py \
    --no-pesg --repeats 2 ijcnn1 a9a-dense covtype
stage online_cpu "${T_ONLINE_CPU:-45}" cpu $PY benchmarks/bench_online.py \
    --n "$N_ONLINE" --n-numpy 1000 --n-grid "${N_GRID:-2000}" --repeat 2
