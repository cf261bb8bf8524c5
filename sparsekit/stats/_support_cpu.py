"""Repeated rows of a float array in one pass: row hashes in an open-addressing table (Numba).

Rows are compared by their bit patterns (given as an unsigned-integer view of the floats), with
−0.0 counted equal to 0.0, so two rows are equal exactly when ``==`` holds entry by entry
(the data is finite: no NaN). A row's hash only selects where to look: every candidate with
the same hash is compared entry by entry before the rows are declared equal, so a hash
collision costs time, never a wrong identity.
"""
import numpy as np
from numba import njit

_SEED = np.uint64(0x9E3779B97F4A7C15)
_MULT = np.uint64(0xBF58476D1CE4E5B9)
_FINAL = np.uint64(0x94D049BB133111EB)


@njit(cache=True, nogil=True)
def first_equal_rows(bits, sign_bit, ids):
    """``ids[i]`` <- the index of the first row equal to row ``i``; returns the number of rows
    equal to an earlier one.

    Parameters
    ----------
    bits : (n, d) uint64 or uint32 array, the bit patterns of C-contiguous float rows
    sign_bit : the pattern of −0.0 in that width (counted as 0.0)
    ids : (n,) int64 array, written
    """
    n, d = bits.shape
    size = 1
    while size < 2 * n:
        size *= 2
    mask = np.uint64(size - 1)
    table = np.full(size, -1, dtype=np.int64)  # row index stored in each slot, -1: empty
    hashes = np.empty(n, dtype=np.uint64)
    zero = bits.dtype.type(0)
    repeats = 0
    for i in range(n):
        h = _SEED
        for k in range(d):
            b = bits[i, k]
            if b == sign_bit:
                b = zero
            h = (h ^ np.uint64(b)) * _MULT
            h ^= h >> np.uint64(31)
        h = (h ^ (h >> np.uint64(30))) * _FINAL
        h ^= h >> np.uint64(31)
        hashes[i] = h
        slot = h & mask
        while True:
            j = table[slot]
            if j < 0:
                table[slot] = i
                ids[i] = i
                break
            if hashes[j] == h and _rows_equal(bits, i, j, sign_bit, zero):
                ids[i] = j
                repeats += 1
                break
            slot = (slot + np.uint64(1)) & mask
    return repeats


@njit(cache=True, nogil=True)
def _rows_equal(bits, i, j, sign_bit, zero):
    for k in range(bits.shape[1]):
        a = bits[i, k]
        b = bits[j, k]
        if a != b:
            if not ((a == sign_bit or a == zero) and (b == sign_bit or b == zero)):
                return False
    return True
