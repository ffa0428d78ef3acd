"""Tokenizers shared by the lexical metrics.

Every tokenizer is a callable ``str -> list[str]`` with a ``signature`` string that records the
settings that change scores. Named tokenizers:

- ``"rouge_score"`` (the ROUGE default): rouge-score 0.1.2's tokenizer, for parity: lower-case,
  every run of characters outside ``[a-z0-9]`` becomes a space, split; with the stemmer, Porter
  (nltk, as rouge-score) on tokens longer than 3 characters. Non-Latin scripts are dropped.
- ``"unicode"``: NFKC, case-folded, keeps letters, digits and combining marks of every script;
  scripts written without spaces (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar) give one
  token per character. The stemmer, when on, applies to ASCII tokens only.
- ``"whitespace"``: lower-case, split on whitespace, punctuation kept.
"""

import re
import unicodedata

__all__ = [
    "PorterStemmer",
    "RougeScoreTokenizer",
    "UnicodeTokenizer",
    "WhitespaceTokenizer",
    "CallableTokenizer",
    "get_tokenizer",
    "TOKENIZERS",
]

_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_VALID = re.compile(r"^[a-z0-9]+$")


class PorterStemmer:
    """nltk's Porter stemmer (the NLTK_EXTENSIONS mode rouge-score uses) with a memo.

    Stemming is a pure function of the word, so each distinct word is stemmed once per process;
    the memo grows with the vocabulary, not with the number of texts.
    """

    _shared = None

    def __init__(self):
        from nltk.stem import porter  # lazy: only the stemmer needs nltk

        self._stem = porter.PorterStemmer().stem
        self._memo = {}

    @classmethod
    def shared(cls):
        if cls._shared is None:
            cls._shared = cls()
        return cls._shared

    def __call__(self, word):
        memo = self._memo
        out = memo.get(word)
        if out is None:
            out = memo[word] = self._stem(word)
        return out


class _Tokenizer:
    name = "base"

    def __init__(self, use_stemmer=False):
        self.use_stemmer = bool(use_stemmer)
        self._stemmer = PorterStemmer.shared() if self.use_stemmer else None

    @property
    def signature(self):
        return f"{self.name}{'+porter' if self.use_stemmer else ''}"

    def __repr__(self):
        return f"{type(self).__name__}(use_stemmer={self.use_stemmer})"


class RougeScoreTokenizer(_Tokenizer):
    """rouge-score 0.1.2 ``tokenize.tokenize``, token for token, with a memoised stemmer."""

    name = "rouge_score"

    def __init__(self, use_stemmer=False):
        super().__init__(use_stemmer)
        # word -> token after stemming and validation (None when the stem is not [a-z0-9]+)
        self._memo = {}
        self._invalid = False

    def __call__(self, text):
        words = _NON_ALNUM.sub(" ", text.lower()).split()
        if self._stemmer is None:
            return words
        memo = self._memo
        try:
            out = [memo[w] for w in words]
        except KeyError:
            stem = self._stemmer
            for w in words:
                if w not in memo:
                    t = stem(w) if len(w) > 3 else w
                    if _VALID.match(t):
                        memo[w] = t
                    else:  # rouge-score drops a stem that is not [a-z0-9]+
                        memo[w] = None
                        self._invalid = True
            out = [memo[w] for w in words]
        return [t for t in out if t is not None] if self._invalid else out


class UnicodeTokenizer(_Tokenizer):
    """Script-aware tokenizer that keeps every script (rouge-score drops non-Latin text)."""

    name = "unicode"
    _pattern = None

    def __init__(self, use_stemmer=False):
        super().__init__(use_stemmer)
        if UnicodeTokenizer._pattern is None:
            import regex  # installed with nltk; needed for \p{..} classes

            nospace = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}"
            UnicodeTokenizer._pattern = regex.compile(
                rf"[{nospace}][\p{{M}}]*|(?:(?![{nospace}])[\p{{L}}\p{{N}}\p{{M}}])+"
            )

    def __call__(self, text):
        tokens = self._pattern.findall(unicodedata.normalize("NFKC", text).casefold())
        if self._stemmer is None:
            return tokens
        stem = self._stemmer
        return [stem(t) if len(t) > 3 and t.isascii() and t.isalpha() else t for t in tokens]


class WhitespaceTokenizer(_Tokenizer):
    """Lower-case and split on whitespace; punctuation stays attached."""

    name = "whitespace"

    def __call__(self, text):
        tokens = text.lower().split()
        if self._stemmer is None:
            return tokens
        stem = self._stemmer
        return [stem(t) if len(t) > 3 else t for t in tokens]


class CallableTokenizer:
    """A user's ``str -> list[str]`` function (or an object with ``.tokenize``), used as is.

    As in rouge-score and Hugging Face's rouge, a user tokenizer's tokens are not stemmed.
    """

    def __init__(self, fn):
        tokenize = getattr(fn, "tokenize", None)
        self._fn = tokenize if callable(tokenize) else fn
        self.use_stemmer = False
        name = getattr(fn, "__qualname__", None) or type(fn).__name__
        self.signature = f"callable:{name}"

    def __call__(self, text):
        tokens = self._fn(text)
        if not isinstance(tokens, (list, tuple)) or not all(isinstance(t, str) for t in tokens):
            raise TypeError(
                f"tokenizer: a tokenizer must return a list of str, got {type(tokens).__name__}"
            )
        return list(tokens)


TOKENIZERS = {
    "rouge_score": RougeScoreTokenizer,
    "default": RougeScoreTokenizer,
    "unicode": UnicodeTokenizer,
    "whitespace": WhitespaceTokenizer,
}


def get_tokenizer(tokenizer=None, use_stemmer=False):
    """Resolve ``tokenizer`` (None, a name from ``TOKENIZERS`` or a callable) to a tokenizer."""
    if tokenizer is None:
        return RougeScoreTokenizer(use_stemmer)
    if isinstance(tokenizer, str):
        try:
            return TOKENIZERS[tokenizer](use_stemmer)
        except KeyError:
            raise ValueError(
                f"tokenizer: unknown tokenizer {tokenizer!r}; "
                f"choose one of {sorted(TOKENIZERS)} or pass a callable"
            ) from None
    if isinstance(tokenizer, _Tokenizer):
        return tokenizer
    if callable(tokenizer) or hasattr(tokenizer, "tokenize"):
        return CallableTokenizer(tokenizer)
    raise TypeError(
        f"tokenizer: expected None, a name or a callable, got {type(tokenizer).__name__}"
    )


def split_sentences(text):
    """Split prose into sentences without a model (no punkt download).

    Splits after ``.``, ``!``, ``?`` or ``…`` (and closing quotes or brackets) followed by
    whitespace, and on newlines. It is not nltk's punkt: abbreviations such as "Dr." split too.
    """
    parts = []
    for line in text.split("\n"):
        parts.extend(_SENT_END.split(line))
    return [p.strip() for p in parts if p.strip()]


_SENT_END = re.compile(r"(?<=[.!?\u2026])\s+|(?<=[.!?\u2026][\"'\u201d\u2019)\]])\s+")


class Tokenizer13a:
    """mteval-v13a tokenization as sacrebleu's ``13a`` (the BLEU default), returning tokens.

    Same rules in the same order as sacrebleu 2.x, including its ``rstrip`` of the segment; a
    bounded memo makes repeated segments (shared references) free.
    """

    signature = "13a"
    use_stemmer = False
    # sacrebleu's first rule, r"([\{-\~\[-\` -\&\(-\+\:-\@\/])" -> r" \1 ", pads each
    # character of a fixed class with spaces: the same as a character translation table
    _PAD = str.maketrans({c: f" {c} " for c in
                          "{|}~" "[\\]^_`" " !\"#$%&" "()*+" ":;<=>?@" "/"})
    _rules = [
        (re.compile(r"([^0-9])([\.,])"), r"\1 \2 ", ".,"),
        (re.compile(r"([\.,])([^0-9])"), r" \1 \2", ".,"),
        (re.compile(r"([0-9])(-)"), r"\1 \2 ", "-"),
    ]

    def __init__(self, lowercase=False):
        self.lowercase = bool(lowercase)
        if self.lowercase:
            self.signature = "13a+lc"
        self._memo = {}

    def __call__(self, text):
        memo = self._memo
        tokens = memo.get(text)
        if tokens is None:
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
            tokens = line.split()
            if len(memo) >= 65536:
                memo.clear()
            memo[text] = tokens
        return tokens


class SplitTokenizer:
    """sacrebleu's ``none``: the text split on whitespace, nothing else."""

    signature = "none"
    use_stemmer = False

    def __call__(self, text):
        return text.split()


BLEU_TOKENIZERS = {"13a": Tokenizer13a, "none": SplitTokenizer}


def get_bleu_tokenizer(tokenizer=None, lowercase=False):
    """``None``/``"13a"`` (default), ``"none"``, or a callable ``str -> list[str]``."""
    if tokenizer is None or tokenizer == "13a":
        return Tokenizer13a(lowercase)
    if isinstance(tokenizer, str):
        if tokenizer in BLEU_TOKENIZERS:
            return BLEU_TOKENIZERS[tokenizer]()
        raise ValueError(
            f"tokenizer: unknown tokenizer {tokenizer!r}; choose one of "
            f"{sorted(BLEU_TOKENIZERS)} or pass a callable"
        )
    if callable(tokenizer) or hasattr(tokenizer, "tokenize"):
        return CallableTokenizer(tokenizer)
    raise TypeError(f"tokenizer: expected None, a name or a callable, got {type(tokenizer).__name__}")


class TreebankWordTokenizer:
    """nltk's ``word_tokenize(text, preserve_line=True)``, token for token, faster.

    The rules are nltk's own ``NLTKWordTokenizer`` patterns, in its order and compiled with the
    same ``regex`` engine (without nltk's per-call time-out wrapper). On ASCII text a rule is
    skipped when the text holds none of the characters the rule needs in order to match: a
    pattern that cannot match leaves the text as it is, so no token changes. Non-ASCII text
    (where case-insensitive matching can fold letters such as U+0131 to ASCII) runs every rule.
    """

    signature = "treebank"
    use_stemmer = False
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
    _stages = None

    def __init__(self):
        if TreebankWordTokenizer._stages is None:
            TreebankWordTokenizer._stages = self._build()
        self._memo = {}

    @classmethod
    def _build(cls):
        import regex
        from nltk.tokenize.destructive import NLTKWordTokenizer as T

        def compiled(rules):
            out = []
            for timed, repl in rules:
                pattern = getattr(timed, "pattern", timed)
                flags = getattr(timed, "flags", 0)
                # None: unknown rule (a newer nltk), always applied
                trigger = cls._TRIGGERS.get(pattern)
                out.append((regex.compile(pattern, flags).sub, repl,
                            None if trigger is None else frozenset(trigger)))
            return out

        def words(rules):
            return [(r.sub, r" \1 \2 ", cls._WORDS.get(r.pattern)) for r in rules]

        return (compiled(T.STARTING_QUOTES), compiled(T.PUNCTUATION), compiled([T.PARENS_BRACKETS]),
                compiled([T.DOUBLE_DASHES]), compiled(T.ENDING_QUOTES),
                words(T.CONTRACTIONS2) + words(T.CONTRACTIONS3))

    def _tokenize(self, text):
        starting, punctuation, parens, dashes, ending, contractions = self._stages
        fast = text.isascii()
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
        low = text.lower() if fast else None
        for sub, repl, word in contractions:
            if fast and word is not None and word not in low:
                continue
            text = sub(repl, text)
        return text.split()

    def __call__(self, text):
        tokens = self._memo.get(text)
        if tokens is None:
            if len(self._memo) >= 65536:
                self._memo.clear()
            tokens = self._memo[text] = self._tokenize(text)
        return list(tokens)
