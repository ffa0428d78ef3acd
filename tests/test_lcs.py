import random

import pytest
from rouge_score import rouge_scorer

from textgen_metrics.lcs import lcs_indices, lcs_length, lcs_table


def dp_table(a, b):
    t = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            t[i][j] = t[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1] else max(t[i - 1][j], t[i][j - 1])
    return t


def random_seqs(seed, n=400):
    rng = random.Random(seed)
    for _ in range(n):
        alphabet = list("abcdefgh")[: rng.randint(1, 8)]
        a = [rng.choice(alphabet) for _ in range(rng.randint(0, 90))]
        b = [rng.choice(alphabet) for _ in range(rng.randint(0, 90))]
        yield a, b


@pytest.mark.parametrize("seed", range(3))
def test_bit_parallel_table_equals_dynamic_programming(seed):
    for a, b in random_seqs(seed, 150):
        assert lcs_table(a, b) == dp_table(a, b)
        assert lcs_length(a, b) == dp_table(a, b)[-1][-1]


@pytest.mark.parametrize("seed", range(3))
def test_lcs_indices_follow_rouge_score_backtrack(seed):
    for a, b in random_seqs(seed + 10):
        assert lcs_indices(a, b) == rouge_scorer.lcs_ind(a, b)


def test_lcs_length_on_words_longer_than_a_machine_word():
    rng = random.Random(5)
    a = [rng.choice(["x", "y", "z", "w"]) for _ in range(700)]
    b = [rng.choice(["x", "y", "z", "w"]) for _ in range(650)]
    assert lcs_length(a, b) == rouge_scorer._lcs_table(a, b)[-1][-1]


@pytest.mark.parametrize("seed", range(3))
def test_union_lcs_indices_match_rouge_score(seed):
    from textgen_metrics.lcs import union_lcs_indices

    rng = random.Random(seed + 100)
    for _ in range(150):
        alphabet = list("abcdefghij")[: rng.randint(1, 10)]

        def sents(alphabet: list[str] = alphabet) -> list[list[str]]:
            return [[rng.choice(alphabet) for _ in range(rng.randint(0, 25))] for _ in range(rng.randint(0, 6))]

        refs, cans = sents(), sents()
        got = union_lcs_indices(refs, cans)
        want = [sorted(rouge_scorer._find_union([rouge_scorer.lcs_ind(r, c) for c in cans])) for r in refs]
        assert got == want
