"""Repeated rows of a float array in one pass: row hashes in an open-addressing table (Numba).

Rows are compared by their bit patterns (an unsigned-integer view of float64 rows), with −0.0
counted equal to 0.0, so two rows are equal exactly when ``==`` holds entry by entry (the data
is finite: no NaN). A row's hash only selects where to look: every candidate with the same hash
is compared entry by entry before the rows are declared equal, so a hash collision costs time,
never a wrong identity.
"""

import numpy as np
from numba import njit

_SEED = np.uint64(0x9E3779B97F4A7C15)
_MULT = np.uint64(0xBF58476D1CE4E5B9)
_FINAL = np.uint64(0x94D049BB133111EB)
_SIGN = np.uint64(1) << np.uint64(63)  # the bit pattern of -0.0
_ZERO = np.uint64(0)


@njit(cache=True, nogil=True)
def first_equal_rows(bits, table, hashes, ids):
    """``ids[i]`` <- the index of the first row equal to row ``i``; returns the number of rows
    equal to an earlier one.

    Parameters
    ----------
    bits : (n, d) uint64 array, the bit patterns of C-contiguous float64 rows
    table : int64 array filled with -1, its length a power of two above n (the open-addressing
        table: index of the first row of each distinct point)
    hashes : (n,) uint64 work array
    ids : (n,) int64 array, written
    """
    n, d = bits.shape
    mask = np.uint64(table.shape[0] - 1)
    repeats = 0
    for i in range(n):
        h = _SEED
        for k in range(d):
            b = bits[i, k]
            if b == _SIGN:
                b = _ZERO
            h = (h ^ b) * _MULT
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
            if hashes[j] == h:
                same = True
                for k in range(d):
                    a = bits[i, k]
                    c = bits[j, k]
                    if a != c and not ((a == _SIGN or a == _ZERO) and (c == _SIGN or c == _ZERO)):
                        same = False
                        break
                if same:
                    ids[i] = j
                    repeats += 1
                    break
            slot = (slot + np.uint64(1)) & mask
    return repeats
