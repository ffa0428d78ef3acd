"""Build the tiny models for the constrained-decoding measurement (no download):
a 32k byte-level BPE trained on WordNet's glosses (Debian's wordnet-base, English prose),
a 2-layer Llama, random ("untrained") and trained briefly on synthetic judge answers."""
import json
import os
import random
import re
import sys
import time

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

torch.manual_seed(0)
random.seed(0)
torch.set_num_threads(2)
glosses = []
for pos in ("noun", "verb", "adj", "adv"):
    for line in open(f"/usr/share/wordnet/data.{pos}", encoding="latin-1"):
        if line.startswith("  ") or "|" not in line:
            continue
        g = line.split("|", 1)[1].strip()
        glosses.append(g)
print("glosses", len(glosses))
CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
          "'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

def sentences(g):
    return [s.strip().strip('"').strip() for s in re.split(r";", g) if len(s.strip()) > 8]

pool = [s for g in glosses for s in sentences(g)]
SYSTEM = "You are a careful, impartial evaluator. Answer with one JSON value in the format the task asks for."

def conversation(n):
    items = random.sample(pool, n)
    task = ("For each numbered statement, say whether the context supports it. Give the reason first, "
            "then the verdict yes or no.\n\n" + "\n".join(f"{i}. {s}" for i, s in enumerate(items, 1)))
    answer = {"verdicts": [{"index": i, "reason": random.choice(pool)[:60], "verdict": random.choice(["yes", "no"])}
                           for i in range(1, n + 1)]}
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": task}], json.dumps(answer)

if __name__ == "__main__":
    OUT = sys.argv[1]
    STEPS = [int(s) for s in sys.argv[2].split(",")]
    t0 = time.time()
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    extra = [json.dumps({"verdicts": [{"index": 1, "reason": "x", "verdict": "yes"}]})] * 100
    trainer = trainers.BpeTrainer(vocab_size=int(os.environ.get('VOCAB', '32000')), special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(glosses + extra, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   additional_special_tokens=SPECIAL)
    fast.chat_template = CHATML
    print("tokenizer", len(fast), round(time.time() - t0, 1), "s")
    cfg = LlamaConfig(vocab_size=len(fast), hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=2048,
                      tie_word_embeddings=True, eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id)
    model = LlamaForCausalLM(cfg)
    d = os.path.join(OUT, "step0")
    fast.save_pretrained(d)
    model.save_pretrained(d)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    step = 0
    t0 = time.time()
    for target in STEPS:
        while step < target:
            batch = []
            for _ in range(int(os.environ.get('BATCH', '16'))):
                msgs, ans = conversation(random.randint(1, 4))
                text = fast.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True) + ans + "<|im_end|>"
                batch.append(fast(text, add_special_tokens=False)["input_ids"][-512:])
            width = max(map(len, batch))
            ids = torch.tensor([b + [fast.pad_token_id] * (width - len(b)) for b in batch])
            mask = torch.tensor([[1] * len(b) + [0] * (width - len(b)) for b in batch])
            labels = ids.masked_fill(mask == 0, -100)
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
            loss.backward()
            opt.step()
            opt.zero_grad()
            step += 1
            if step % 50 == 0:
                print("step", step, round(loss.item(), 3), round(time.time() - t0), "s", flush=True)
        d = os.path.join(OUT, f"step{step}")
        fast.save_pretrained(d)
        model.save_pretrained(d)
