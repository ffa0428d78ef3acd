"""Convert the public human-judgment sets into the compact files shipped in the package.

    python tools/convert_human_judgments.py [SOURCE] [--out DIR]

SOURCE is the folder of the sets as their authors published them (default: ``../shared/human-judgments``
beside the checkout, the layout its README describes); DIR is where the files go (default:
``src/textgen_metrics/data/human``). Only this tool reads SOURCE: the package and its tests read
the files it writes, through :mod:`textgen_metrics.meta.data`.

One file per set, ``<name>.json.xz`` (xz preset 9 | extreme, no timestamps: a rerun writes the
same bytes). Each holds one JSON object:

- ``format``: ``1``;
- ``info``: the set's card (title, description, SPDX licence and its text, BibTeX citation, the
  repository and commit it came from, the human and score columns, defaults, counts) and
  ``published``: the figures its authors published, read here from their files (the one exception,
  G-Eval's Table 1 on SummEval, is typed below from the paper, as marked);
- ``items``: columns ``id``, ``source``, ``references`` (a list per item) and, where a set has
  them, more item-level fields (``context``, ``query``), so a document is stored once;
- ``rows``: columns ``item`` (an index into ``items``), ``system``, ``prediction``, ``split``,
  ``human`` (one column per dimension), ``scores`` (one column per score) and ``extra`` (row-level
  fields such as ``baseline`` or ``dataset``); a ``references`` column, where present, gives a
  row its own references (FRANK's CNN/DM systems each have their own copy of the reference);
- ``judges`` (LLMBar sets): each stored judge's verdicts in both orders, two characters per pair
  (``a``, ``b`` or ``-`` for no usable verdict, each read against the original order), with the
  ``statistics.json`` the authors published beside them.

Numbers are kept as the sources hold them (floats as parsed, so JSON writes them back exactly).
"""

from __future__ import annotations

import argparse
import csv
import json
import lzma
import os
import pickle
import re
import sys
import tarfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

FORMAT = 1
ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = ROOT.parent / "shared" / "human-judgments"
DEFAULT_OUT = ROOT / "src" / "textgen_metrics" / "data" / "human"
XZ_PRESET = 9 | lzma.PRESET_EXTREME

# -- citations (BibTeX; LLMBar's and the MQM study's are read from their READMEs) ---------------
BARTSCORE_BIB = """@inproceedings{yuan2021bartscore,
  title={{BARTScore}: Evaluating Generated Text as Text Generation},
  author={Yuan, Weizhe and Neubig, Graham and Liu, Pengfei},
  booktitle={Advances in Neural Information Processing Systems},
  volume={34},
  pages={27263--27277},
  year={2021}
}"""
SUMMEVAL_BIB = """@article{fabbri2021summeval,
  title={{SummEval}: Re-evaluating Summarization Evaluation},
  author={Fabbri, Alexander R. and Kry{\\'s}ci{\\'n}ski, Wojciech and McCann, Bryan and Xiong, Caiming and
    Socher, Richard and Radev, Dragomir},
  journal={Transactions of the Association for Computational Linguistics},
  volume={9},
  pages={391--409},
  year={2021}
}"""
GEVAL_BIB = """@inproceedings{liu2023geval,
  title={{G-Eval}: {NLG} Evaluation using {GPT}-4 with Better Human Alignment},
  author={Liu, Yang and Iter, Dan and Xu, Yichong and Wang, Shuohang and Xu, Ruochen and Zhu, Chenguang},
  booktitle={Proceedings of the 2023 Conference on Empirical Methods in Natural Language Processing},
  pages={2511--2522},
  year={2023}
}"""
REALSUMM_BIB = """@inproceedings{bhandari2020realsumm,
  title={Re-evaluating Evaluation in Text Summarization},
  author={Bhandari, Manik and Gour, Pranav Narayan and Ashfaq, Atabak and Liu, Pengfei and Neubig, Graham},
  booktitle={Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing (EMNLP)},
  pages={9347--9359},
  year={2020}
}"""
UNIEVAL_BIB = """@inproceedings{zhong2022unieval,
  title={Towards a Unified Multi-Dimensional Evaluator for Text Generation},
  author={Zhong, Ming and Liu, Yang and Yin, Da and Mao, Yuning and Jiao, Yizhu and Liu, Pengfei and Zhu,
    Chenguang and Ji, Heng and Han, Jiawei},
  booktitle={Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing},
  pages={2023--2038},
  year={2022}
}"""
QAGS_BIB = """@inproceedings{wang2020qags,
  title={Asking and Answering Questions to Evaluate the Factual Consistency of Summaries},
  author={Wang, Alex and Cho, Kyunghyun and Lewis, Mike},
  booktitle={Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics},
  pages={5008--5020},
  year={2020}
}"""
USR_BIB = """@inproceedings{mehri2020usr,
  title={{USR}: An Unsupervised and Reference Free Evaluation Metric for Dialog Generation},
  author={Mehri, Shikib and Eskenazi, Maxine},
  booktitle={Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics},
  pages={681--707},
  year={2020}
}"""
SF_BIB = """@inproceedings{wen2015sclstm,
  title={Semantically Conditioned {LSTM}-based Natural Language Generation for Spoken Dialogue Systems},
  author={Wen, Tsung-Hsien and Ga{\\v{s}}i{\\'c}, Milica and Mrk{\\v{s}}i{\\'c}, Nikola and Su, Pei-Hao and
    Vandyke, David and Young, Steve},
  booktitle={Proceedings of the 2015 Conference on Empirical Methods in Natural Language Processing},
  pages={1711--1721},
  year={2015}
}
@inproceedings{novikova2017why,
  title={Why We Need New Evaluation Metrics for {NLG}},
  author={Novikova, Jekaterina and Du{\\v{s}}ek, Ond{\\v{r}}ej and Cercas Curry, Amanda and Rieser, Verena},
  booktitle={Proceedings of the 2017 Conference on Empirical Methods in Natural Language Processing},
  pages={2241--2252},
  year={2017}
}"""
FRANK_BIB = """@inproceedings{pagnoni2021frank,
  title={Understanding Factuality in Abstractive Summarization with {FRANK}: A Benchmark for Factuality Metrics},
  author={Pagnoni, Artidoro and Balachandran, Vidhisha and Tsvetkov, Yulia},
  booktitle={Proceedings of the 2021 Conference of the North American Chapter of the Association for
    Computational Linguistics: Human Language Technologies},
  pages={4812--4829},
  year={2021}
}"""
MTBENCH_BIB = """@inproceedings{zheng2023judging,
  title={Judging {LLM}-as-a-Judge with {MT}-Bench and Chatbot Arena},
  author={Zheng, Lianmin and Chiang, Wei-Lin and Sheng, Ying and Zhuang, Siyuan and Wu, Zhanghao and Zhuang,
    Yonghao and Lin, Zi and Li, Zhuohan and Li, Dacheng and Xing, Eric P. and Zhang, Hao and Gonzalez, Joseph
    E. and Stoica, Ion},
  booktitle={Advances in Neural Information Processing Systems, Datasets and Benchmarks Track},
  year={2023}
}"""
HALUEVAL_BIB = """@inproceedings{li2023halueval,
  title={{HaluEval}: A Large-Scale Hallucination Evaluation Benchmark for Large Language Models},
  author={Li, Junyi and Cheng, Xiaoxue and Zhao, Wayne Xin and Nie, Jian-Yun and Wen, Ji-Rong},
  booktitle={Proceedings of the 2023 Conference on Empirical Methods in Natural Language Processing},
  pages={6449--6464},
  year={2023}
}"""

# G-Eval (Liu et al. 2023), Table 1: the ROUGE rows, summary-level Spearman rho / Kendall tau on
# SummEval (UniEval's rows). Typed once from the paper, as ../shared/human-judgments/README.md
# ("Published figures") lists them: the only figures here not read from a source file.
GEVAL_TABLE1_ROUGE = {
    "ROUGE-1": {"coherence": (0.167, 0.126), "consistency": (0.160, 0.130), "fluency": (0.115, 0.094),
                "relevance": (0.326, 0.252)},
    "ROUGE-2": {"coherence": (0.184, 0.139), "consistency": (0.187, 0.155), "fluency": (0.159, 0.128),
                "relevance": (0.290, 0.219)},
    "ROUGE-L": {"coherence": (0.128, 0.099), "consistency": (0.115, 0.092), "fluency": (0.105, 0.084),
                "relevance": (0.311, 0.237)},
}


class Source:
    """The source folder: files read by their path under it."""

    def __init__(self, root: Path):
        self.root = root
        if not (root / "README.md").is_file():
            raise SystemExit(f"{root}: not the human-judgments folder (no README.md)")

    def path(self, rel: str) -> Path:
        return self.root / rel

    def text(self, rel: str) -> str:
        return (self.root / rel).read_text(encoding="utf-8")

    def json(self, rel: str) -> Any:
        return json.loads(self.text(rel))

    def pickle(self, rel: str) -> Any:
        # BARTScore's data.pkl files are plain dicts, lists, strings and numbers (no code runs)
        with open(self.root / rel, "rb") as f:
            return pickle.load(f)

    def source_line(self, folder: str) -> str:
        return self.text(f"{folder}/SOURCE").strip()


def _spdx_text(src: Source, folder: str) -> str:
    return src.text(f"{folder}/LICENSE").strip() + "\n"


class Table:
    """Items (documents stored once) and rows, built in the order the source gives them."""

    def __init__(self) -> None:
        self.items: dict[str, dict[str, Any]] = {}
        self.item_index: dict[str, int] = {}
        self.rows: list[dict[str, Any]] = []

    def item(self, key: str, source: str | None, references: list[str], **extra: Any) -> int:
        if key in self.item_index:
            have = self.items[key]
            if have["source"] != source or have["references"] != references or any(
                    have.get(k) != v for k, v in extra.items()):
                raise ValueError(f"item {key!r}: two different texts under one id")
            return self.item_index[key]
        self.item_index[key] = len(self.items)
        self.items[key] = {"id": key, "source": source, "references": list(references), **extra}
        return self.item_index[key]

    def row(self, item: int, system: str, prediction: str | None, human: dict[str, Any],
            scores: dict[str, Any] | None = None, split: str | None = None,
            references: list[str] | None = None, **extra: Any) -> None:
        self.rows.append({"item": item, "system": system, "prediction": prediction, "human": human,
                          "scores": scores or {}, "split": split, "references": references, "extra": extra})

    def payload(self, human_columns: list[str], score_columns: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
        items = list(self.items.values())
        item_extra = sorted({k for it in items for k in it} - {"id", "source", "references"})
        items_out: dict[str, Any] = {"id": [it["id"] for it in items], "source": [it["source"] for it in items],
                                     "references": [it["references"] for it in items]}
        for k in item_extra:
            items_out[k] = [it.get(k) for it in items]
        rows = self.rows
        rows_out: dict[str, Any] = {"item": [r["item"] for r in rows], "system": [r["system"] for r in rows],
                                    "prediction": [r["prediction"] for r in rows]}
        if any(r["split"] is not None for r in rows):
            rows_out["split"] = [r["split"] for r in rows]
        if any(r["references"] is not None for r in rows):
            rows_out["references"] = [r["references"] for r in rows]
        for r in rows:
            unknown = (set(r["human"]) - set(human_columns)) | (set(r["scores"]) - set(score_columns))
            if unknown:
                raise ValueError(f"row of item {r['item']}: undeclared columns {sorted(unknown)}")
        rows_out["human"] = {c: [r["human"].get(c) for r in rows] for c in human_columns}
        rows_out["scores"] = {c: [r["scores"].get(c) for r in rows] for c in score_columns}
        row_extra = sorted({k for r in rows for k in r["extra"]})
        rows_out["extra"] = {k: [r["extra"].get(k) for r in rows] for k in row_extra}
        return items_out, rows_out


def _refs_per_item(table: Table) -> int | None:
    counts = set()
    for r in table.rows:
        refs = r["references"]
        if refs is None:
            refs = list(table.items.values())[r["item"]]["references"]
        counts.add(len(refs))
    return counts.pop() if len(counts) == 1 else None


def build(name: str, table: Table, info: dict[str, Any], human_columns: list[str], score_columns: list[str],
          judges: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    items, rows = table.payload(human_columns, score_columns)
    splits = sorted({r["split"] for r in table.rows if r["split"] is not None})
    full = {
        "name": name,
        **info,
        "human_columns": human_columns,
        "score_columns": score_columns,
        "splits": splits,
        "rows": len(table.rows),
        "items": len(table.items),
        "systems": len({r["system"] for r in table.rows}),
        "references_per_item": _refs_per_item(table),
        "extra_keys": sorted(set(k for k in items if k not in ("id", "source", "references"))
                             | set(rows["extra"])),
    }
    out: dict[str, Any] = {"format": FORMAT, "info": full, "items": items, "rows": rows}
    if judges is not None:
        out["judges"] = judges
    return out


# -- BARTScore's pickles: SummEval, REALSumm --------------------------------------------------------
def _bartscore_sum(src: Source, rel: str, refs_key: str) -> Table:
    data = src.pickle(rel)
    table = Table()
    for doc_id, doc in data.items():
        refs = list(doc[refs_key]) if refs_key == "ref_summs" else [doc[refs_key]]
        item = table.item(str(doc_id), doc["src"], refs)
        for system, out in doc["sys_summs"].items():
            table.row(item, str(system), out["sys_summ"], dict(out["scores"]))
    return table


def _unieval_summeval_published(src: Source) -> dict[str, Any]:
    return _unieval_readme(src)["summeval"]


def convert_summeval(src: Source) -> dict[str, Any]:
    table = _bartscore_sum(src, "bartscore/SUM/SummEval/data.pkl", "ref_summs")
    for key, doc in table.items.items():  # ref_summ is the first of ref_summs (checked)
        if not doc["references"]:
            raise ValueError(f"summeval {key}: no references")
    pkl = src.pickle("bartscore/SUM/SummEval/data.pkl")
    for key, doc in pkl.items():
        if doc["ref_summ"] != doc["ref_summs"][0]:
            raise ValueError(f"summeval {key}: ref_summ is not the first of ref_summs")
    dims = ["coherence", "consistency", "fluency", "relevance"]
    geval = {metric: {dim: {"spearman": rho, "kendall": tau} for dim, (rho, tau) in row.items()}
             for metric, row in GEVAL_TABLE1_ROUGE.items()}
    info = {
        "title": "SummEval (expert judgments), as BARTScore publishes it",
        "description": (
            "100 CNN/DailyMail test documents x 16 summarization systems (M0-M23, as SummEval names them): the "
            "source article, 11 references (SummEval's `ref_summs`; the first is CNN/DM's own highlights) and "
            "each summary, with the mean of 3 expert annotators' 1-5 ratings of coherence, consistency, fluency "
            "and relevance. Texts as BARTScore's data.pkl has them: tokenized (spaces around punctuation), "
            "sentences joined with ' . '. ROUGE-L over sentences (rougeLsum) needs the summaries split at ' . ' "
            "(the score functions' `split_summaries` option): G-Eval's and UniEval's ROUGE-L rows are "
            "reproduced with the mean over the 11 references, Porter stemming and the summaries split so."),
        "licence": "Apache-2.0 AND MIT",
        "licence_text": (_spdx_text(src, "bartscore") + "\nThe SummEval annotations (Fabbri et al. 2021) are "
                         "published under the MIT licence (github.com/Yale-LILY/SummEval).\n"),
        "citation": SUMMEVAL_BIB + "\n" + BARTSCORE_BIB,
        "source": f"{src.source_line('bartscore')}: SUM/SummEval/data.pkl",
        "default_human": dims,
        "default_statistic": "spearman",
        "default_level": "segment",
        "default_group_by": "item",
        "kind": "scores",
        "published": {
            "geval_table1_rouge": {
                "source": "G-Eval (Liu et al. 2023), Table 1 (UniEval's rows), typed from the paper",
                "citation": GEVAL_BIB,
                "level": "segment", "group_by": "item",
                "recipe": ("summary level: per document over its 16 systems (documents with constant scores left "
                           "out), then the mean; ROUGE as the mean over the 11 references, Porter stemming, "
                           "ROUGE-L over sentences split at ' . '"),
                "figures": geval,
            },
            "unieval_readme": {
                "source": ("UniEval reproduce/README.md (maszhongming/UniEval "
                           f"{src.source_line('unieval').split()[1]}): UniEval's correlations on SummEval"),
                "note": ("UniEval's stored SummEval predictions are not in the source folder, so no `unieval` "
                         "score column here; 'overall' is the mean of the four dimensions"),
                **_unieval_summeval_published(src),
            },
        },
    }
    return build("summeval", table, info, dims, [])


def convert_realsumm(src: Source) -> dict[str, Any]:
    table = _bartscore_sum(src, "bartscore/SUM/REALSumm/data.pkl", "ref_summ")
    info = {
        "title": "REALSumm (LitePyramid recall), as BARTScore publishes it",
        "description": (
            "100 CNN/DailyMail test documents x 24 systems (extractive and abstractive, named by their output "
            "files) with one reference and the LitePyramid recall of each summary from crowd-sourced semantic "
            "content units (Bhandari et al. 2020). Texts tokenized as in BARTScore's data.pkl."),
        "licence": "Apache-2.0",
        "licence_text": _spdx_text(src, "bartscore"),
        "citation": REALSUMM_BIB + "\n" + BARTSCORE_BIB,
        "source": f"{src.source_line('bartscore')}: SUM/REALSumm/data.pkl",
        "default_human": ["litepyramid_recall"],
        "default_statistic": "spearman",
        "default_level": "segment",
        "default_group_by": "item",
        "kind": "scores",
        "published": {},
    }
    return build("realsumm", table, info, ["litepyramid_recall"], [])


# -- UniEval -----------------------------------------------------------------------------------------
_LEVELS = {"Sample": ("segment", "none"), "Summary": ("segment", "item"), "System": ("system", "none"),
           "Turn": ("segment", "none")}


def _parse_table(lines: Iterable[str]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    header: list[str] | None = None
    for line in lines:
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = [c.lower() for c in cells]
            continue
        out[cells[0]] = {h: float(v) for h, v in zip(header[1:], cells[1:], strict=True)}
    return out


def _unieval_readme(src: Source) -> dict[str, dict[str, Any]]:
    """The correlations UniEval's reproduce/README.md prints, per set and level, as printed."""
    text = src.text("unieval/reproduce/README.md")
    blocks = re.findall(r"\n([^\n]*)\n```\n(.*?)```", text, flags=re.S)
    out: dict[str, dict[str, Any]] = {}
    names = {"SFRES": "sfres", "SFHOT": "sfhot", "QAGS_Xsum": "qags_xsum", "QAGS_CNNDM": "qags_cnndm"}
    for intro, body in blocks:
        if "|" not in body:
            continue
        if "summarization" in intro:
            current = "summeval"
        elif "dialogue" in intro:
            current = "topical_chat"
        else:
            current = ""
        level: str | None = None
        chunk: list[str] = []
        for line in body.splitlines() + [":end:"]:
            label = line.strip().rstrip(":")
            m = re.search(r"\*+\s*(\w+) Level Correlations", line)
            if label in names or m or line == ":end:":
                if chunk and current:  # the table read so far is done
                    entry = out.setdefault(current, {"levels": []})
                    lvl, group = _LEVELS[level or "Sample"]
                    entry["levels"].append({"as_printed": f"{level} Level Correlations" if level else None,
                                            "level": lvl, "group_by": group, "figures": _parse_table(chunk)})
                chunk = []
                if label in names:
                    current, level = names[label], None
                elif m:
                    level = m.group(1)
            elif line.startswith("|") or line.startswith("+"):
                chunk.append(line)
    for key in ("summeval", "topical_chat", "sfres", "sfhot", "qags_xsum", "qags_cnndm"):
        if key not in out:
            raise ValueError(f"UniEval README: no table for {key}")
    out["sfhot"]["note"] = ("the README prints SFHOT's table without a level line; it is the sample level, "
                            "as SFRES's table above it")
    return out


def _unieval_rows(src: Source, rel: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    data = src.json(f"unieval/reproduce/data/{rel}.json")
    pred = src.json(f"unieval/reproduce/unieval_predict/{rel}_result.json")
    if len(data) != len(pred):
        raise ValueError(f"UniEval {rel}: {len(data)} rows, {len(pred)} predictions")
    for i, (a, b) in enumerate(zip(data, pred, strict=True)):
        if any(b.get(k) != v for k, v in a.items()):
            raise ValueError(f"UniEval {rel}: row {i} differs from its prediction's row")
    return data, pred


def _unieval_info(src: Source, title: str, description: str, citation: str, dims: list[str],
                  key: str, statistic: str = "spearman") -> dict[str, Any]:
    readme = _unieval_readme(src)[key]
    return {
        "title": title,
        "description": description + (" The score column `unieval` is UniEval's own stored prediction for the row "
                                      "(reproduce/unieval_predict/): for a dimension d, `unieval` holds the "
                                      "prediction for the default human dimension; every dimension's prediction "
                                      "is in `unieval.<d>`."),
        "licence": "MIT",
        "licence_text": _spdx_text(src, "unieval"),
        "citation": citation + "\n" + UNIEVAL_BIB,
        "source": f"{src.source_line('unieval')}: reproduce/data/{_UNIEVAL_FILES[key]}.json and "
                  f"reproduce/unieval_predict/{_UNIEVAL_FILES[key]}_result.json",
        "default_human": dims,
        "default_statistic": statistic,
        "default_level": "segment",
        "default_group_by": "none",
        "kind": "scores",
        "published": {"unieval_readme": {
            "source": "UniEval reproduce/README.md: the correlations of UniEval's stored predictions "
                      "(score columns unieval.<dimension>) with the human columns",
            **readme}},
    }


_UNIEVAL_FILES = {"topical_chat": "dialogue/topical_chat", "qags_cnndm": "fact/qags_cnndm",
                  "qags_xsum": "fact/qags_xsum", "sfhot": "data2text/sfhot", "sfres": "data2text/sfres"}


def _unieval_scores(pred: dict[str, Any], dims: list[str], default: str) -> dict[str, Any]:
    p = pred["predict_scores"]
    scores = {f"unieval.{d}": p.get(d) for d in dims}
    scores["unieval"] = p.get(default)
    return scores


def convert_qags(src: Source, key: str) -> dict[str, Any]:
    data, pred = _unieval_rows(src, _UNIEVAL_FILES[key])
    table = Table()
    for a, b in zip(data, pred, strict=True):
        item = table.item(str(a["doc_id"]), a["source"], [a["reference"]])
        table.row(item, str(a["system_id"]), a["system_output"], dict(a["scores"]),
                  _unieval_scores(b, ["consistency"], "consistency"))
    corpus = "CNN/DailyMail" if key == "qags_cnndm" else "XSum"
    info = _unieval_info(
        src, f"QAGS-{'CNNDM' if key == 'qags_cnndm' else 'XSum'} (factual consistency), UniEval's copy",
        f"{len(data)} {corpus} summaries (one system) with the crowd-sourced consistency label of Wang et al. "
        "2020 (share of sentences judged consistent, 0-1). The `reference` field of UniEval's file holds the "
        "source article (as in BARTScore's copy), kept as the set's reference: a metric against it is a metric "
        "against the source.", QAGS_BIB, ["consistency"], key, statistic="pearson")
    return build(key, table, info, ["consistency"], ["unieval", "unieval.consistency"])


def convert_topical_chat(src: Source) -> dict[str, Any]:
    data, pred = _unieval_rows(src, _UNIEVAL_FILES["topical_chat"])
    dims = ["understandability", "naturalness", "coherence", "engagingness", "groundedness", "overall"]
    table = Table()
    keys: dict[tuple[str, str], str] = {}
    for a, b in zip(data, pred, strict=True):
        ident = keys.setdefault((a["source"], a["context"]), str(len(keys)))
        item = table.item(ident, a["source"], [], context=a["context"])
        table.row(item, a["system_id"], a["system_output"], dict(a["scores"]),
                  _unieval_scores(b, dims, "overall"))
    info = _unieval_info(
        src, "Topical-Chat (USR's turn-level judgments), UniEval's copy",
        "60 Topical-Chat dialogue contexts x 6 responses (4 generated, the original and a new human response) "
        "with USR's (Mehri & Eskenazi 2020) ratings: understandability (0-1), naturalness, coherence, "
        "engagingness (1-3), groundedness (0-1), overall (1-5). `source` is the dialogue history (turns "
        "joined by newlines, lowercased and tokenized as published); `context` the knowledge fact the "
        "response should use. No references.", USR_BIB, ["overall"], "topical_chat")
    return build("topical_chat", table, info, dims, ["unieval"] + [f"unieval.{d}" for d in dims])


def convert_sf(src: Source, key: str) -> dict[str, Any]:
    data, pred = _unieval_rows(src, _UNIEVAL_FILES[key])
    dims = ["naturalness", "informativeness", "overall"]
    table = Table()
    for a, b in zip(data, pred, strict=True):
        item = table.item(a["source"], a["source"], [a["reference"]])
        table.row(item, "unknown", a["system_output"], dict(a["scores"]), _unieval_scores(b, dims, "overall"))
    domain = "hotels" if key == "sfhot" else "restaurants"
    info = _unieval_info(
        src, f"{key.upper()} (San Francisco {domain} data-to-text), UniEval's copy",
        f"{len(data)} utterances generated from {len(table.items)} dialogue acts (the item: the act as "
        f"published, e.g. inform(name=...)) for San Francisco {domain} (Wen et al. 2015), rated by "
        "crowd-workers (Novikova et al. 2017) for naturalness, informativeness and overall quality (1-6); one "
        "reference each. The systems are not named (system 'unknown'). UniEval's copy, not BARTScore's "
        "D2T/" + key.upper() + "/data.pkl: the same rows, texts and human scores (BARTScore's `quality` is "
        "`overall` here), but UniEval's carries UniEval's stored predictions, and BARTScore's reference lists "
        "repeat each reference many times (up to thousands of copies of a few distinct texts).",
        SF_BIB, ["overall"], key)
    return build(key, table, info, dims, ["unieval"] + [f"unieval.{d}" for d in dims])


# -- FRANK ---------------------------------------------------------------------------------------------
FRANK_ERRORS = ["Semantic_Frame_Errors", "Discourse_Errors", "Content_Verifiability_Errors", "RelE", "EntE",
                "CircE", "OutE", "GramE", "CorefE", "LinkE", "Other"]


def convert_frank(src: Source) -> dict[str, Any]:
    human = src.json("frank/data/human_annotations.json")
    base = src.json("frank/data/baseline_factuality_metrics_outputs.json")
    test = set(src.text("frank/data/test_split.txt").split())
    valid = set(src.text("frank/data/validation_split.txt").split())
    texts: dict[str, dict[str, Any]] = {}
    with tarfile.open(src.path("frank/articles-5860706.tar.xz")) as tar:
        for member in sorted(tar.getmembers(), key=lambda m: m.name):
            if member.isfile() and member.name.startswith("data/articles-wbertscore-json/"):
                f = tar.extractfile(member)
                assert f is not None
                texts[Path(member.name).stem] = json.load(f)
    meta_keys = {"hash", "model_name", "dataset", "split"}
    score_columns = [k for k in base[0] if k not in meta_keys]
    table = Table()
    for h, b in zip(human, base, strict=True):
        if (h["hash"], h["model_name"]) != (b["hash"], b["model_name"]):
            raise ValueError(f"FRANK: annotations and baseline outputs out of step at {h['hash']}")
        split = "test" if h["hash"] in test else "validation" if h["hash"] in valid else None
        if split is None or {"test": "test", "validation": "valid"}[split] != h["split"]:
            raise ValueError(f"FRANK {h['hash']}: split files and annotations disagree")
        doc = texts[h["hash"]]
        model = h["model_name"]
        # XSum: `Gold` (one file names it `reference`); CNN/DM: the system's own copy
        reference = doc.get("Gold", doc.get("reference")) if h["dataset"] == "bbc" else doc[f"{model}_reference"]
        if not isinstance(reference, str):
            raise ValueError(f"FRANK {h['hash']}: no reference")
        item = table.item(h["hash"], doc["article"], [])
        scores = {k: b[k] for k in score_columns}
        labels = {"factuality": h["Factuality"], **{k: h[k] for k in FRANK_ERRORS}}
        table.row(item, model, doc[model], labels, scores, split=split, references=[reference],
                  dataset=h["dataset"])
    info = {
        "title": "FRANK (factuality of CNN/DM and XSum summaries)",
        "description": (
            "2,246 summaries of 499 documents by 9 systems (CNN/DM: bart, bert_sum, bus, pgn, s2s; XSum: BERTS2S, "
            "PtGen, TConvS2S, TranS2S) with FRANK's human annotation: `factuality` (the published `Factuality`, "
            "the share of the summary's sentences without a factual error, 0-1) and the share of sentences with "
            "each error type (the published names: RelE, EntE, CircE, OutE, GramE, CorefE, LinkE, Other and "
            "their three categories; the files' Flip_* ablations are left out). Splits `test` (1,575 rows, "
            "test_split.txt) and `validation` (671, validation_split.txt). Score columns: the baseline metric "
            "scores the FRANK authors published (baseline_factuality_metrics_outputs.json), named as they named "
            "them ('Rouge 1', 'Bleu', 'BertScore P Art' = BERTScore precision against the article, "
            "'Dep Entail' = DAE, ...); None where they published none. Texts from the repository's commit "
            "5860706 (data/articles-wbertscore-json): `source` the article, `prediction` the system's summary "
            "as published (CNN/DM systems lowercased; `bart_cased` left out), `references` the reference the "
            "authors scored that system against (CNN/DM: the system's own copy `<system>_reference`; XSum: "
            "`Gold`, in one document's file `reference`). `dataset` (as published: 'cnndm' or 'bbc' for XSum) "
            "is a row field. The paper's partial correlations are not in the "
            "repository as data, so none are stored."),
        "licence": "MIT",
        "licence_text": _spdx_text(src, "frank"),
        "citation": FRANK_BIB,
        "source": src.source_line("frank"),
        "default_human": ["factuality"],
        "default_statistic": "partial_pearson",
        "default_level": "segment",
        "default_group_by": "none",
        "kind": "scores",
        "published": {},
    }
    return build("frank", table, info, ["factuality"] + FRANK_ERRORS, score_columns)


# -- WMT21 TED MQM -------------------------------------------------------------------------------------
def _mqm_readme_tables(src: Source) -> dict[str, list[dict[str, Any]]]:
    text = src.text("wmt-mqm/README.md")
    part = text.split("## TED talks ##", 1)[1].split("\n## ", 1)[0]
    out: dict[str, list[dict[str, Any]]] = {}
    for title, body in re.findall(r"### (.*?) ###\n(.*?)(?=\n### |\Z)", part, flags=re.S):
        lp = {"English to German": "ende", "Chinese to English": "zhen"}[title.strip()]
        rows = []
        for line in body.splitlines():
            m = re.match(r"\|\s*([^|]+?)\s*\|\s*([\d.]+)\((\d+)\)\s*\|", line)
            if m:
                rows.append({"system": m.group(1), "mqm": float(m.group(2)), "rank": int(m.group(3))})
        out[lp] = rows
    return out


_MQM_SYSTEMS = {"ref": "ref-A", "refB": "ref-B"}  # the error file's names -> the score file's


def convert_mqm(src: Source, lp: str) -> dict[str, Any]:
    folder = f"wmt-mqm/ted/{lp}"
    with open(src.path(f"{folder}/mqm_ted_{lp}.tsv"), encoding="utf-8", newline="") as f:
        errors = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    header, errors = errors[0], errors[1:]
    col = {c: i for i, c in enumerate(header)}
    source: dict[str, str] = {}
    target: dict[tuple[str, str], str] = {}
    for e in errors:
        seg, system = e[col["seg_id"]], _MQM_SYSTEMS.get(e[col["system"]], e[col["system"]])
        src_text = re.sub(r"</?v>", "", e[col["source"]])
        tgt_text = re.sub(r"</?v>", "", e[col["target"]])
        if source.setdefault(seg, src_text) != src_text or target.setdefault((system, seg), tgt_text) != tgt_text:
            raise ValueError(f"MQM {lp}: segment {seg} has two texts")
    lines = src.text(f"{folder}/mqm_ted_{lp}.avg_seg_scores.tsv").splitlines()
    if lines[0].split() != ["system", "mqm_avg_score", "seg_id"]:
        raise ValueError(f"MQM {lp}: unexpected header {lines[0]!r}")
    refs_systems = sorted(s for s in {s for s, _ in target} if s.startswith("ref-"))
    table = Table()
    for line in lines[1:]:
        system, score, seg = line.split()
        if score == "None":
            if (system, seg) in target:
                raise ValueError(f"MQM {lp}: {system} {seg} has errors but no score")
            continue
        refs = [target[(r, seg)] for r in refs_systems if (r, seg) in target]
        item = table.item(seg, source[seg], refs)
        table.row(item, system, target[(system, seg)], {"mqm": float(score)})
    pair = {"ende": "English-German", "zhen": "Chinese-English"}[lp]
    info = {
        "title": f"WMT21 TED talks {pair}, MQM by professional translators",
        "description": (
            f"The WMT 2021 TED talks test suite, {pair}: every system-segment pair that Google's MQM study "
            "(Freitag et al. 2021) rated and whose texts its error file holds (segments without a score are left "
            "out). `mqm` is the published segment score of mqm_ted_" + lp + ".avg_seg_scores.tsv, the negated "
            "weighted error count averaged over raters (Major 5, Minor 1, Minor punctuation 0.1, "
            "Non-translation 25): 0 is best and higher is better, the sign mt-metrics-eval uses. The README's "
            "system table (published) prints the positive error average, lower is better. `source` and "
            "`prediction` are the error file's texts with the error-span marks <v></v> removed; `references` "
            "are the human translations (the rated systems ref-A" + (", ref-B" if lp == "zhen" else "") +
            ") of that segment where the file holds them (none for some segments): a reference system's own "
            "row finds its own text among them, so score the ref-* rows against another reference or leave "
            "them out. The error file names the references 'ref'" + (" and 'refB'" if lp == "zhen" else "") +
            "; here they have the score file's names. The README's table is each system's mean of -mqm over "
            "these rows (same ranks; two printed values are 0.005-0.009 off: ende eTranslation, zhen "
            "Borderline)."),
        "licence": "Apache-2.0",
        "licence_text": _spdx_text(src, "wmt-mqm"),
        "citation": _readme_bib(src.text("wmt-mqm/README.md"), "@misc{freitag2021experts"),
        "source": f"{src.source_line('wmt-mqm')}: ted/{lp}/mqm_ted_{lp}.tsv, ted/{lp}/mqm_ted_{lp}.avg_seg_scores.tsv",
        "default_human": ["mqm"],
        "default_statistic": "pearson",
        "default_level": "system",
        "default_group_by": "none",
        "kind": "scores",
        "published": {"readme_system_mqm": {
            "source": "wmt-mqm-human-evaluation README.md, 'TED talks': expert-based MQM per system "
                      "(the mean error score, positive: lower is better) and its rank, as printed",
            "figures": _mqm_readme_tables(src)[lp]}},
    }
    return build(f"wmt21_ted_{lp}", table, info, ["mqm"], [])


def _readme_bib(text: str, start: str) -> str:
    at = text.index(start)
    depth, end = 0, at
    for end in range(at, len(text)):
        if text[end] == "{":
            depth += 1
        elif text[end] == "}":
            depth -= 1
            if depth == 0:
                break
    return re.sub(r"[ \t]+\n", "\n", text[at:end + 1])


# -- LLMBar --------------------------------------------------------------------------------------------
LLMBAR_PROTOCOLS = ("Vanilla", "Vanilla_NoRules")
_VERDICT = {"1": "a", "2": "b", None: "-"}


def _llmbar(src: Source, name: str, parts: Sequence[tuple[str | None, str]], title: str, description: str,
            citation: str) -> dict[str, Any]:
    table = Table()
    runs: dict[tuple[str, str], dict[str, Any]] = {}
    pair_no = 0
    for split, rel in parts:
        folder = f"llmbar/Dataset/{rel}"
        data = src.json(f"{folder}/dataset.json")
        base = len(table.rows)
        for x in data:
            pair_no += 1
            ident = f"{split}:{pair_no}" if split else str(pair_no)
            item = table.item(ident, x["input"], [], query=x["input"])
            gold = {1: "a", 2: "b"}[x["label"]]
            table.row(item, "output_1", x["output_1"], {"preference": gold}, split=split,
                      baseline=x["output_2"], gold=gold)
        evaluators = sorted(p.name for p in src.path(f"{folder}/evaluators").iterdir() if p.is_dir())
        for ev in evaluators:
            for proto in LLMBAR_PROTOCOLS:
                res = src.path(f"{folder}/evaluators/{ev}/{proto}/result.json")
                if not res.is_file():
                    continue
                result = json.loads(res.read_text(encoding="utf-8"))
                if len(result) != len(data) or any(
                        {k: r[k] for k in ("input", "output_1", "output_2", "label")} != d
                        for r, d in zip(result, data, strict=True)):
                    raise ValueError(f"{res}: pairs differ from dataset.json")
                run = runs.setdefault((ev, proto), {"evaluator": ev, "protocol": proto,
                                                    "verdicts": {}, "statistics": {}})
                codes = []
                for r in result:
                    last = r["results"][-1]  # evaluate.py reads the last step (Vanilla has one)
                    codes.append(_VERDICT[last["swap = False"]["winner"]] + _VERDICT[last["swap = True"]["winner"]])
                run["verdicts"][base] = "".join(codes)
                stats = json.loads(src.text(f"{folder}/evaluators/{ev}/{proto}/statistics.json"))
                run["statistics"][split or "all"] = stats
    judges = []
    n = len(table.rows)
    for (ev, proto), run in sorted(runs.items()):
        if sum(len(v) for v in run["verdicts"].values()) != 2 * n:
            raise ValueError(f"{name}: {ev}/{proto} lacks some parts")
        verdicts = "".join(run["verdicts"][k] for k in sorted(run["verdicts"]))
        judges.append({"evaluator": ev, "protocol": proto, "verdicts": verdicts, "statistics": run["statistics"]})
    info = {
        "title": title,
        "description": description + (
            " Each row is one pair: `query` (= `source`) the instruction, `prediction` output_1, `baseline` "
            "output_2 (the columns pairwise_preference reads: queries, predictions, baselines), `gold` and the "
            "human column `preference`: 'a' when output_1 is the better, 'b' when output_2 is. `judges`: the "
            "authors' stored LLM judges (result.json) for each evaluator and protocol (Vanilla, Vanilla_NoRules "
            "where present), per pair the verdict with output_1 shown first and with the outputs swapped, both "
            "read against the original order ('a' = output_1; None: no parsable verdict), and the authors' "
            "statistics.json per part. How statistics.json counts (LLMEvaluator/evaluate.py): correct_False/True "
            "= verdict equals gold in that order; equal = the two orders' verdicts equal, None equal to None; "
            "kappa_False/True = Cohen's kappa of (1 where the verdict is output_1, else 0: output_2 and no "
            "verdict both 0) against the gold label 1/2 as is, so not a judge-vs-gold agreement; "
            "kappa_agreement = Cohen's kappa of the two orders under that 1/0 coding."),
        "licence": "MIT",
        "licence_text": _spdx_text(src, "llmbar"),
        "citation": citation,
        "source": f"{src.source_line('llmbar')}: " + ", ".join(f"Dataset/{rel}" for _, rel in parts),
        "default_human": ["preference"],
        "default_statistic": "accuracy",
        "default_level": "segment",
        "default_group_by": "none",
        "kind": "pairs",
        "published": {"statistics_json": {
            "source": "LLMBar Dataset/**/evaluators/<evaluator>/<protocol>/statistics.json, as published; the "
                      "same figures sit in `judges` beside the verdicts they come from",
            "figures": {f"{j['evaluator']}/{j['protocol']}": j["statistics"] for j in judges}}},
    }
    return build(name, table, info, ["preference"], [], judges=judges)


def convert_llmbar(src: Source, which: str) -> dict[str, Any]:
    bib = _readme_bib(src.text("llmbar/README.md"), "@inproceedings{zeng2024llmbar")
    if which == "natural":
        return _llmbar(src, "llmbar_natural", [(None, "LLMBar/Natural")], "LLMBar Natural",
                       "LLMBar's Natural set (Zeng et al. 2024): 100 instructions, each with two outputs of which "
                       "one follows the instruction and the other does not, and the gold better output.", bib)
    if which == "adversarial":
        parts = [(p, f"LLMBar/Adversarial/{p}") for p in ("Neighbor", "GPTInst", "GPTOut", "Manual")]
        return _llmbar(src, "llmbar_adversarial", parts, "LLMBar Adversarial",
                       "LLMBar's Adversarial set (Zeng et al. 2024): 319 pairs in four parts (the splits Neighbor, "
                       "GPTInst, GPTOut, Manual) whose worse output is built to look better (more polished, "
                       "longer, on a neighbouring instruction).", bib)
    return _llmbar(src, "mtbench_llmbar", [(None, "Processed/MT-Bench")], "MT-Bench human preferences, LLMBar's "
                   "processing", "MT-Bench's expert pairwise judgments (Zheng et al. 2023) as LLMBar processed them: "
                   "the gold preference by majority vote, ties removed, 200 pairs sampled.",
                   bib + "\n" + MTBENCH_BIB)


# -- HaluEval ------------------------------------------------------------------------------------------
def convert_halueval(src: Source) -> dict[str, Any]:
    records = [json.loads(line) for line in src.text("halueval/data/general_data.json").splitlines() if line.strip()]
    counts: dict[str, int] = {}
    for r in records:
        counts[r["ID"]] = counts.get(r["ID"], 0) + 1
    table = Table()
    for line_no, r in enumerate(records, 1):
        ident = r["ID"] if counts[r["ID"]] == 1 else f"{r['ID']}@line{line_no}"
        item = table.item(ident, r["user_query"], [], query=r["user_query"])
        table.row(item, "ChatGPT", r["chatgpt_response"], {"hallucination": r["hallucination"]},
                  hallucination_spans=list(r["hallucination_spans"]))
    info = {
        "title": "HaluEval general (human hallucination labels of ChatGPT answers)",
        "description": (
            "4,507 Alpaca user queries with ChatGPT's answer and the human label `hallucination` ('yes': the "
            "answer holds hallucinated content, 'no'), with the annotators' `hallucination_spans` as a row field. "
            "`source` and `query` hold the query; the item is the file's ID (two records share the ID 'ID': "
            "they are 'ID@line<n>', their line in the file)."),
        "licence": "MIT",
        "licence_text": _spdx_text(src, "halueval"),
        "citation": HALUEVAL_BIB,
        "source": f"{src.source_line('halueval')}: data/general_data.json",
        "default_human": ["hallucination"],
        "default_statistic": "accuracy",
        "default_level": "segment",
        "default_group_by": "none",
        "kind": "labels",
        "published": {},
    }
    return build("halueval_general", table, info, ["hallucination"], [])


CONVERTERS = {
    "summeval": convert_summeval,
    "realsumm": convert_realsumm,
    "qags_cnndm": lambda s: convert_qags(s, "qags_cnndm"),
    "qags_xsum": lambda s: convert_qags(s, "qags_xsum"),
    "topical_chat": convert_topical_chat,
    "sfhot": lambda s: convert_sf(s, "sfhot"),
    "sfres": lambda s: convert_sf(s, "sfres"),
    "frank": convert_frank,
    "wmt21_ted_ende": lambda s: convert_mqm(s, "ende"),
    "wmt21_ted_zhen": lambda s: convert_mqm(s, "zhen"),
    "llmbar_natural": lambda s: convert_llmbar(s, "natural"),
    "llmbar_adversarial": lambda s: convert_llmbar(s, "adversarial"),
    "mtbench_llmbar": lambda s: convert_llmbar(s, "mtbench"),
    "halueval_general": convert_halueval,
}


def encode(obj: dict[str, Any]) -> bytes:
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return lzma.compress(text.encode("utf-8"), format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64,
                         preset=XZ_PRESET)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", nargs="?", default=str(DEFAULT_SOURCE), help="the human-judgments folder")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="where the .json.xz files go")
    parser.add_argument("--only", action="append", choices=sorted(CONVERTERS), help="convert only these sets")
    args = parser.parse_args(argv)
    src = Source(Path(args.source))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    total = 0
    for name in args.only or list(CONVERTERS):
        data = encode(CONVERTERS[name](src))
        path = out / f"{name}.json.xz"
        tmp = path.with_suffix(".xz.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
        total += len(data)
        print(f"{name}: {len(data):,} bytes", file=sys.stderr)
    print(f"total: {total:,} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
