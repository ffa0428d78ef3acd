"""Generated corpora for the machine-translation metrics: English-like text, random Unicode,
Chinese, Japanese and Korean, empty and blank lines, a varying number of references."""

from __future__ import annotations

import random

from corpus import multi_references, perturb, text

_CJK = ("的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说"
        "产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使"
        "点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明"
        "看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料"
        "象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指"
        "几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶"
        "油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议"
        "声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影"
        "算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何"
        "除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属"
        "圆包火住调满县局照参红细引听该铁价严。，、？！")
_KANA = ("あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをんアイ"
         "ウエオカキクケコサシスセソタチツテトナニヌネノ")
_HANGUL_START, _HANGUL_END = 0xAC00, 0xD7A3


def _cjk(rng: random.Random, lo: int = 0, hi: int = 30) -> str:
    return "".join(rng.choice(_CJK) for _ in range(rng.randint(lo, hi)))


def _japanese(rng: random.Random) -> str:
    return "".join(rng.choice(_KANA + _CJK[:200]) for _ in range(rng.randint(0, 30)))


def _korean(rng: random.Random) -> str:
    words = ["".join(chr(rng.randint(_HANGUL_START, _HANGUL_END)) for _ in range(rng.randint(1, 4)))
             for _ in range(rng.randint(0, 8))]
    return " ".join(words) + rng.choice(["", ".", "?", " 입니다."])


def _unicode(rng: random.Random) -> str:
    return "".join(chr(rng.randint(0, 0x2FFF)) for _ in range(rng.randint(0, 40)))


def _mutate(rng: random.Random, s: str) -> str:
    chars = list(s)
    for _ in range(rng.randint(0, 4)):
        if chars and rng.random() < 0.5:
            del chars[rng.randrange(len(chars))]
        elif chars:
            i, j = rng.randrange(len(chars)), rng.randrange(len(chars))
            chars[i], chars[j] = chars[j], chars[i]
    return "".join(chars)


def mt_corpus(n: int, seed: int, kinds: tuple[str, ...] = ("english", "unicode", "cjk", "empty"),
              max_refs: int = 4) -> tuple[list[str], list[list[str]]]:
    """``n`` predictions with 1..``max_refs`` references each, of the given kinds mixed:
    english (related and unrelated text, tests/corpus.py), unicode (random code points up to
    U+2FFF, control and space characters included), cjk (Chinese with its punctuation),
    japanese, korean, empty (empty and blank lines)."""
    rng = random.Random(seed)
    english = multi_references(n, seed=seed, max_refs=max_refs)
    preds: list[str] = []
    refs: list[list[str]] = []
    for i in range(n):
        kind = kinds[i % len(kinds)]
        k = rng.randint(1, max_refs)
        if kind == "english":
            p, rs = english[i]
            preds.append(p)
            refs.append(list(rs))
            continue
        if kind == "empty":
            pool = ["", " ", "\n", "\t \n", "a", text(rng)]
            preds.append(rng.choice(pool))
            refs.append([rng.choice(pool) for _ in range(k)])
            continue
        make = {"unicode": _unicode, "cjk": _cjk, "japanese": _japanese, "korean": _korean}[kind]
        base = make(rng)
        preds.append(_mutate(rng, base) if rng.random() < 0.7 else make(rng))
        refs.append([_mutate(rng, base) if rng.random() < 0.7 else make(rng) for _ in range(k)])
    return preds, refs


def sacre_refs(refs: list[list[str]]) -> list[list[str | None]]:
    """References as sacrebleu takes them: one stream per reference, None where an example has
    fewer."""
    width = max(len(r) for r in refs)
    return [[r[k] if k < len(r) else None for r in refs] for k in range(width)]


def second_system(predictions: list[str], seed: int) -> list[str]:
    """Another system's outputs for the same examples: words dropped, swapped or replaced in
    most, some left as they are."""
    rng = random.Random(seed)
    return [p if rng.random() < 0.2 else perturb(rng, p) for p in predictions]
