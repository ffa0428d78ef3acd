"""A judge over a local transformers text-generation pipeline.

The model loads only from a local folder or a model id already in the Hugging Face cache
(``local_files_only``); one that is not on disk is a clear error, never a download. Prompts go
through the model's chat template (a plain "role: content" layout when it has none) and are
generated in batches of ``batch_size``: requests arriving together are gathered into one batch.
"""

import asyncio
import os
import threading

from .base import Completion, Judge, JudgeError

__all__ = ["HFJudge", "resolve_local_model"]


def resolve_local_model(model):
    """A local folder for ``model`` (a path, or a hub id already downloaded)."""
    if os.path.isdir(os.path.expanduser(model)):
        return os.path.expanduser(model)
    try:
        from huggingface_hub import snapshot_download

        return snapshot_download(model, local_files_only=True)
    except Exception:
        raise ValueError(
            f"model: {model!r} is neither a local folder nor a model in the Hugging Face cache; "
            "nothing is downloaded at run time: download it beforehand or pass a folder"
        ) from None


class HFJudge(Judge):
    backend = "hf"

    def __init__(self, model, device=None, batch_size=8, max_new_tokens=512, cache=None,
                 max_parse_attempts=3, prices=None, temperature=0.0):
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size: {batch_size!r} must be a positive integer")
        super().__init__(model, concurrency=batch_size, cache=cache,
                         max_parse_attempts=max_parse_attempts, prices=prices)
        self.path = resolve_local_model(model)
        self.device = device
        self.batch_size = batch_size
        self.max_new_tokens = int(max_new_tokens)
        self.temperature = temperature
        self._pipe = None
        self._load_lock = threading.Lock()
        self._gen_lock = threading.Lock()

    def settings(self, request):
        s = super().settings(request)
        s.update(max_new_tokens=self.max_new_tokens, temperature=self.temperature)
        return s

    @property
    def pipeline(self):
        with self._load_lock:
            if self._pipe is None:
                from transformers import pipeline

                self._pipe = pipeline("text-generation", model=self.path, tokenizer=self.path,
                                      device=self.device)  # self.path is a local folder
                tok = self._pipe.tokenizer
                if tok.pad_token is None:
                    tok.pad_token = tok.eos_token or tok.unk_token
                tok.padding_side = "left"
            return self._pipe

    def _prompt(self, messages):
        tok = self.pipeline.tokenizer
        if getattr(tok, "chat_template", None):
            return tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return "\n".join(f"{m['role']}: {m['content']}" for m in messages) + "\nassistant:"

    def _generate(self, prompts):
        pipe = self.pipeline
        kwargs = dict(max_new_tokens=self.max_new_tokens, return_full_text=False,
                      batch_size=self.batch_size)
        if self.temperature and self.temperature > 0:
            kwargs.update(do_sample=True, temperature=self.temperature)
        else:
            kwargs.update(do_sample=False)
        with self._gen_lock:
            outputs = pipe(prompts, **kwargs)
        tok = pipe.tokenizer
        completions = []
        for prompt, out in zip(prompts, outputs):
            text = out[0]["generated_text"] if isinstance(out, list) else out["generated_text"]
            completions.append(Completion(
                text=text,
                prompt_tokens=len(tok(prompt)["input_ids"]),
                completion_tokens=len(tok(text, add_special_tokens=False)["input_ids"]),
            ))
        return completions

    async def _acomplete(self, messages, request, batcher):
        return await batcher.submit(self._prompt(messages))

    def _open(self):
        return _Batcher(self)


class _Batcher:
    """Gathers prompts that arrive together into batches for one generate call."""

    def __init__(self, judge):
        self.judge = judge
        self.pending = []
        self.flusher = None

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        return False

    async def submit(self, prompt):
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        self.pending.append((prompt, fut))
        if len(self.pending) >= self.judge.batch_size:
            self._flush(loop)
        elif self.flusher is None:
            self.flusher = loop.call_later(0.005, self._flush, loop)
        return await fut

    def _flush(self, loop):
        if self.flusher is not None:
            self.flusher.cancel()
            self.flusher = None
        batch, self.pending = self.pending, []
        if batch:
            loop.create_task(self._run(batch, loop))

    async def _run(self, batch, loop):
        prompts = [p for p, _ in batch]
        try:
            completions = await loop.run_in_executor(None, self.judge._generate, prompts)
        except Exception as e:  # a failing batch fails its requests, not the run
            for _, fut in batch:
                if not fut.done():
                    fut.set_exception(JudgeError(f"generation failed: {type(e).__name__}: {e}"))
            return
        for (_, fut), c in zip(batch, completions):
            if not fut.done():
                fut.set_result(c)
