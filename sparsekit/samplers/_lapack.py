"""Cholesky factorization and triangular inverse in place, with the GIL released.

SciPy's Python wrappers of LAPACK (``scipy.linalg.lapack.dpotrf``, ``dtrtri``) hold the GIL for
the whole call, so block workers on several threads run them one at a time (measured on 2
cores: 300 factorizations + inverses of 317 x 317 took the same time on 1 and 2 threads). The
same LAPACK routines, reached through the function pointers that ``scipy.linalg.cython_lapack``
exports and called through ``ctypes`` (which releases the GIL during a foreign call), run in
parallel: 0.43 s on 1 thread, 0.22 s on 2 for the same work.

Both functions work on a Fortran-ordered float64 square array in place and return LAPACK's
``info`` (0 on success).
"""

from __future__ import annotations

import ctypes

import numpy as np

_INT_P = ctypes.POINTER(ctypes.c_int)


def _lapack_function(name: str, n_chars: int):
    from scipy.linalg import cython_lapack

    capsule = cython_lapack.__pyx_capi__[name]
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype = ctypes.c_char_p
    get_name.argtypes = [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    address = get_pointer(capsule, get_name(capsule))
    # (char* x n_chars, int* n, double* a, int* lda, int* info)
    prototype = ctypes.CFUNCTYPE(
        None, *([ctypes.c_char_p] * n_chars), _INT_P, ctypes.c_void_p, _INT_P, _INT_P
    )
    return prototype(address)


_FUNCTIONS = {}


def _get(name: str, n_chars: int):
    fn = _FUNCTIONS.get(name)
    if fn is None:
        fn = _FUNCTIONS[name] = _lapack_function(name, n_chars)
    return fn


def _check(A: np.ndarray) -> None:
    if A.dtype != np.float64 or not A.flags.f_contiguous or A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError("expected a square Fortran-ordered float64 array")


def potrf_upper(A: np.ndarray) -> int:
    """A <- its upper Cholesky factor U (UᵀU = A) in the upper triangle; the strict lower
    triangle is left as it was."""
    _check(A)
    n = ctypes.c_int(A.shape[0])
    info = ctypes.c_int(0)
    _get("dpotrf", 1)(b"U", ctypes.byref(n), A.ctypes.data, ctypes.byref(n), ctypes.byref(info))
    return info.value


def trtri_upper(U: np.ndarray) -> int:
    """U <- U⁻¹ for the upper triangle of ``U`` (the strict lower triangle is not read)."""
    _check(U)
    n = ctypes.c_int(U.shape[0])
    info = ctypes.c_int(0)
    _get("dtrtri", 2)(
        b"U", b"N", ctypes.byref(n), U.ctypes.data, ctypes.byref(n), ctypes.byref(info)
    )
    return info.value
