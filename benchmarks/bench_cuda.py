"""GPU against CPU on the same machine: vector-kernel Grams, shortest paths and Nyström.

Run on a machine with an NVIDIA GPU: ``python benchmarks/bench_cuda.py`` (``--quick`` for tiny
sizes; ``--sections grams,nystroem`` for some tables; with ``NUMBA_ENABLE_CUDASIM=1`` it runs on
Numba's simulator, only to check the script).
Each row times the same call with ``backend="cpu"`` (Numba and BLAS threads on every core) and
``backend="cuda"``, checks the two results agree and prints the speed-up (CPU time / GPU time).

The anchor on the GPU is PyTorch (when installed): the same computations written with its
tensor operations (``cdist`` -> ``exp`` -> matmul with the normalization for Nyström), timed
with ``torch.cuda.synchronize()`` and the result copied into a host NumPy array, in the same
dtype; the script exits non-zero when the answers of any side disagree.

Two GPU times are given for the Gram matrices: end to end (host arrays in, host Gram out: what a
user of ``kernel(X, Y)`` gets) and the device compute alone (inputs already on the device, output
left there), which shows how much of the end-to-end time is the copy of the n×m result back to
host memory.
"""

import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import best_time, machine, print_table  # noqa: E402

import sparsekit  # noqa: E402
from sparsekit.kernels.graph import ShortestPathKernel  # noqa: E402

COLUMNS = [
    "case",
    "CPU (s)",
    "GPU end-to-end (s)",
    "GPU compute (s)",
    "speed-up",
    "max abs diff",
    "PyTorch (s)",
    "GPU vs PyTorch",
]


def _row(case, t_cpu, t_gpu, diff, t_dev=None, fmt=".4f", t_torch=None):
    """One table row: CPU and GPU times, the speed-up and the largest difference."""
    return {
        "case": case,
        "CPU (s)": f"{t_cpu:{fmt}}",
        "GPU end-to-end (s)": f"{t_gpu:{fmt}}",
        "GPU compute (s)": "-" if t_dev is None else f"{t_dev:.5f}",
        "speed-up": f"{t_cpu / t_gpu:.2f}x",
        "max abs diff": f"{diff:.1e}",
        "PyTorch (s)": "-" if t_torch is None else f"{t_torch:{fmt}}",
        "GPU vs PyTorch": "-" if t_torch is None else f"{t_torch / t_gpu:.2f}x",
    }


def _threads_line():
    from threadpoolctl import threadpool_info

    from sparsekit._runtime.threads import effective_n_jobs

    blas = sorted(
        {
            f"{i['internal_api']} {i['num_threads']}"
            for i in threadpool_info()
            if i["user_api"] == "blas"
        }
    )
    return (
        f"CPU side: {effective_n_jobs(None)} threads (sparsekit/Numba), BLAS threads: "
        f"{', '.join(blas) or '?'}; GPU side: one device"
    )


def _rel_diff(a, b):
    return float(np.abs(np.asarray(a, np.float64) - b).max() / max(np.abs(b).max(), 1e-300))


#: disagreements and anchor errors; the script exits non-zero after its tables if any
FAILURES = []


def _check(label, diff, tol):
    """Record a failure when two sides disagree by more than ``tol`` (relative)."""
    if not diff <= tol:
        FAILURES.append(f"{label}: relative difference {diff:.1e} > {tol:.0e}")
        print(f"FAILED: {FAILURES[-1]}", flush=True)


def _anchor(label, fn):
    """``fn()``, or None (recorded as a failure) when the anchor raises."""
    try:
        return fn()
    except Exception as exc:  # the other rows still run; the script fails at the end
        FAILURES.append(f"{label}: {exc!r}")
        print(f"FAILED: {FAILURES[-1]}", flush=True)
        return None


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def _device_line():
    from numba import config, cuda

    if config.ENABLE_CUDASIM:
        return "Numba CUDA simulator (timings meaningless)"
    dev = cuda.get_current_device()
    name = dev.name.decode() if isinstance(dev.name, bytes) else dev.name
    return f"{name}, compute capability {dev.compute_capability}"


def _device_compute_time(kernel, X, Y):
    """Seconds of the kernel launch alone: inputs on the device, output left on the device."""
    from numba import cuda

    from sparsekit.kernels import _cuda

    entries, args = kernel._cuda_entries(X)
    dX, dYt = cuda.to_device(X), cuda.to_device(np.ascontiguousarray(Y.T))
    dout = cuda.device_array((X.shape[0], Y.shape[0]), dtype=X.dtype)
    grid = (math.ceil(Y.shape[0] / _cuda._THREADS[0]), math.ceil(X.shape[0] / _cuda._THREADS[1]))

    def run():
        entries[grid, _cuda._THREADS](dX, dYt, *args, dout)
        cuda.synchronize()

    return best_time(run, repeat=5)


def torch_gram(torch, name, X, Y, gamma):
    """The Gram matrix in PyTorch, host arrays in, host array out (rbf and laplacian)."""
    Xd, Yd = torch.from_numpy(X).cuda(), torch.from_numpy(Y).cuda()
    if name == "rbf":
        K = torch.exp(-gamma * torch.cdist(Xd, Yd).square())
    else:
        K = torch.exp(-gamma * torch.cdist(Xd, Yd, p=1.0))
    out = K.cpu().numpy()
    torch.cuda.synchronize()
    return out


def bench_grams(quick):
    torch = _torch()
    rows = []
    rng = np.random.default_rng(0)
    shapes = [(64, 48, 8)] if quick else [(5000, 5000, 128), (50_000, 1000, 54)]
    for n, m, d in shapes:
        X0, Y0 = rng.random((n, d)), rng.random((m, d))
        for name, params in (
            ("rbf", {"gamma": 1.0 / d}),
            ("laplacian", {}),
            ("chi2", {"gamma": 0.5}),
        ):
            for dtype in (np.float64, np.float32):
                X, Y = X0.astype(dtype), Y0.astype(dtype)
                cpu = sparsekit.get_kernel(name, backend="cpu", **params)
                gpu = sparsekit.get_kernel(name, backend="cuda", **params)
                t_cpu = best_time(lambda: cpu(X, Y))
                t_gpu = best_time(lambda: gpu(X, Y))
                t_dev = _device_compute_time(gpu, X, Y)
                got = gpu(X, Y)
                diff = float(np.abs(cpu(X, Y) - got).max())
                _check(
                    f"{name} GPU", _rel_diff(got, cpu(X, Y)), 1e-12 if dtype == np.float64 else 1e-5
                )
                t_torch = None
                if torch is not None and name in ("rbf", "laplacian"):
                    g = float(gpu._cuda_entries(X)[1][0])
                    label = f"PyTorch {name} {n}x{m} {np.dtype(dtype).name}"
                    t_torch = _anchor(
                        label, lambda: best_time(lambda: torch_gram(torch, name, X, Y, g))
                    )
                    if t_torch is not None:
                        _check(
                            label,
                            _rel_diff(torch_gram(torch, name, X, Y, g), got),
                            1e-10 if dtype == np.float64 else 1e-4,
                        )
                rows.append(
                    _row(
                        f"{name} {n}x{m}, d={d}, {np.dtype(dtype).name}",
                        t_cpu,
                        t_gpu,
                        diff,
                        t_dev,
                        t_torch=t_torch,
                    )
                )
    return rows


def bench_transfer(quick):
    """Ways to bring one n×m float64 result from the device into a new host array."""
    from numba import cuda

    from sparsekit.kernels import _cpu, _cuda

    n, m = (64, 48) if quick else (5000, 5000)
    d_out = cuda.to_device(np.random.default_rng(2).random((n, m)))
    want = d_out.copy_to_host()

    def pageable():
        out = np.empty((n, m))
        d_out.copy_to_host(out)
        return out

    def staged():  # the library's path: page-locked staging buffer, threaded copy
        out = np.empty((n, m))
        chunk = max(1, _cuda.STAGING_BYTES // (m * 8))
        with _cuda._device_lock:
            for r0 in range(0, n, chunk):
                r1 = min(n, r0 + chunk)
                host = _cuda._staging_view(r1 - r0, m, np.float64)
                d_out[r0:r1].copy_to_host(host)
                _cpu.copy_rows(host, out[r0:r1])
        return out

    def registered():  # page-lock the destination itself for the copy
        out = np.empty((n, m))
        with cuda.pinned(out):
            d_out.copy_to_host(out)
        return out

    rows = []
    for label, fn in (
        ("pageable copy_to_host", pageable),
        ("staged (library)", staged),
        ("cuda.pinned(out) + copy", registered),
    ):
        assert np.array_equal(fn(), want)
        t = best_time(fn, repeat=5)
        rows.append(
            {
                "case": f"device->host {n}x{m} float64 ({n * m * 8 / 1e6:.0f} MB): {label}",
                "CPU (s)": "-",
                "GPU end-to-end (s)": f"{t:.4f}",
                "GPU compute (s)": "-",
                "speed-up": f"{n * m * 8 / t / 1e9:.1f} GB/s",
                "max abs diff": "0",
            }
        )
    return rows


def bench_crossover(quick):
    """Small Gram matrices: where a GPU call starts to pay (sets ``AUTO_CUDA_MIN_ENTRIES``)."""
    from sparsekit.kernels.base import AUTO_CUDA_MIN_ENTRIES

    rows = []
    rng = np.random.default_rng(3)
    sizes = (8, 32) if quick else (64, 128, 256, 512, 1024, 2048)
    for n in sizes:
        X = rng.random((n, 54))
        cpu = sparsekit.get_kernel("rbf", gamma=1.0 / 54, backend="cpu")
        gpu = sparsekit.get_kernel("rbf", gamma=1.0 / 54, backend="cuda")
        t_cpu = best_time(lambda: cpu(X), repeat=20)
        t_gpu = best_time(lambda: gpu(X), repeat=20)
        diff = float(np.abs(cpu(X) - gpu(X)).max())
        auto = "cuda" if n * n >= AUTO_CUDA_MIN_ENTRIES else "cpu"
        rows.append(
            _row(f"rbf {n}x{n}, d=54, float64 (auto: {auto})", t_cpu, t_gpu, diff, fmt=".6f")
        )
    return rows


def bench_samplers(quick):
    """Leverage-score samplers with the Gram blocks on the CPU, on the GPU, and with auto."""
    rows = []
    n, d = (120, 5) if quick else (100_000, 54)
    X = np.random.default_rng(4).standard_normal((n, d))
    cases = (
        (
            "dac-rls scores",
            lambda k: sparsekit.get_sampler("dac-rls", lam=1.0).scores(X, k, random_state=0),
        ),
        (
            "recursive-rls s=20" if quick else "recursive-rls s=500",
            lambda k: (
                sparsekit.get_sampler("recursive-rls")
                .sample(X, k, 20 if quick else 500, random_state=0)
                .indices.astype(float)
            ),
        ),
    )
    for label, run in cases:
        times, results = {}, {}
        for backend in ("cpu", "cuda", "auto"):
            k = sparsekit.get_kernel("rbf", gamma=1.0 / d, backend=backend)
            times[backend] = best_time(lambda: run(k), repeat=2)
            results[backend] = run(k)
        diff = max(float(np.abs(results[b] - results["cpu"]).max()) for b in ("cuda", "auto"))
        rows.append(
            _row(
                f"{label}, n={n}, d={d} (auto: {times['auto']:.3f} s)",
                times["cpu"],
                times["cuda"],
                diff,
                fmt=".3f",
            )
        )
    return rows


def _random_graphs(n_graphs, n_nodes, p, weighted, seed):
    rng = np.random.default_rng(seed)
    graphs = []
    for _ in range(n_graphs):
        A = np.triu(rng.random((n_nodes, n_nodes)) < p, 1).astype(np.float64)
        if weighted:
            A *= rng.choice([0.5, 1.0, 2.5], size=A.shape)
        graphs.append((A + A.T, rng.integers(0, 5, n_nodes)))
    return graphs


def bench_graphs(quick):
    rows = []
    cases = [(10, 8, 0.3)] if quick else [(2000, 30, 0.15), (200, 200, 0.03)]
    for n_graphs, n_nodes, p in cases:
        for weighted in (False, True):
            graphs = _random_graphs(n_graphs, n_nodes, p, weighted, seed=n_nodes)
            cpu = ShortestPathKernel(weighted=weighted, backend="cpu")
            gpu = ShortestPathKernel(weighted=weighted, backend="cuda")
            t_cpu = best_time(lambda: cpu(graphs))
            t_gpu = best_time(lambda: gpu(graphs))
            diff = float(np.abs(cpu(graphs) - gpu(graphs)).max())
            kind = "weighted (Floyd-Warshall both)" if weighted else "unweighted (CPU: BFS)"
            rows.append(
                _row(
                    f"shortest-path {n_graphs} graphs x {n_nodes} nodes, {kind}", t_cpu, t_gpu, diff
                )
            )
    return rows


NYSTROEM_COLUMNS = [
    "case",
    "CPU (s)",
    "GPU (s)",
    "GPU fit / transform (s)",
    "GPU, Gram blocks to host (s)",
    "PyTorch (s)",
    "GPU vs CPU",
    "GPU vs PyTorch",
    "max rel. diff (CPU, PyTorch)",
]


def torch_nystroem(torch, X, indices, gamma):
    """The Nyström recipe in PyTorch: host X in, host features out, dtype of X.

    K_S = exp(-gamma cdist(S, S)^2), eigh of K_S (in X's dtype), M = U diag(lambda^-1/2) U^T with
    the same eigenvalue floor as sparsekit (|S| eps lambda_max), Z = exp(-gamma cdist(X, S)^2) M.
    """
    Xd = torch.from_numpy(X).cuda()
    S = Xd[torch.from_numpy(indices).cuda()]
    K_S = torch.exp(-gamma * torch.cdist(S, S).square())
    w, U = torch.linalg.eigh(0.5 * (K_S + K_S.T))
    floor = len(indices) * np.finfo(X.dtype).eps * w.max().clamp(min=0)
    inv_sqrt = torch.where(w > floor, w.clamp(min=floor).rsqrt(), torch.zeros_like(w))
    M = (U * inv_sqrt) @ U.T
    Z = torch.exp(-gamma * torch.cdist(Xd, S).square()) @ M
    out = Z.cpu().numpy()
    torch.cuda.synchronize()
    return out


def bench_nystroem(quick):
    from sparsekit.features import _nystrom_cuda

    torch = _torch()
    rows = []
    cases = (
        [(300, 20, 54, np.float64), (300, 20, 54, np.float32)]
        if quick
        else [
            (50_000, 1000, 54, np.float64),
            (50_000, 1000, 54, np.float32),
            (200_000, 2000, 54, np.float32),
        ]
    )
    X0 = np.random.default_rng(1).standard_normal((max(c[0] for c in cases), 54))
    for n, m, d, dtype in cases:
        X = np.ascontiguousarray(X0[:n, :d], dtype=dtype)
        gamma = 1.0 / d

        def model(backend):
            return sparsekit.Nystroem(
                "rbf",
                sampler="uniform",
                n_components=m,
                kernel_params={"gamma": gamma, "backend": backend},
                random_state=0,
            )

        def run(backend):
            return model(backend).fit_transform(X)

        t_cpu = best_time(lambda: run("cpu"))
        t_gpu = best_time(lambda: run("cuda"))
        fitted = model("cuda").fit(X)
        t_fit = best_time(lambda: model("cuda").fit(X))
        t_transform = best_time(lambda: fitted.transform(X))
        on_device = _nystrom_cuda.device_ops() is not None
        want, got = run("cpu"), run("cuda")
        tol = 1e-10 if dtype == np.float64 else 1e-4
        diff_cpu = _rel_diff(got, want)
        # the previous GPU path: Gram blocks on the GPU, copied to host, host GEMM
        ops = _nystrom_cuda.device_ops
        _nystrom_cuda.device_ops = lambda: None
        try:
            t_host = best_time(lambda: run("cuda"))
            diff_cpu = max(diff_cpu, _rel_diff(run("cuda"), want))
        finally:
            _nystrom_cuda.device_ops = ops
        t_torch, diff_torch = None, None
        if torch is not None:
            indices = fitted.component_indices_
            label = f"PyTorch Nystroem n={n} {np.dtype(dtype).name}"
            t_torch = _anchor(
                label, lambda: best_time(lambda: torch_nystroem(torch, X, indices, gamma))
            )
            if t_torch is not None:
                Z = torch_nystroem(torch, X, indices, gamma)
                diff_torch = _rel_diff(Z, got)
                if Z.dtype != dtype:
                    FAILURES.append(f"{label}: dtype {Z.dtype}")
                # float32 eigenvalues (PyTorch) against float64 ones (sparsekit)
                _check(label, diff_torch, 1e-9 if dtype == np.float64 else 2e-3)
        _check(f"GPU Nystroem n={n} {np.dtype(dtype).name}", diff_cpu, tol)
        rows.append(
            {
                "case": f"Nystroem fit+transform n={n}, {m} comps, d={d}, {np.dtype(dtype).name}",
                "CPU (s)": f"{t_cpu:.4f}",
                "GPU (s)": f"{t_gpu:.4f}",
                "GPU fit / transform (s)": f"{t_fit:.4f} / {t_transform:.4f}"
                + ("" if on_device else " (no CuPy: host GEMM)"),
                "GPU, Gram blocks to host (s)": f"{t_host:.4f}",
                "PyTorch (s)": "-" if t_torch is None else f"{t_torch:.4f}",
                "GPU vs CPU": f"{t_cpu / t_gpu:.2f}x",
                "GPU vs PyTorch": "-" if t_torch is None else f"{t_torch / t_gpu:.2f}x",
                "max rel. diff (CPU, PyTorch)": f"{diff_cpu:.1e}, "
                + ("-" if diff_torch is None else f"{diff_torch:.1e}"),
            }
        )
    return rows


SECTIONS = {
    "transfer": bench_transfer,
    "crossover": bench_crossover,
    "grams": bench_grams,
    "graphs": bench_graphs,
    "nystroem": bench_nystroem,
    "samplers": bench_samplers,
}


def main(quick=False, sections=tuple(SECTIONS)):
    torch = _torch()
    print(f"Machine: {machine()}")
    print(f"Device: {_device_line()}")
    print(_threads_line())
    print("PyTorch: " + (f"{torch.__version__}" if torch is not None else "absent (no anchor)"))
    print(flush=True)
    t0 = time.perf_counter()
    for name in sections:
        rows = SECTIONS[name](quick)
        print_table(rows, NYSTROEM_COLUMNS if name == "nystroem" else COLUMNS)
        print(flush=True)
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
    if FAILURES:
        print("\nFAILED:\n" + "\n".join(FAILURES))
        sys.exit(1)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument(
        "--sections",
        default=",".join(SECTIONS),
        help=f"comma-separated subset of {', '.join(SECTIONS)}",
    )
    args = parser.parse_args()
    main(args.quick, [name for name in args.sections.split(",") if name])
