"""Gradio Spaces: one per metric folder (``metric_app``) and the playground (``playground_app``).

``evaluate.utils.launch_gradio_widget`` (evaluate 0.4.6) does not run on current Gradio, so
every ``metrics/<name>/app.py`` calls :func:`metric_app`, and ``spaces/playground/app.py`` calls
:func:`playground_app`. Both build everything from a metric's declared columns and the
registry, so a new module needs no Space code of its own.

What a user sees: every mistake (an empty table, a blank cell, bad JSON, an unknown option, a
missing field, a judge that does not answer) as one sentence that names the row and the field
or the box, in a ``gr.Error`` pop-up and under the button (escaped: ``<model>`` stays visible);
scores with 4 significant digits (the JSON keeps every digit); one horizontal bar per example
in the playground's chart, on the score's own axis (1 to 5 for summary coherence). A judge
typed into a Space stops the run with one error when it has answered nothing 10 s after the
run began (``first_answer_timeout``), so a server that does not answer is an error within 15 s,
however many rows and metrics wait on it; a slow server that does answer is waited for.

What a visitor cannot do (docs/spaces.md, "Security"): spend the owner's key anywhere but the
judge the owner configured (a typed URL brings its own key); aim a request inward (on a deployed
Space, ``SPACE_ID`` set, typed URLs are off unless the owner allows hosts, and then reach public
addresses only, follow no redirect and quote no reply); name a judge or a file in the Options box
(``judge``, ``judge_options``, ``baseline_path``, a ``model_type`` off the list); lift the caps
on rows, upload size, resamples, threads and judge use (:data:`LIMITS`, set by the owner's
environment variables). Messages name no server path.
"""

from __future__ import annotations

import dataclasses
import datetime
import html
import json
import logging
import os
import re
import tempfile
import threading
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any

from .errors import InputError, OptionError
from .numbers import format_value

__all__ = ["metric_app", "playground_app", "parse_rows", "run_metric", "card_body", "make_judge",
           "run_playground", "LIST_SEPARATOR", "SpaceError", "md_escape", "format_value",
           "JUDGE_TIMEOUT", "JUDGE_RETRIES", "FIRST_ANSWER_TIMEOUT", "options_help", "report_error",
           "LIMITS", "limit", "Allowance", "JUDGE_VARIABLE", "ALLOWED_HOSTS_VARIABLE", "PROVIDERS",
           "SPACE_MODEL_TYPES", "deployed", "check_space_options"]

logger = logging.getLogger("textgen_metrics.spaces")

LIST_SEPARATOR = "|||"  # separates several references (or contexts) typed in one table cell
_MAX_CHARTED = 200      # examples drawn one bar each; more: a histogram
_SHOWN_ERRORS = 5       # unscored rows listed in a message
_OPENING_METRICS = ("rouge", "bleu")  # what the playground opens with selected
# a judge typed into a Space: the run stops with one error when the judge has answered nothing
# FIRST_ANSWER_TIMEOUT s after it began (a server that accepts connections and never answers),
# reported with the app's own time (about 2 s in a browser on a busy machine) within 15 s. Once
# it has answered, a request may wait JUDGE_TIMEOUT s: a local server (llama.cpp) answers one
# request at a time, so the last of a burst of `concurrency` waits for all the others.
FIRST_ANSWER_TIMEOUT = 10.0
JUDGE_TIMEOUT = 300.0
JUDGE_RETRIES = 1
# the example row a metric Space opens with, by input column
_EXAMPLE = {"predictions": "The cat sat on the mat.",
            "references": f"The cat is on the mat. {LIST_SEPARATOR} A cat sat on a mat.",
            "queries": "Where did the cat sit?",
            "contexts": f"The cat sat on the mat all afternoon. {LIST_SEPARATOR} Dogs bark at night.",
            "sources": "The cat sat on the mat all afternoon, ignoring the dogs that barked outside.",
            "baselines": "On the mat."}


# -- what the owner sets (Space variables and secrets) and what a visitor may not lift ------------
JUDGE_VARIABLE = "TEXTGEN_METRICS_JUDGE"  # the owner's judge, e.g. openai:gpt-4o-mini: a blank picker's
ALLOWED_HOSTS_VARIABLE = "TEXTGEN_METRICS_ALLOWED_HOSTS"  # hosts a visitor may type on a deployed Space
# the providers the picker takes as <provider>:<model> (their key and endpoint: the owner's environment)
PROVIDERS = ("openai", "azure", "anthropic", "gemini")
TINY_MODELS = ("tiny:smollm2", "tiny:gemma3")  # packaged: no path, nothing downloaded
# BERTScore's model_type in a Space: the packaged default only (None), no folder of the server's
SPACE_MODEL_TYPES: tuple[str | None, ...] = (None,)
# options no visitor may set: the judge comes from the picker; paths read the server's files
_REFUSED_OPTIONS = {
    "judge": "the judge is chosen with the judge picker, not the Options box",
    "judge_options": "the judge is chosen with the judge picker, not the Options box",
    "baseline_path": "a Space reads no file of its server; rescale_with_baseline uses the packaged baseline",
}


@dataclasses.dataclass(frozen=True)
class Limit:
    variable: str  # the environment variable (a Space variable) that sets it
    default: int   # cheap: a Space its owner forgot stays cheap
    what: str


# the caps a visitor cannot lift; an owner sets each with its variable (a whole number > 0)
LIMITS = {
    "rows": Limit("TEXTGEN_METRICS_MAX_ROWS", 1000, "rows (examples) per click"),
    "upload_mb": Limit("TEXTGEN_METRICS_MAX_UPLOAD_MB", 10, "megabytes per uploaded file"),
    "resamples": Limit("TEXTGEN_METRICS_MAX_RESAMPLES", 10_000, "bootstrap resamples"),  # see _CAPPED_OPTIONS
    "threads": Limit("TEXTGEN_METRICS_MAX_THREADS", 2, "threads"),  # num_threads
    "session_requests": Limit("TEXTGEN_METRICS_SESSION_REQUESTS", 300, "judge requests per visitor session"),
    "session_tokens": Limit("TEXTGEN_METRICS_SESSION_TOKENS", 300_000, "judge tokens per visitor session"),
    "daily_requests": Limit("TEXTGEN_METRICS_DAILY_REQUESTS", 3000, "judge requests per day, all visitors"),
    "daily_tokens": Limit("TEXTGEN_METRICS_DAILY_TOKENS", 3_000_000, "judge tokens per day, all visitors"),
    "concurrency": Limit("TEXTGEN_METRICS_CONCURRENCY", 4, "clicks computed at once (others wait in the queue)"),
}
# the integer options each cap bounds
_CAPPED_OPTIONS = {"n_resamples": "resamples", "bootstrap_samples": "resamples", "num_threads": "threads"}


def limit(name: str) -> int:
    """The cap ``name`` of :data:`LIMITS`: its variable's value, else its default."""
    cap = LIMITS[name]
    text = os.environ.get(cap.variable, "").strip()
    if not text:
        return cap.default
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise SpaceError(f"This Space's setting {cap.variable}={text!r} is not a whole number > 0; its owner must "
                         "fix it")
    return value


def deployed() -> bool:
    """Whether this runs as a Hugging Face Space (which sets ``SPACE_ID``): visitors are strangers."""
    return bool(os.environ.get("SPACE_ID"))


class SpaceError(ValueError):
    """A user's mistake, as the sentence the Space shows."""


class Allowance:
    """The judge requests and tokens of one visitor session, and of the day (UTC) for all
    visitors together, held to the owner's caps (:data:`LIMITS`). A judge books each request it
    sends (``request``, refused with a ``JudgeFatalError`` once a cap is reached: the run stops
    with one message) and each answer's tokens (``tokens``). Tokens are known once answered, so
    the requests in flight when the token cap is reached (the judge's ``concurrency``) still
    complete."""

    _lock = threading.Lock()
    _day = ""
    _sessions: dict[str, list[int]] = {}  # session -> [requests, tokens], today
    _total = [0, 0]                       # today, every session

    def __init__(self, session: str) -> None:
        self.session = session

    @classmethod
    def _today(cls) -> None:
        day = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
        if day != cls._day:
            cls._day, cls._sessions, cls._total = day, {}, [0, 0]

    def request(self) -> None:
        from .judges.base import JudgeFatalError

        caps = (("session_requests", 0, False), ("session_tokens", 1, False), ("daily_requests", 0, True),
                ("daily_tokens", 1, True))
        with self._lock:
            self._today()
            mine = self._sessions.setdefault(self.session, [0, 0])
            for name, index, daily in caps:
                if (self._total if daily else mine)[index] >= limit(name):
                    cap = LIMITS[name]
                    raise JudgeFatalError(f"this Space's allowance of {limit(name)} {cap.what} is spent "
                                          f"({cap.variable})" + ("; it renews at midnight UTC" if daily else ""))
            mine[0] += 1
            self._total[0] += 1

    def tokens(self, n: int) -> None:
        with self._lock:
            self._today()
            self._sessions.setdefault(self.session, [0, 0])[1] += n
            self._total[1] += n


def md_escape(text: Any) -> str:
    """``text`` for a Markdown component, on one line: HTML escaped (``<model>`` stays visible)
    and the Markdown characters that take effect inside a line backslash-escaped (``*``, ``_``,
    backticks, brackets, ``|``, ``~`` stay literal)."""
    text = html.escape(" ".join(str(text).split()), quote=False)
    return re.sub(r"([\\`*_\[\]|~])", r"\\\1", text)


def card_body(readme_path: str) -> str:
    """The card's Markdown without its YAML header."""
    with open(readme_path, encoding="utf-8") as f:
        text = f.read()
    return re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)


def parse_rows(rows: Any, columns: Mapping[str, str], strict: bool = False,
               optional: Sequence[str] = ()) -> dict[str, list[Any]]:
    """Table rows (lists of cells) -> ``{column: values}``; blank rows are skipped.

    In a list column (``text_or_list`` or ``list``) a cell holds several strings separated by
    ``|||``; a ``text_or_list`` cell without a separator stays one string; a ``list`` cell
    without one is a list of one (an empty cell: an empty list). ``strict``: a blank text cell
    in a row that is not blank, or no row at all, is a SpaceError naming the row and the column
    (a column in ``optional`` may be blank).
    """
    if hasattr(rows, "values") and hasattr(rows, "columns"):  # a pandas DataFrame
        rows = rows.values.tolist()
    names = list(columns)
    out: dict[str, list[Any]] = {name: [] for name in names}
    for number, row in enumerate(rows or [], 1):
        cells = ["" if c is None else str(c) for c in list(row)[: len(names)]]
        if not any(c.strip() for c in cells):
            continue
        cells += [""] * (len(names) - len(cells))
        for name, cell in zip(names, cells, strict=True):
            kind = columns[name]
            if strict and kind != "list" and not cell.strip() and name not in optional:
                several = f" (several: separate them with {LIST_SEPARATOR})" if kind == "text_or_list" else ""
                raise SpaceError(f"Row {number}, {name}: the cell is empty; type the text{several}")
            if kind == "list":
                out[name].append([p.strip() for p in cell.split(LIST_SEPARATOR) if p.strip()])
            elif kind == "text_or_list" and LIST_SEPARATOR in cell:
                parts = [p.strip() for p in cell.split(LIST_SEPARATOR)]
                if strict and not all(parts):
                    raise SpaceError(f"Row {number}, {name}: a text between the {LIST_SEPARATOR} separators "
                                     "is empty; type it or remove the extra separator")
                out[name].append(parts)
            else:
                out[name].append(cell)
    if strict and not any(out.values()) or (strict and names and not out[names[0]]):
        raise SpaceError("Inputs: the table has no example; type one per row (the + Add row button "
                         "adds a row)")
    return out


def _json_object(text: str | None, what: str, example: str) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError as e:
        raise SpaceError(f"{what}: not valid JSON ({e.msg} at line {e.lineno}, column {e.colno}); "
                         f"write an object such as {example}") from None
    if not isinstance(value, dict):
        raise SpaceError(f"{what}: expected a JSON object such as {example}")
    return value


def make_judge(base_url: str | None, model: str | None, api_key: str | None, session: str = "") -> Any:
    """A judge for the URL, model and key typed in the judge picker; None when all is blank and
    the owner named no judge (``TEXTGEN_METRICS_JUDGE``).

    Whose key goes where: a key in the environment (the owner's secret: ``OPENAI_API_KEY``...)
    goes only to the owner's endpoint, with the URL left blank: the owner's judge (the blank
    picker), or ``<provider>:<model>`` for ``openai``, ``azure``, ``anthropic`` or ``gemini``
    (the endpoint from ``OPENAI_BASE_URL``, ``AZURE_OPENAI_ENDPOINT``, ``ANTHROPIC_BASE_URL``
    or the provider's own; with the owner's judge named, its model only). A typed URL is the
    visitor's server: their key, or none, is sent, never the environment's; it takes
    ``http(s)://host[:port]/path`` only, no ``user:password@``, query or fragment, and on a
    deployed Space (:func:`deployed`) only a host the owner allows (``TEXTGEN_METRICS_ALLOWED_HOSTS``:
    names separated by commas, ``*`` for any), reached at public addresses only, no redirect
    followed, no reply quoted (:class:`~textgen_metrics.judges.http.URLPolicy`). ``tiny:smollm2``
    and ``tiny:gemma3`` are the packaged tiny models, in the app itself (a check of the pipeline,
    never of quality); no other backend (no ``gguf:`` or ``hf:`` path). Every judge but the tiny
    ones books its requests and tokens with the visitor's :class:`Allowance` (``session``). A
    judge that has answered nothing 10 s after the run began stops the run with one error."""
    from .judges import resolve_judge

    base_url, model, key = (base_url or "").strip(), (model or "").strip(), (api_key or "").strip()
    owner = os.environ.get(JUDGE_VARIABLE, "").strip()
    if not base_url and not model:
        model = owner
        if not model:
            return None
    return resolve_judge(*_judge_choice(base_url, model, key, owner, session))


def _judge_choice(base_url: str, model: str, key: str, owner: str, session: str) -> tuple[str, dict[str, Any]]:
    """The judge string and options :func:`make_judge` makes its judge from (the rules are there)."""
    from .judges.http import URLPolicy

    if model in TINY_MODELS and not base_url:
        return model, {}
    prefix, sep, name = model.partition(":")
    provider = prefix if sep and name and prefix in PROVIDERS else None
    if not base_url and provider is None and owner and model == owner:  # the owner's own choice (gguf:, hf:...)
        return owner, {}
    if not base_url and provider is None:
        if sep and prefix in ("gguf", "hf", "tiny"):
            raise SpaceError(f"Judge: {prefix}: is not a backend of this Space (it would name a file or model of "
                             f"the server); take {', '.join(TINY_MODELS)}, <provider>:<model> for "
                             f"{', '.join(PROVIDERS)}, or a server URL and its model")
        raise SpaceError("Judge: give both the server URL (e.g. http://127.0.0.1:8000/v1) and the model")
    options: dict[str, Any] = {"concurrency": 8, "timeout": JUDGE_TIMEOUT, "max_retries": JUDGE_RETRIES,
                               "first_answer_timeout": FIRST_ANSWER_TIMEOUT, "allowance": Allowance(session)}
    if not base_url:  # the owner's endpoint (or the provider's own) and the owner's key, unless one is typed
        if owner and model != owner and not key:
            raise SpaceError("Judge: this Space's key serves its own judge only; leave the model blank for it, or "
                             "type a server URL and your own API key")
        if key:
            options["api_key"] = key
        return model, options
    url = _visitor_url(base_url)
    options.update(api_key=key, url_policy=URLPolicy(public_only=deployed()))
    if provider is None:
        return f"openai:{model}", {"base_url": url, **options, "concurrency": 16}
    if provider == "azure":
        if not key:
            raise SpaceError("Judge: an Azure endpoint you type needs your own API key (this Space's key serves "
                             "only its own endpoint)")
        return model, {"endpoint": url, "azure_ad_token": "", **options}
    return model, {"base_url": url, **options}


def _visitor_url(url: str) -> str:
    """A URL a visitor typed, checked: ``http(s)://host[:port]/path``, no credentials, query or
    fragment; on a deployed Space, a host the owner allows (``TEXTGEN_METRICS_ALLOWED_HOSTS``)."""
    if not re.match(r"https?://", url):
        raise SpaceError(f"Judge: the server URL must start with http:// or https:// (got {url!r})")
    try:
        parts = urllib.parse.urlsplit(url)
        host, _ = parts.hostname, parts.port
    except ValueError:
        raise SpaceError("Judge: the server URL is not a valid URL (http(s)://host[:port]/path)") from None
    if not host:
        raise SpaceError("Judge: the server URL names no host (http(s)://host[:port]/path)")
    if parts.username is not None or parts.password is not None:
        raise SpaceError("Judge: the server URL holds a user name or password (user:password@); type the key in "
                         "the API key box")
    if parts.query or parts.fragment or "?" in url or "#" in url:
        raise SpaceError("Judge: the server URL has a query or fragment (? or #); give the URL the API starts at, "
                         "e.g. https://host/v1")
    if deployed():
        allowed = [h.strip().lower() for h in os.environ.get(ALLOWED_HOSTS_VARIABLE, "").split(",") if h.strip()]
        if not allowed:
            raise SpaceError("Judge: this Space takes no server URL (its owner allows no host: "
                             f"{ALLOWED_HOSTS_VARIABLE}); leave the URL blank for the Space's own judge")
        if "*" not in allowed and host.lower() not in allowed:
            raise SpaceError(f"Judge: this Space does not reach {host}; the hosts it allows: {', '.join(allowed)}")
    return url


def check_space_options(metric: str, options: Mapping[str, Any]) -> None:
    """The Options box's options of ``metric`` as a visitor typed them: no judge (the picker's),
    no path (``baseline_path``), a ``model_type`` of :data:`SPACE_MODEL_TYPES` only."""
    for key, why in _REFUSED_OPTIONS.items():
        if key in options:
            raise SpaceError(f"Options {metric}.{key}: {why}")
    if "model_type" in options and options["model_type"] not in SPACE_MODEL_TYPES:
        raise SpaceError(f"Options {metric}.model_type: a Space offers the packaged default model only; leave "
                         "model_type out")


def _check_caps(metric: str, options: Mapping[str, Any]) -> None:
    """The options of ``metric`` (parsed) within the Space's caps (:data:`LIMITS`); a
    ``num_threads`` of None or 0 (every core) is over the cap too."""
    for key, name in _CAPPED_OPTIONS.items():
        if key not in options:
            continue
        value, cap = options[key], limit(name)
        if value is None or (value == 0 and key == "num_threads") or (isinstance(value, int) and value > cap):
            raise SpaceError(f"Options {metric}.{key}: {value!r} is over this Space's cap of {cap} "
                             f"{LIMITS[name].what} ({LIMITS[name].variable}); give 1 to {cap}")


def _check_rows(n: int) -> None:
    cap = limit("rows")
    if n > cap:
        raise SpaceError(f"Inputs: {n} rows, over this Space's cap of {cap} rows per click "
                         f"({LIMITS['rows'].variable}); score them in parts")


def _space_columns(metric: Any) -> dict[str, str]:
    """The table's columns: the metric's inputs, then its optional ones (G-Eval's sources...)."""
    return {**type(metric).columns, **getattr(type(metric), "optional_columns", {})}


def _user_message(error: BaseException, columns: Sequence[str]) -> str:
    """The sentence for an error, by its class: a bad input value (``InputError``) names its row
    (from 1) and field (one of ``columns``); an option's error (``OptionError``) the Options box;
    a judge's failure (``JudgeError``) the judge, and the row for one example's
    (``on_error="raise"``)."""
    from .judges.base import JudgeError
    from .llm.metrics import ExampleJudgeError

    if isinstance(error, ExampleJudgeError):
        return f"Judge: {error.metric}, row {error.index + 1}: {' '.join(error.reason.split())}"
    text = " ".join(str(error).split()) or type(error).__name__
    if isinstance(error, InputError) and error.argument in columns and error.index is not None:
        which = f" (text {error.item + 1})" if error.item is not None else ""
        return f"Row {error.index + 1}, {error.argument}{which}: {' '.join(error.reason.split())}"
    if isinstance(error, OptionError):
        return text if text.startswith("Options") else f"Options: {text}"
    if isinstance(error, JudgeError):
        return f"Judge: {text}"
    if isinstance(error, InputError):
        return f"Inputs: {text}"
    if isinstance(error, ValueError):  # the Space's own sentences, the library's others
        return text
    return f"Something went wrong while scoring ({type(error).__name__}): {text}"


def _is_bug(error: BaseException) -> bool:
    """An error that is neither the user's mistake (a ValueError: ``InputError``, ``OptionError``,
    ``SpaceError``...; a file that cannot be read) nor a judge's failure (``JudgeError``): a bug,
    as the command line counts it."""
    from .judges.base import JudgeError

    return not isinstance(error, (ValueError, OSError, JudgeError))


def report_error(error: BaseException, columns: Sequence[str], judge: Any = None, upload: str | None = None) -> str:
    """The sentence a Space shows for ``error`` (:func:`_user_message`); a bug's traceback goes
    to the app's log too (logger ``textgen_metrics.spaces``), since the page shows one line. The
    sentence names no server path (``upload``, the temporary file of an upload: its file name)
    and not the owner's endpoint (``judge``: the Space's own judge is "the Space's judge")."""
    if _is_bug(error):
        logger.error("a bug while scoring (%s): the traceback follows", type(error).__name__, exc_info=error)
    return _hide_endpoint(_no_paths(_user_message(error, columns), upload), judge)


def _owner_endpoint(judge: Any) -> str | None:
    """The URL of the owner's judge (a judge a visitor typed comes with a ``url_policy``)."""
    endpoint = getattr(judge, "base_url", None)
    return endpoint if endpoint and getattr(judge, "url_policy", 0) is None else None


def _hide_endpoint(text: str, judge: Any) -> str:
    """``text`` with the owner's endpoint said as "the Space's judge"."""
    endpoint = _owner_endpoint(judge)
    return text.replace(endpoint, "the Space's judge") if endpoint else text


def _hide_endpoint_in(value: Any, judge: Any) -> Any:
    """A result (JSON-like: its per-example errors may name the judge's URL) as
    :func:`_hide_endpoint` says it."""
    endpoint = _owner_endpoint(judge)
    if not endpoint:
        return value
    text = json.dumps(value, default=str)
    return value if endpoint not in text else json.loads(_hide_endpoint(text, judge))


def options_help(spec: Any) -> str:
    """The Options box's help, generated from the metric's options dataclass as its card's is
    (:func:`~textgen_metrics.option_docs.card_markdown`): each option with its kind, its default
    and its one line."""
    from .option_docs import card_markdown

    return "Options this metric takes:\n\n" + card_markdown(spec, front_end=False)


def _unscored_message(name: str, result: Mapping[str, Any], n: int) -> str:
    """The sentence for examples that got no score ('' when all did)."""
    errors = [e for e in (result.get("errors") or []) if isinstance(e, Mapping)]
    if not errors:
        return ""
    listed = _listed([f"row {e.get('index', 0) + 1}: {' '.join(str(e.get('error')).split())}" for e in errors])
    return f"{len(errors)} of {n} example(s) got no {name} score: {listed}"


def _listed(items: Sequence[str]) -> str:
    """The first ``_SHOWN_ERRORS`` items joined, and how many more there are."""
    more = f"; and {len(items) - _SHOWN_ERRORS} more" if len(items) > _SHOWN_ERRORS else ""
    return "; ".join(items[:_SHOWN_ERRORS]) + more


def run_metric(metric: Any, rows: Any, options_json: str | None, judge: Any = None,
               strict: bool = False) -> tuple[list[list[Any]], dict[str, Any]]:
    """Compute ``metric`` on table rows with JSON options: (result table rows, result dict).

    The table shows numbers with 4 significant digits; the result dict keeps them whole.
    ``strict``: the Space's checks (no blank cells, known options), each a SpaceError sentence.
    """
    options = _json_object(options_json, "Options", '{"use_stemmer": true}')
    columns = _space_columns(metric)
    optional = list(getattr(type(metric), "optional_columns", {}))
    if strict:
        from .registry import METRICS

        name = getattr(metric, "name", None) or ""
        check_space_options(name, options)
        if name in METRICS:  # the Options box and the judge checked as every front end's run is
            run = _space_run([name], {}, {name: options} if options else {}, judge if METRICS[name].judge else None)
            options = dict(run.options.get(name, {}))
        _check_caps(name, options)
        if hasattr(rows, "values") and hasattr(rows, "columns"):  # a pandas DataFrame
            rows = rows.values.tolist()
        _check_rows(len(rows or []))
    inputs = parse_rows(rows, columns, strict=strict, optional=optional)
    for column in optional:  # an optional input left blank in every row is not given
        if not any(str(v).strip() for v in inputs[column]):
            del inputs[column]
    if judge is not None:
        options["judge"] = judge
    result = metric.compute(**inputs, **options)
    table = [[k, format_value(v)] for k, v in result.items()]
    return table, result


def _judge_picker(gr: Any, open_: bool = True) -> dict[str, Any]:
    """The judge picker's boxes, ``{make_judge's argument: box}``, one for each field the
    OpenAI-compatible judge's declaration shows in a Space (``OpenAIOptions.space_fields``): its
    label, placeholder, HTML id and whether it is a password come from there, not from here."""
    from .judges.options import OpenAIOptions

    with gr.Accordion("Judge (an OpenAI-compatible server: OpenAI, vLLM, Ollama, TGI, llama.cpp; or a model "
                      "written azure:<deployment>, anthropic:<model>, gemini:<model>)", open=open_):
        with gr.Row():
            boxes = {f.name: gr.Textbox(label=f.label, placeholder=f.placeholder, elem_id=f.elem_id,
                                        type="password" if f.secret else "text")
                     for f in OpenAIOptions.space_fields}
    return boxes


def _session(request: Any) -> str:
    """The visitor session a Gradio request belongs to (its ``session_hash``), for the
    :class:`Allowance`."""
    return str(getattr(request, "session_hash", None) or "")


def _error(message: str) -> str:
    return f"**Error:** {md_escape(message)}" if message else ""


def _raise_if(message: str) -> None:
    """The second step of a click: the message as a gr.Error pop-up (the first step has filled
    the outputs and the error line)."""
    import gradio as gr

    if message:
        raise gr.Error(html.escape(message), duration=None, print_exception=False)  # shown as HTML


def metric_app(metric_dir: str) -> Any:
    """The Gradio Blocks of the Space in ``metric_dir`` (the folder of app.py)."""
    import evaluate
    import gradio as gr

    from .hf import JudgeMetric
    from .registry import METRICS

    metric_dir = os.path.abspath(metric_dir)
    metric = evaluate.load(metric_dir)
    columns = _space_columns(metric)
    name = os.path.basename(metric_dir)
    spec = METRICS.get(name)
    needs_judge = isinstance(metric, JudgeMetric)
    with gr.Blocks(title=f"{name} - textgen-metrics") as demo:
        gr.Markdown(f"# {name}\nType one example per row. Several references or contexts in one cell: "
                    f"separate them with `{LIST_SEPARATOR}`.")
        example = [_EXAMPLE.get(c, "") if c in type(metric).columns else "" for c in columns]  # optional: blank
        # (n, "fixed"): no column can be added; gradio 6 still takes the pair (its column_limits
        # is not implemented yet) though its annotation says int
        table = gr.Dataframe(value=[example], headers=list(columns),
                             column_count=(len(columns), "fixed"),  # type: ignore[arg-type]
                             type="array", interactive=True,
                             show_row_numbers=True, label="Inputs", elem_id="inputs")
        add_row = gr.Button("+ Add row", size="sm", variant="secondary", elem_id="add-row")
        picker = _judge_picker(gr) if needs_judge else {}
        start = json.dumps(getattr(type(metric), "space_options", {}), indent=1, ensure_ascii=False)
        options = gr.Code(value=start, language="json", label="Options (JSON)", elem_id="options")
        if spec is not None:
            with gr.Accordion("The options", open=False):
                gr.Markdown(options_help(spec), elem_id="options-help")
        button = gr.Button("Compute", variant="primary", elem_id="compute")
        error = gr.Markdown(elem_id="error")
        message = gr.State("")
        result_table = gr.Dataframe(headers=["key", "value"], label="Result (4 significant digits)",
                                    elem_id="result-table")
        result_json = gr.JSON(label="Result (JSON, every digit)", elem_id="result-json")

        def on_add_row(rows: Any) -> list[list[str]]:
            if hasattr(rows, "values") and hasattr(rows, "columns"):
                rows = rows.values.tolist()
            return [list(r) for r in (rows or [])] + [[""] * len(columns)]

        def on_click(request: Any, rows: Any, opts: str, *judge_args: str) -> tuple[Any, Any, str, str]:
            res: dict[str, Any] = {}
            judge = None
            try:
                if judge_args:  # the picker's boxes, in its order
                    judge = make_judge(**dict(zip(picker, judge_args, strict=True)), session=_session(request))
                res_table, res = run_metric(metric, rows, opts, judge, strict=True)
            except Exception as e:  # shown to the user (a bug's traceback logged), the app keeps running
                text = report_error(e, list(columns), judge)
                return [], {}, _error(text), text
            text = _hide_endpoint(_unscored_message(name, res, len(parse_rows(rows, columns)[next(iter(columns))])),
                                  judge)
            return _hide_endpoint_in(res_table, judge), _hide_endpoint_in(res, judge), _error(text), text

        on_click.__annotations__["request"] = gr.Request  # Gradio passes the visitor's request (a real class:
        # the string annotations of this module name no gr)
        add_row.click(on_add_row, [table], [table])
        button.click(on_click, [table, options, *picker.values()], [result_table, result_json, error, message],
                     concurrency_limit=limit("concurrency"), concurrency_id="compute"
                     ).then(_raise_if, [message], None)
        gr.Markdown(card_body(os.path.join(metric_dir, "README.md")))
    return demo


def _space_run(metrics: Sequence[str], columns: Mapping[str, Any], options: Mapping[str, Any], judge: Any) -> Any:
    """The :class:`~textgen_metrics.run.Run` of a Space's boxes, checked as every front end's (its
    messages name the boxes); a missing judge says to fill in the judge picker."""
    from .run import SPACE_WORDS, Run, RunError

    try:
        return Run.build(metrics, columns, options, judge, words=SPACE_WORDS)
    except RunError as e:
        if e.argument == "judge":
            raise SpaceError(f"{e}: fill in the server URL and model") from None
        raise


def _chart(ids: Sequence[Any], series: Sequence[tuple[str, list[float | None], tuple[float, float]]]) -> str:
    from .report import svg_bars, svg_histogram

    charts = [svg_bars(ids, values, title, value_range) if len(ids) <= _MAX_CHARTED
              else svg_histogram(values, title, value_range=value_range)
              for title, values, value_range in series]
    return ("<div id='score-charts' style='display:flex;flex-wrap:wrap;gap:1.5em;align-items:flex-start'>"
            + "".join(charts) + "</div>")


def run_playground(path: str | None, metrics: Sequence[str], columns_json: str | None,
                   options_json: str | None, judge: Any = None
                   ) -> tuple[list[list[Any]], tuple[list[str], list[list[Any]]], str, dict[str, Any]]:
    """Score the uploaded file: (summary rows, per-example rows and headers, chart HTML, report).

    Tables show 4 significant digits; the report keeps every digit."""
    from .registry import METRICS
    from .scoring import read_records, score_name, score_records

    if not path:
        raise SpaceError("File: upload a CSV, TSV, JSON or JSONL file with one example per row")
    if not metrics:
        raise SpaceError("Metrics: choose at least one metric")
    columns = _json_object(columns_json, "Columns", '{"predictions": "answer"}')
    options = _json_object(options_json, "Options", '{"rouge": {"use_stemmer": true}}')
    for name, given in options.items():
        if isinstance(given, Mapping):
            check_space_options(name, given)
    run = _space_run(metrics, columns, options, judge)
    for name, given in run.options.items():
        _check_caps(name, given)
    cap = limit("upload_mb")
    if os.path.getsize(path) > cap * 1_000_000:
        raise SpaceError(f"File: {os.path.getsize(path) / 1e6:.1f} MB, over this Space's cap of {cap} MB per file "
                         f"({LIMITS['upload_mb'].variable})")
    try:
        rows = read_records(path)
    except (ValueError, UnicodeDecodeError) as e:
        raise SpaceError(f"File: {_no_paths(' '.join(str(e).split()), path)}") from None
    _check_rows(len(rows))
    report = score_records(rows, metrics, run=run, source=os.path.basename(path),
                           column_hint='the Columns box, e.g. {{"{column}": "FIELD"}}')
    summary = [[k, format_value(v)] for k, v in report["summary"].items()]
    headers, scored, series = ["id"], [], []
    for name, m in report["metrics"].items():
        for key in m["scores"]:
            headers.append(score_name(name, key))
            scored.append(m["per_example"][key])
            series.append((score_name(name, key), m["per_example"][key], METRICS[name].score_range))
    ids = [str(i) for i in report["ids"]]
    per_example = [[ids[i], *[format_value(s[i]) for s in scored]] for i in range(len(ids))]
    return summary, (headers, per_example), _chart(ids, series), report


def _no_paths(text: str, *paths: str | None) -> str:
    """``text`` without the server's paths: each of ``paths`` (an upload's temporary file) as
    its file name, then any other path under the temporary folder, the package or the working
    folder as ``.../<file name>``."""
    for path in paths:
        if path:
            text = text.replace(os.path.abspath(path), os.path.basename(path)).replace(path, os.path.basename(path))
    for folder in {tempfile.gettempdir(), os.path.dirname(os.path.abspath(__file__)), os.getcwd(),
                   os.path.expanduser("~")}:
        if len(folder) > 1:
            text = re.sub(re.escape(folder.rstrip(os.sep)) + r"(?:/[^\s'\"/:]+)*/([^\s'\"/:]+)", r".../\1", text)
    return text


def _playground_unscored(report: Mapping[str, Any]) -> str:
    from .scoring import unscored

    missing = unscored(report)
    if not missing:
        return ""
    listed = _listed([f"{m['metric']}, row {m['row']}: {' '.join(str(m['error']).split())}" for m in missing])
    return f"{len(missing)} score(s) missing: {listed}"


def playground_app(metric_names: Sequence[str] | None = None) -> Any:
    """One Space with every metric: upload a file, pick metrics and a judge, see the scores."""
    import gradio as gr
    import pandas

    from .registry import METRICS

    names = list(metric_names or METRICS)
    opening = [n for n in _OPENING_METRICS if n in names]
    with gr.Blocks(title="textgen-metrics playground") as demo:
        gr.Markdown(
            "# textgen-metrics playground\n"
            "Upload a CSV, TSV, JSON or JSONL file with one example per row, pick the metrics and "
            "press **Score**. Fields by default: `prediction` (or `predictions`), `references` or "
            "`reference` (a text or a JSON list), `query`, `contexts` or `context` (a JSON list), "
            "`source`; map others under *Columns*. The LLM-guided metrics need a judge: an "
            "OpenAI-compatible server (none for the lexical ones).")
        with gr.Row():
            upload = gr.File(label="Data file", file_types=[".csv", ".tsv", ".json", ".jsonl"],
                             type="filepath", elem_id="upload")
            with gr.Column():
                chosen = gr.Dropdown(names, value=opening or names[:1], multiselect=True,
                                     label="Metrics", elem_id="metrics")
                columns = gr.Textbox(value="{}", label="Columns (JSON: input -> field)", lines=1,
                                     elem_id="columns")
                options = gr.Textbox(value="{}", label='Options (JSON: {"rouge": {"use_stemmer": true}})',
                                     lines=1, elem_id="options")
        picker = _judge_picker(gr, open_=False)
        button = gr.Button("Score", variant="primary", elem_id="score")
        error = gr.Markdown(elem_id="error")
        message = gr.State("")
        summary = gr.Dataframe(headers=["score", "value"], label="Summary (4 significant digits)",
                               elem_id="summary")
        chart = gr.HTML(elem_id="chart")
        per_example = gr.Dataframe(label="Per example", elem_id="per-example")
        report_json = gr.JSON(label="Report (JSON, every digit)", elem_id="report")

        def on_click(request: Any, path: str | None, metrics: list[str], cols: str, opts: str,
                     *judge_args: str) -> tuple[Any, ...]:
            judge = None
            try:
                judge = make_judge(**dict(zip(picker, judge_args, strict=True)), session=_session(request))
                rows, (headers, table), svg, report = run_playground(path, metrics, cols, opts, judge)
            except Exception as e:  # shown to the user (a bug's traceback logged), the app keeps running
                inputs = sorted({c for m in (metrics or []) if m in METRICS for c in METRICS[m].columns})
                text = report_error(e, inputs, judge, path)
                return [], "", pandas.DataFrame(), {}, _error(text), text
            text = _hide_endpoint(_playground_unscored(report), judge)
            report = _hide_endpoint_in(report, judge)
            return rows, svg, pandas.DataFrame(table, columns=headers), report, _error(text), text

        on_click.__annotations__["request"] = gr.Request  # as metric_app's
        button.click(on_click, [upload, chosen, columns, options, *picker.values()],
                     [summary, chart, per_example, report_json, error, message],
                     concurrency_limit=limit("concurrency"), concurrency_id="score"
                     ).then(_raise_if, [message], None)
    return demo
