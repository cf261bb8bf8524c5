"""The one rule of names (``sparsekit._names``): canonical spellings and the did-you-mean hint."""

import difflib
import random

import pytest

from sparsekit._names import closest_match, did_you_mean, normalize_name


def test_normalize_name_reads_case_underscores_and_spaces_alike():
    """Oracle: the rule of the registry's docs: case-insensitive, ``_`` and spaces read as ``-``."""
    for spelling in ("Sparse Coding", "sparse_coding", " SPARSE-coding ", "Sparse_Coding"):
        assert normalize_name(spelling) == "sparse-coding"
    with pytest.raises(TypeError, match="component name must be a str, got int"):
        normalize_name(3)


def _words(rng, k):
    return ["".join(rng.choice("abc") for _ in range(rng.randint(1, 4))) for _ in range(k)]


@pytest.mark.parametrize("cutoff", [0.0, 0.5, 0.6, 0.8, 1.0])
def test_closest_match_is_difflibs_including_ties_and_the_cutoff(cutoff):
    """Oracle: ``difflib.get_close_matches(word, options, n=1, cutoff)``. Words of a
    three-letter alphabet make many equal ratios (ties: difflib keeps the greatest string) and
    ratios exactly at the cutoff (kept: ``>=``); the options' order does not matter."""
    rng = random.Random(int(cutoff * 10))
    for _ in range(150):
        word, options = _words(rng, 1)[0], sorted(set(_words(rng, 6)))
        best = difflib.get_close_matches(word, options, n=1, cutoff=cutoff)
        expected = best[0] if best else None
        for order in (options, options[::-1]):
            assert closest_match(word, order, cutoff) == expected, (word, order)
        hint = f" Did you mean {expected!r}?" if expected is not None else ""
        assert did_you_mean(word, options, cutoff) == hint


def test_closest_match_boundary_and_options_as_given():
    """Oracle: closed forms of ``SequenceMatcher.ratio`` = 2 M / T: "ab" against "ac" is
    2 * 1 / 4 = 0.5, kept at cutoff 0.5 and dropped just above; the option comes back as given
    (an int), the hint quotes its text."""
    assert closest_match("ab", ["ac"], cutoff=0.5) == "ac"
    assert closest_match("ab", ["ac"], cutoff=0.51) is None
    assert closest_match("ab", ["ab"], cutoff=1.0) == "ab"
    assert closest_match(3, [30, 4]) == 30 and did_you_mean(3, [30, 4]) == " Did you mean '30'?"
    assert did_you_mean("ab", ["ac"], cutoff=0.6) == ""
    assert closest_match("x", []) is None and did_you_mean("x", iter(())) == ""
