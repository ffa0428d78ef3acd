"""bert_score 0.3.13 as the reference, run on transformers 5.

bert_score encodes an empty text with ``tokenizer.build_inputs_with_special_tokens([])``, a
method transformers 5's tokenizers no longer have. This test-only shim gives the BERT tokenizer
that method with transformers 4's definition, [CLS] + ids + [SEP]; nothing else is changed.
"""

import warnings

from transformers import BertTokenizer, BertTokenizerFast

for _cls in (BertTokenizer, BertTokenizerFast):
    if not hasattr(_cls, "build_inputs_with_special_tokens"):
        _cls.build_inputs_with_special_tokens = (
            lambda self, ids, ids2=None: [self.cls_token_id] + list(ids) + [self.sep_token_id]
            + ([] if ids2 is None else list(ids2) + [self.sep_token_id]))


def reference_score(cands, refs, **kwargs):
    from bert_score import score

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        P, R, F = score(cands, refs, device="cpu", **kwargs)
    return P.tolist(), R.tolist(), F.tolist()
