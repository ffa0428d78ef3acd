"""Reference (slow, pure Python) kernels: the product's former implementations, kept only as the
references that tests/test_native.py holds the compiled core equal to.

- LCS kernels (``lcs_length``, ``lcs_indices``, ``union_lcs_indices``, ``wlcs_mark``);
- BLEU / Google BLEU statistics (``ngram_counts``, ``closest_ref_len``, ``BleuStats``,
  ``gleu_counts``);
- sacrebleu's 13a tokenizer (``Tokenizer13a``) and nltk's Treebank word tokenizer
  (``TreebankWordTokenizer``), as Python rules.

Longest common subsequence kernels.

``lcs_length`` and ``lcs_indices`` use the bit-parallel LCS of Allison and Dix (1986) /
Crochemore et al. (2001): one row of the dynamic-programming table is a Python integer whose
zero bits mark the columns where the row's LCS grows, so a row costs a few big-integer
operations instead of a Python loop over the columns. Cell ``(i, j)`` of the classic table is
``j - popcount(row_i & (2**j - 1))``, which lets ``lcs_indices`` walk back through the table
exactly as rouge-score's ``_backtrack_norec`` does (same tie-breaking, same LCS path).

``wlcs_mark`` is the weighted LCS of the official ROUGE-1.5.5 script (``wlcs_inner`` and
``markLCS``), floating-point operations in the same order.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Any

__all__ = ["lcs_length", "lcs_masks", "lcs_rows", "lcs_indices", "lcs_table", "union_lcs_indices", "wlcs_mark",
           "ngram_counts", "closest_ref_len", "BleuStats", "gleu_counts", "Tokenizer13a", "TreebankWordTokenizer"]


def _masks(seq: Sequence[Hashable]) -> tuple[dict[Hashable, int], int]:
    masks = {}
    bit = 1
    for tok in seq:
        masks[tok] = masks.get(tok, 0) | bit
        bit <<= 1
    return masks, bit - 1


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Length of the longest common subsequence of the token sequences ``a`` and ``b``."""
    if not a or not b:
        return 0
    if len(a) < len(b):
        a, b = b, a  # fewer bits per row
    masks, full = _masks(b)
    get = masks.get
    v = full
    for tok in a:
        m = get(tok)
        if m:
            u = v & m
            v = ((v + u) | (v - u)) & full
    return len(b) - v.bit_count()


def lcs_masks(can: Sequence[Hashable]) -> tuple[dict[Hashable, int], int]:
    """The per-token bit masks of ``can`` and the all-ones row, reusable across ``lcs_rows``."""
    return _masks(can)


def lcs_rows(ref: Sequence[Hashable], can: Sequence[Hashable],
             masks: tuple[dict[Hashable, int], int] | None = None) -> list[int]:
    """Bit rows of the LCS table of ``ref`` (rows) against ``can`` (columns); row 0 first."""
    masks, full = masks or _masks(can)
    get = masks.get
    v = full
    rows = [v]
    append = rows.append
    for tok in ref:
        m = get(tok)
        if m:
            u = v & m
            v = ((v + u) | (v - u)) & full
        append(v)
    return rows


def lcs_table(ref: Sequence[Hashable], can: Sequence[Hashable]) -> list[list[int]]:
    """The full ``(len(ref)+1) x (len(can)+1)`` LCS table (for tests and small inputs)."""
    rows = lcs_rows(ref, can)
    return [[j - (r & ((1 << j) - 1)).bit_count() for j in range(len(can) + 1)] for r in rows]


def lcs_indices(ref: Sequence[Hashable], can: Sequence[Hashable],
                masks: tuple[dict[Hashable, int], int] | None = None) -> list[int]:
    """Indices into ``ref`` of the LCS that rouge-score's ``lcs_ind`` returns, in order.

    rouge-score walks back from ``(len(ref), len(can))``: diagonal on a match, left when
    ``t[i][j-1] > t[i-1][j]``, else up. With ``D = t[i][j] - t[i-1][j]`` (0 or 1) and no match,
    left happens exactly when ``D = 1``, and then ``D`` stays 1 along the row until the walk
    reaches a column where ``can`` holds ``ref[i-1]``; so a whole run of left steps is one jump
    to the highest such column below ``j`` (a bit-length of the token's mask). ``masks`` (from
    ``lcs_masks(can)``) saves rebuilding them when ``can`` is reused.
    """
    if not ref or not can:
        return []
    if masks is None:
        masks = _masks(can)
    rows = lcs_rows(ref, can, masks)
    get = masks[0].get
    i, j = len(ref), len(can)
    out = []
    while i > 0 and j > 0:
        mk = get(ref[i - 1])
        if mk:
            if (mk >> (j - 1)) & 1:
                out.append(i - 1)
                j -= 1
            else:
                low = (1 << j) - 1
                if (rows[i - 1] & low).bit_count() > (rows[i] & low).bit_count():
                    # D = 1: left to the nearest match of ref[i-1], then diagonal
                    j = (mk & (low >> 1)).bit_length() - 1
                    out.append(i - 1)
        i -= 1
    out.reverse()
    return out


def wlcs_mark(model: Sequence[Hashable], peer: Sequence[Hashable], hit_mask: list[int],
              powers: Sequence[float]) -> None:
    """ROUGE-1.5.5 ``wlcs_inner`` + ``markLCS``: mark in ``hit_mask`` the model positions on
    the weighted LCS of ``model`` and ``peer``.

    ``powers[k]`` is ``k ** weight`` (``wlcsWeight``); it must cover ``min(len) + 1`` entries.
    """
    m = len(model)
    n = len(peer)
    if m == 0 or n == 0:
        return
    # c: weighted scores, l: length of the consecutive run ending at (i, j), b: move
    c_prev = [0.0] * (n + 1)
    l_prev = [0] * (n + 1)
    moves = []
    for i in range(1, m + 1):
        tok = model[i - 1]
        c_cur = [0.0] * (n + 1)
        l_cur = [0] * (n + 1)
        b_cur = bytearray(n + 1)  # 1 diagonal, 2 up, 3 left
        for j in range(1, n + 1):
            if tok == peer[j - 1]:
                k = l_prev[j - 1]
                c_cur[j] = c_prev[j - 1] + powers[k + 1] - powers[k]
                b_cur[j] = 1
                l_cur[j] = k + 1
            elif c_prev[j] >= c_cur[j - 1]:
                c_cur[j] = c_prev[j]
                b_cur[j] = 2
            else:
                c_cur[j] = c_cur[j - 1]
                b_cur[j] = 3
        moves.append(b_cur)
        c_prev = c_cur
        l_prev = l_cur
    i, j = m, n
    while i and j:
        move = moves[i - 1][j]
        if move == 1:
            i -= 1
            j -= 1
            hit_mask[i] = 1
        elif move == 2:
            i -= 1
        else:
            j -= 1


def union_lcs_indices(ref_sents: Sequence[Sequence[Hashable]],
                      can_sents: Sequence[Sequence[Hashable]]) -> list[list[int]]:
    """For each sentence of ``ref_sents``: the sorted union over ``can_sents`` of the LCS indices
    rouge-score's ``_union_lcs`` finds (the summary-level LCS of ROUGE-Lsum).

    Per sentence pair this is ``lcs_indices``, restricted to the reference positions whose token
    occurs in the candidate sentence: at the other rows the table does not change and the walk
    only goes up, so neither the rows nor the walk need to visit them. A pair is skipped when
    the candidate holds none of the tokens whose positions are still missing from the union
    (it could add nothing), and a reference sentence stops once its union is complete.
    """
    cans = []
    vocab = set()
    for c in can_sents:
        if c:
            masks, full = _masks(c)
            cans.append((len(c), masks, full))
            vocab.update(masks)
    out = []
    for r in ref_sents:
        reachable = [i for i, tok in enumerate(r) if tok in vocab]
        union = set()
        add = union.add
        seen = -1
        for length, masks, full in cans:
            if len(union) != seen:
                seen = len(union)
                if seen == len(reachable):
                    break
                # a pair can only add positions whose token it holds: skip the pairs that
                # hold none of the tokens still missing from the union
                missing = {r[i] for i in reachable if i not in union}
            if missing.isdisjoint(masks.keys()):
                continue
            get = masks.get
            pos = []
            ms = []
            for i, tok in enumerate(r):
                m = get(tok)
                if m:
                    pos.append(i)
                    ms.append(m)
            if not pos:
                continue
            v = full
            rows = [v]
            for m in ms:
                u = v & m
                v = ((v + u) | (v ^ u)) & full  # v - u == v ^ u: u is a subset of v
                rows.append(v)
            j = length
            k = len(pos)
            while k and j:
                k -= 1
                m = ms[k]
                if (m >> (j - 1)) & 1:
                    add(pos[k])
                    j -= 1
                else:
                    low = (1 << j) - 1
                    if (rows[k] & low).bit_count() > (rows[k + 1] & low).bit_count():
                        j = (m & (low >> 1)).bit_length() - 1
                        add(pos[k])
        out.append(sorted(union))
    return out


# -- BLEU / Google BLEU statistics --------------------------------------------------------------

def ngram_counts(tokens: Sequence[str], max_order: int, min_order: int = 1) -> Counter[tuple[str, ...]]:
    """All n-grams of orders min_order..max_order as one Counter of tuples."""
    counts: Counter[tuple[str, ...]] = Counter()
    n_tok = len(tokens)
    for n in range(min_order, max_order + 1):
        if n == 1:
            counts.update((t,) for t in tokens)
        elif n <= n_tok:
            counts.update(zip(*[tokens[i:] for i in range(n)], strict=False))
    return counts


def closest_ref_len(hyp_len: int, ref_lens: list[int]) -> int:
    """The reference length closest to ``hyp_len`` (the shorter one on ties), as sacrebleu."""
    return min(ref_lens, key=lambda r: (abs(r - hyp_len), r))


class BleuStats:
    """Sufficient statistics of one example: lengths, clipped matches and totals per order."""

    __slots__ = ("hyp_len", "ref_len", "correct", "total", "denominators")

    def __init__(self, hyp_tokens: Sequence[str], refs_tokens: Sequence[Sequence[str]], max_order: int) -> None:
        hyp_len = len(hyp_tokens)
        hyp = ngram_counts(hyp_tokens, max_order)
        max_ref: dict[tuple[str, ...], int] = {}
        for ref in refs_tokens:
            ref_counts = ngram_counts(ref, max_order)
            for g in hyp:
                c = ref_counts.get(g, 0)
                if c > max_ref.get(g, 0):
                    max_ref[g] = c
        correct = [0] * max_order
        total = [0] * max_order
        for g, c in hyp.items():
            n = len(g) - 1
            total[n] += c
            m = max_ref.get(g)
            if m:
                correct[n] += c if c < m else m
        self.hyp_len = hyp_len
        self.ref_len = closest_ref_len(hyp_len, [len(r) for r in refs_tokens])
        self.correct = correct
        self.total = total
        # nltk's modified_precision denominators: at least 1 per order and example
        self.denominators = [max(1, t) for t in total]

    def sacrebleu_row(self) -> list[int]:
        """sacrebleu's segment statistics: ``[hyp_len, ref_len, correct..., total...]``."""
        return [self.hyp_len, self.ref_len, *self.correct, *self.total]


def gleu_counts(hyp_tokens: Sequence[str], refs_tokens: Sequence[Sequence[str]], min_len: int,
                max_len: int) -> tuple[int, int] | None:
    """nltk ``corpus_gleu``'s best (matches, total) of one example, or None."""
    hyp = ngram_counts(hyp_tokens, max_len, min_len)
    tpfp = sum(hyp.values())
    best: tuple[int, int] | None = None
    for ref_tokens in refs_tokens:
        ref = ngram_counts(ref_tokens, max_len, min_len)
        tpfn = sum(ref.values())
        if len(ref) < len(hyp):
            tp = sum(min(c, hyp[g]) for g, c in ref.items() if g in hyp)
        else:
            tp = sum(min(c, ref[g]) for g, c in hyp.items() if g in ref)
        n_all = max(tpfp, tpfn)
        if n_all > 0 and (best is None or tp / n_all > best[0] / best[1]):
            best = (tp, n_all)
    return best


# -- tokenizers ---------------------------------------------------------------------------------

class Tokenizer13a:
    """mteval-v13a tokenization as sacrebleu's ``13a``, returning tokens: the same rules in the
    same order as sacrebleu 2.x, including its ``rstrip`` of the segment (one character
    translation table instead of the first regular expression; rules skipped when the text
    lacks the characters they need)."""

    # sacrebleu's first rule, r"([\{-\~\[-\` -\&\(-\+\:-\@\/])" -> r" \1 ", pads each
    # character of a fixed class with spaces: the same as a character translation table
    _PAD = str.maketrans({c: f" {c} " for c in
                          "{|}~" "[\\]^_`" " !\"#$%&" "()*+" ":;<=>?@" "/"})
    _rules = [
        (re.compile(r"([^0-9])([\.,])"), r"\1 \2 ", ".,"),
        (re.compile(r"([\.,])([^0-9])"), r" \1 \2", ".,"),
        (re.compile(r"([0-9])(-)"), r"\1 \2 ", "-"),
    ]

    def __init__(self, lowercase: bool = False) -> None:
        self.lowercase = bool(lowercase)

    def __call__(self, text: str) -> list[str]:
        line = text.lower() if self.lowercase else text
        line = line.rstrip()
        line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
        if "&" in line:
            line = (line.replace("&quot;", '"').replace("&amp;", "&")
                    .replace("&lt;", "<").replace("&gt;", ">"))
        line = f" {line} ".translate(self._PAD)
        for pattern, repl, needs in self._rules:
            if needs[0] in line or needs[-1] in line:  # else the rule cannot match
                line = pattern.sub(repl, line)
        return line.split()


class TreebankWordTokenizer:
    """nltk's ``word_tokenize(text, preserve_line=True)``, token for token, faster.

    The rules are nltk's own ``NLTKWordTokenizer`` patterns, in its order and compiled with the
    same ``regex`` engine (without nltk's per-call time-out wrapper). On ASCII text a rule is
    skipped when the text holds none of the characters the rule needs in order to match: a
    pattern that cannot match leaves the text as it is, so no token changes. Non-ASCII text
    (where case-insensitive matching can fold letters such as U+0131 to ASCII) runs every rule.
    """

    # pattern -> characters (or substrings, for the lower-cased text) one of which must occur
    _TRIGGERS = {
        "([«“‘„]|[`]+)": "`",
        r"^\"": '"',
        r"(``)": "`",
        r"([ \(\[{<])(\"|\'{2})": "\"'",
        r"(?i)(?<!\w)(\')(?!(?:re|ve|ll|m|t|s|d|n)\b)(?=\w)": "'",
        "([»”’])": "",
        r"''": "'",
        r'"': '"',
        r"\s+": "'",  # only the apostrophe rules after it depend on single spaces
        r"([^' ])('[sS]|'[mM]|'[dD]|') ": "'",
        r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ": "'",
        r'([^\.])(\.)([\]\)}>"\'' "»”’ " r"]*+)\s*$": ".",
        r"([:,])([^\d])": ":,",
        r"([:,])$": ":,",
        r"\.{2,}": ".",
        r"[;@#$%&]": ";@#$%&",
        "[\u2012-\u2015]": "",
        r'([^\.])(\.)([\]\)}>"\']*)\s*$': ".",
        r"[?!]": "?!",
        r"([^'])' ": "'",
        r"[*]": "*",
        r"[\]\[\(\)\{\}\<\>]": "[](){}<>",
        r"--": "-",
    }
    _WORDS = {
        r"(?i)\b(can)(?#X)(not)\b": "cannot", r"(?i)\b(d)(?#X)('ye)\b": "d'ye",
        r"(?i)\b(gim)(?#X)(me)\b": "gimme", r"(?i)\b(gon)(?#X)(na)\b": "gonna",
        r"(?i)\b(got)(?#X)(ta)\b": "gotta", r"(?i)\b(lem)(?#X)(me)\b": "lemme",
        r"(?i)\b(more)(?#X)('n)\b": "more'n", r"(?i)\b(wan)(?#X)(na)(?=\s)": "wanna",
        r"(?i) ('t)(?#X)(is)\b": "'tis", r"(?i) ('t)(?#X)(was)\b": "'twas",
    }
    _stages: Any = None

    def __init__(self) -> None:
        if TreebankWordTokenizer._stages is None:
            TreebankWordTokenizer._stages = self._build()

    @classmethod
    def _build(cls) -> Any:
        import regex
        from nltk.tokenize.destructive import NLTKWordTokenizer as T

        def compiled(rules: Any) -> list[tuple[Any, str, frozenset[str] | None]]:
            out = []
            for timed, repl in rules:
                pattern = getattr(timed, "pattern", timed)
                flags = getattr(timed, "flags", 0)
                # None: unknown rule (a newer nltk), always applied
                trigger = cls._TRIGGERS.get(pattern)
                out.append((regex.compile(pattern, flags).sub, repl,
                            None if trigger is None else frozenset(trigger)))
            return out

        def words(rules: Any) -> list[tuple[Any, str, str | None]]:
            return [(r.sub, r" \1 \2 ", cls._WORDS.get(r.pattern)) for r in rules]

        return (compiled(T.STARTING_QUOTES), compiled(T.PUNCTUATION), compiled([T.PARENS_BRACKETS]),
                compiled([T.DOUBLE_DASHES]), compiled(T.ENDING_QUOTES),
                words(T.CONTRACTIONS2) + words(T.CONTRACTIONS3))

    def _tokenize(self, text: str) -> list[str]:
        starting, punctuation, parens, dashes, ending, contractions = self._stages
        fast = text.isascii()
        chars: set[str] = set()
        if fast:
            # the rules only add spaces, and turn '"' into `` or '': the text's characters
            # plus those bound every character a later rule can see
            chars = set(text)
            if '"' in chars:
                chars.update("`'")
        for rules in (starting, punctuation, parens, dashes, ending):
            if rules is ending:
                text = " " + text + " "
            for sub, repl, trigger in rules:
                if fast and trigger is not None and chars.isdisjoint(trigger):
                    continue
                text = sub(repl, text)
        low = text.lower() if fast else ""
        for sub, repl, word in contractions:
            if fast and word is not None and word not in low:
                continue
            text = sub(repl, text)
        return text.split()

    def __call__(self, text: str) -> list[str]:
        return self._tokenize(text)
