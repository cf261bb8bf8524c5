#!/usr/bin/env bash
# The checks that need an NVIDIA GPU: run from the repository root with sparsekit importable
# (installed, or PYTHONPATH=.). Usage: benchmarks/gpu_checks.sh [STEP...], default all, in order:
#   env    device and package versions; fails unless Numba can run kernels on the device (and
#          CuPy, when installed, works)
#   cuda   the CUDA tests on the device (not the simulator)
#   bench  benchmarks/bench_cuda.py, with $BENCH_ARGS (e.g. "--sections grams,nystroem")
#   auto   kernel, feature and sampler tests with backend "auto" sending every Gram matrix to the
#          GPU (gpu_auto_plugin.py), failing if none went there
# Stops at the first failing step with its exit status. Each step's output goes to
# $OUT/<step>.log (OUT defaults to the current directory); its end is printed.
set -euo pipefail
export NUMBA_ENABLE_CUDASIM=0 PYTHONUNBUFFERED=1
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:-.}"
mkdir -p "$out"

run_step() {  # run_step NAME SECONDS LINES_SHOWN COMMAND...
    local name=$1 limit=$2 lines=$3 rc=0
    shift 3
    local cmd="$*"
    echo "== $name: ${cmd//$'\n'/ }" | cut -c1-160
    timeout "$limit" "$@" >"$out/$name.log" 2>&1 || rc=$?
    tail -n "$lines" "$out/$name.log"
    if [ "$rc" -ne 0 ]; then
        echo "== $name FAILED (exit $rc$([ "$rc" -eq 124 ] && echo ", timed out after ${limit} s"))"
        exit "$rc"
    fi
    echo "== $name passed"
}

read -r -d '' env_check <<'PY' || true
import importlib.metadata as md
import subprocess
import sys

import numpy

print(subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                      "--format=csv,noheader"], capture_output=True, text=True,
                     check=True).stdout.strip())
versions = []
for dist in ("numpy", "scipy", "numba", "numba-cuda", "cupy-cuda12x", "cupy-cuda13x", "torch"):
    try:
        versions.append(f"{dist} {md.version(dist)}")
    except md.PackageNotFoundError:
        pass
print("python", sys.version.split()[0], "|", ", ".join(versions))
print("numpy has row_stack:", hasattr(numpy, "row_stack"))
from sparsekit.features import _nystrom_cuda
from sparsekit.kernels.base import cuda_usable, resolve_backend

usable = cuda_usable()  # a failing probe warns; -W error makes that fatal here
print("cuda_usable:", usable, "| auto resolves a 1000x1000 rbf Gram to:",
      resolve_backend("auto", True, "rbf", entries=10**6))
print("Nystroem on the device (CuPy):", _nystrom_cuda.device_ops() is not None)
sys.exit(0 if usable else 1)
PY

steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(env cuda bench auto)
for step in "${steps[@]}"; do
    case "$step" in
        env) run_step env 120 20 python3 -W error::RuntimeWarning -c "$env_check" ;;
        cuda) run_step cuda 240 15 python3 -m pytest -q -p no:cacheprovider -k "cuda or auto" \
                  tests/kernels/test_cuda_kernels.py tests/kernels/test_numba_cuda_compat.py \
                  tests/features/test_nystrom_cuda.py tests/kernels/test_shortest_path.py ;;
        # shellcheck disable=SC2086  # BENCH_ARGS is a list of options
        bench) run_step bench 300 200 python3 benchmarks/bench_cuda.py ${BENCH_ARGS:-} ;;
        auto) run_step auto 300 25 env PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" \
                  python3 -m pytest -q -p no:cacheprovider -p gpu_auto_plugin \
                  tests/kernels/test_vector_kernels.py tests/features tests/samplers ;;
        *) echo "unknown step '$step' (env, cuda, bench, auto)"; exit 2 ;;
    esac
done
