"""nltk's Treebank word tokenizer (``word_tokenize(text, preserve_line=True)``), as METEOR uses it."""

from __future__ import annotations

from typing import Any

from .base import Tokenizer

__all__ = ["TreebankWordTokenizer"]


class TreebankWordTokenizer(Tokenizer):
    """nltk's ``word_tokenize(text, preserve_line=True)``, token for token, faster.

    The rules are nltk's own ``NLTKWordTokenizer`` patterns, in its order and compiled with the
    same ``regex`` engine (without nltk's per-call time-out wrapper). On ASCII text a rule is
    skipped when the text holds none of the characters the rule needs in order to match: a
    pattern that cannot match leaves the text as it is, so no token changes. Non-ASCII text
    (where case-insensitive matching can fold letters such as U+0131 to ASCII) runs every rule.
    """

    name = "treebank"
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
        self._memo: dict[str, list[str]] = {}

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
        tokens = self._memo.get(text)
        if tokens is None:
            if len(self._memo) >= 65536:
                self._memo.clear()
            tokens = self._memo[text] = self._tokenize(text)
        return list(tokens)
