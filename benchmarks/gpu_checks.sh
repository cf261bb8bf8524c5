#!/usr/bin/env bash
# The checks that need an NVIDIA GPU, in one go: the CUDA tests on the real device (not the
# simulator), the Nystroem/feature and kernel tests with backend "auto" resolving to the GPU, then
# benchmarks/bench_cuda.py. Run from the repository root with sparsekit importable (installed,
# or PYTHONPATH=.). Logs go to $OUT when set (else to the current directory).
set -uo pipefail
export NUMBA_ENABLE_CUDASIM=0 PYTHONUNBUFFERED=1
out="${OUT:-.}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
python3 -c "import numba, numpy, scipy, sys; from numba import cuda; print('python', sys.version.split()[0], 'numba', numba.__version__, 'numpy', numpy.__version__, 'scipy', scipy.__version__, 'cuda available', cuda.is_available())"
python3 - <<'PY'
from sparsekit.kernels.base import cuda_usable, resolve_backend
print("cuda_usable:", cuda_usable(), "| auto resolves rbf to:", resolve_backend("auto", True, "rbf"))
PY
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/kernels/test_cuda_kernels.py \
    tests/kernels/test_shortest_path.py -k "cuda or auto" 2>&1 | tee "$out/pytest_cuda.log"
timeout 270 python3 benchmarks/bench_cuda.py 2>&1 | tee "$out/bench_cuda.log"
timeout 200 python3 -m pytest -q -p no:cacheprovider -x tests/kernels/test_vector_kernels.py \
    tests/features tests/samplers 2>&1 | tee "$out/pytest_auto.log"
