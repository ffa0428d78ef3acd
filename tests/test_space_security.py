"""A Space tried as a stranger would (issue 45): the owner's keys, files, network and machine stay
the owner's. The Space's own functions are called as its click handlers call them (one test drives
the faithfulness Space in Debian's chromium); the servers a visitor or a cloud would run are
stand-ins on 127.0.0.1: the visitor's chat server records the headers it got, a redirecting server
points at a stand-in cloud metadata endpoint that answers with credentials."""

import contextlib
import functools
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from chat_server import AnthropicServer, AzureServer, ChatServer, GeminiServer, schema_answer
from conftest import ROOT
from test_spaces import TYPED, browser, page, serve  # noqa: F401  (fixtures)
from textgen_metrics.judges.http import URLPolicy, public_address, public_socket
from textgen_metrics.spaces import LIMITS, Allowance, make_judge, report_error, run_metric, run_playground

OWNER = {"OPENAI_API_KEY": "sk-owner-OPENAI-111", "AZURE_OPENAI_API_KEY": "owner-AZURE-222",
         "AZURE_OPENAI_AD_TOKEN": "owner-ENTRA-333", "ANTHROPIC_API_KEY": "sk-ant-owner-444",
         "GEMINI_API_KEY": "owner-GEMINI-555"}
CREDENTIALS = {"Code": "Success", "AccessKeyId": "ASIA-STAND-IN-KEY-ID", "SecretAccessKey": "stand-in-SECRET-666",
               "Token": "stand-in-session-token"}


@pytest.fixture(autouse=True)
def owner_space(monkeypatch):
    """The owner's provider keys in the environment, as Space secrets put them; no Space
    variables; a fresh day for the judge allowance."""
    for name, value in OWNER.items():
        monkeypatch.setenv(name, value)
    for name in ("SPACE_ID", "TEXTGEN_METRICS_JUDGE", "TEXTGEN_METRICS_ALLOWED_HOSTS", "OPENAI_BASE_URL",
                 "ANTHROPIC_BASE_URL", "AZURE_OPENAI_ENDPOINT", *(cap.variable for cap in LIMITS.values())):
        monkeypatch.delenv(name, raising=False)
    Allowance._day = ""
    yield


@functools.cache
def metric(name):
    import evaluate

    return evaluate.load(str(ROOT / "metrics" / name))


def row(name, **cells):
    """One table row of the metric Space ``name``: the typed example, ``cells`` replacing some."""
    return [cells.get(c, TYPED[c]) for c in type(metric(name)).columns]


def faithfulness(judge, rows=1):
    """Faithfulness of ``rows`` different examples (2 judge requests each) in its Space."""
    table = [row("faithfulness", predictions=f"{TYPED['predictions']} . it was day {i} .") for i in range(rows)]
    return run_metric(metric("faithfulness"), table, "{}", judge, strict=True)


def owner_secrets_in(headers):
    text = json.dumps(headers)
    return [name for name, value in OWNER.items() if value in text]


class Recorder:
    """A loopback HTTP server answering every request with ``answer(handler) -> (status, headers,
    body)``; it records each request's method, path and headers."""

    def __init__(self, answer):
        self.requests = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _any(self):
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                recorder.requests.append((self.command, self.path, dict(self.headers)))
                status, headers, body = answer(self)
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _any

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.root = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@contextlib.contextmanager
def metadata_behind_redirect():
    """A stand-in cloud metadata endpoint (credentials in its body) and a server that redirects
    every request to it with a 303 (which turns a POST into a GET)."""
    metadata = Recorder(lambda h: (200, {"Content-Type": "application/json"}, json.dumps(CREDENTIALS).encode()))
    target = f"{metadata.root}/latest/meta-data/iam/security-credentials/role"
    redirector = Recorder(lambda h: (303, {"Location": target}, b""))
    try:
        yield redirector, metadata
    finally:
        redirector.close()
        metadata.close()


def shown(judge):
    """What the faithfulness Space shows a visitor who runs ``judge``: the error of a run that
    stopped, else the result (JSON) and the sentence about the examples that got no score."""
    from textgen_metrics.spaces import _unscored_message

    try:
        _, result = faithfulness(judge)
    except Exception as e:
        return report_error(e, list(TYPED), judge)
    return json.dumps(result) + " " + _unscored_message("faithfulness", result, 1)


def failure(call):
    """The sentence the Space shows for what ``call`` raises."""
    with pytest.raises(Exception) as raised:
        call()
    return report_error(raised.value, list(TYPED))


# -- 1. the owner's key goes only where the owner said ------------------------------------------------
@pytest.mark.parametrize("server_class,model", [(ChatServer, "openai:gpt-4o-mini"), (ChatServer, "judge-model"),
                                                (AnthropicServer, "anthropic:claude-3-5-haiku-latest"),
                                                (GeminiServer, "gemini:gemini-2.0-flash")],
                         ids=["openai", "compatible", "anthropic", "gemini"])
def test_a_typed_url_with_a_blank_key_never_gets_the_owners_key(server_class, model):
    with server_class(schema_answer) as visitor:
        table, result = faithfulness(make_judge(visitor.url, model, ""))
        assert visitor.headers and not result["errors"]
        assert owner_secrets_in(visitor.headers) == []
        assert all(visitor.presented_key(h) == "" for h in visitor.headers)  # no key header at all
        table, result = faithfulness(make_judge(visitor.url, model, "visitor-own-key"))
        assert visitor.presented_key(visitor.headers[-1]) == "visitor-own-key"
        assert owner_secrets_in(visitor.headers) == []


def test_a_typed_azure_endpoint_takes_the_visitors_key_only():
    with AzureServer(schema_answer, deployment="dep") as visitor:
        message = failure(lambda: make_judge(visitor.url, "azure:dep", ""))
        assert message.startswith("Judge: an Azure endpoint you type needs your own API key"), message
        faithfulness(make_judge(visitor.url, "azure:dep", "visitor-azure-key"))
        assert [visitor.presented_key(h) for h in visitor.headers] == ["visitor-azure-key"] * len(visitor.headers)
        assert owner_secrets_in(visitor.headers) == []  # neither the key nor the Entra token


def test_the_owners_key_goes_to_the_owners_endpoint_and_judge(monkeypatch):
    with ChatServer(schema_answer) as owner, ChatServer(schema_answer) as other:
        monkeypatch.setenv("OPENAI_BASE_URL", owner.url)
        faithfulness(make_judge("", "openai:owner-model", ""))  # no URL: the owner's endpoint and key
        assert owner.headers and all(h["Authorization"] == f"Bearer {OWNER['OPENAI_API_KEY']}" for h in owner.headers)
        monkeypatch.setenv("TEXTGEN_METRICS_JUDGE", "openai:owner-model")
        sent = len(owner.headers)
        _, result = faithfulness(make_judge("", "", ""))  # a blank picker: the owner's judge
        assert len(owner.headers) > sent and result["judge_model"] == "owner-model"
        message = failure(lambda: make_judge("", "openai:gpt-4o", ""))  # another model on the owner's key
        assert message.startswith("Judge: this Space's key serves its own judge only"), message
        faithfulness(make_judge(other.url, "openai:gpt-4o", ""))
        assert owner_secrets_in(other.headers) == []


def test_the_owners_endpoint_is_not_shown_to_a_visitor(monkeypatch):
    with socket_nobody_listens() as port:
        internal = f"http://127.0.0.1:{port}/internal-gateway/v1"
        monkeypatch.setenv("OPENAI_BASE_URL", internal)
        judge = make_judge("", "openai:owner-model", "")
        with pytest.raises(Exception) as raised:
            faithfulness(judge)
        message = report_error(raised.value, list(TYPED), judge)
        assert "internal-gateway" not in message and "the Space's judge" in message, message
    gateway = Recorder(lambda h: (400, {"Content-Type": "application/json"}, b'{"error": {"message": "bad"}}'))
    try:  # each example's error (a 400 is that request's) in the result the page shows
        monkeypatch.setenv("OPENAI_BASE_URL", f"{gateway.root}/internal-gateway/v1")
        judge = make_judge("", "openai:owner-model", "")
        _, result = faithfulness(judge)
        assert "internal-gateway" in json.dumps(result["errors"])  # the library's result says where
        from textgen_metrics.spaces import _hide_endpoint_in, _unscored_message

        assert "internal-gateway" not in json.dumps(_hide_endpoint_in(result, judge))
        assert "internal-gateway" not in report_error(ValueError(_unscored_message("f", result, 1)), [], judge)
    finally:
        gateway.close()


@contextlib.contextmanager
def socket_nobody_listens():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    yield port


@pytest.mark.parametrize("options", ['{"judge": "gguf:/etc/passwd"}', '{"judge": "openai:gpt-4o-mini"}',
                                     '{"judge_options": {"base_url": "http://169.254.169.254/"}}'])
def test_the_options_box_refuses_a_judge(options):
    with ChatServer(schema_answer) as visitor:
        message = failure(lambda: run_metric(metric("faithfulness"), [row("faithfulness")], options, None,
                                             strict=True))
        assert "the judge is chosen with the judge picker, not the Options box" in message, message
        assert "root" not in message and "b'" not in message and visitor.count == 0


def test_the_playground_options_refuse_a_judge_and_a_path(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"prediction": "a cat", "references": ["a cat"], "contexts": ["a cat"]}) + "\n")
    message = failure(lambda: run_playground(str(data), ["faithfulness"], "{}",
                                             '{"faithfulness": {"judge": "openai:gpt-4o-mini"}}'))
    assert message == "Options faithfulness.judge: the judge is chosen with the judge picker, not the Options box"
    message = failure(lambda: run_playground(str(data), ["bertscore"], "{}",
                                             '{"bertscore": {"rescale_with_baseline": true, '
                                             '"baseline_path": "/etc/passwd"}}'))
    assert message.startswith("Options bertscore.baseline_path: a Space reads no file of its server"), message


@pytest.mark.parametrize("model", ["gguf:/etc/passwd", "gguf:/proc/self/environ", "hf:/etc", "tiny:/etc/passwd",
                                   "gguf:" + str(ROOT)])
def test_the_picker_takes_no_file_path(model):
    message = failure(lambda: make_judge("", model, ""))
    assert message.startswith(f"Judge: {model.partition(':')[0]}: is not a backend of this Space"), message
    assert "root" not in message and ".gguf" not in message and "b'" not in message


def test_a_gguf_error_quotes_no_byte_of_the_file(tmp_path):
    from textgen_metrics.judges.llamacpp import resolve_gguf

    secret = tmp_path / "passwd"
    secret.write_text("SHELL=/bin/bash hunter2\n")
    with pytest.raises(ValueError) as raised:
        resolve_gguf(str(secret))
    assert "is not a GGUF file" in str(raised.value)
    assert "SHEL" not in str(raised.value) and "b'" not in str(raised.value)


# -- 2. no request a visitor can aim inward -----------------------------------------------------------------
def test_a_deployed_space_takes_no_url_unless_the_owner_allows_hosts(monkeypatch):
    monkeypatch.setenv("SPACE_ID", "owner/space")
    with ChatServer(schema_answer) as visitor:
        message = failure(lambda: make_judge(visitor.url, "m", ""))
        assert message.startswith("Judge: this Space takes no server URL (its owner allows no host: "
                                  "TEXTGEN_METRICS_ALLOWED_HOSTS)"), message
        monkeypatch.setenv("TEXTGEN_METRICS_ALLOWED_HOSTS", "judge.example.com, other.example.org")
        message = failure(lambda: make_judge(visitor.url, "m", ""))
        assert message == ("Judge: this Space does not reach 127.0.0.1; the hosts it allows: judge.example.com, "
                           "other.example.org")
        assert visitor.count == 0


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"], ids=["ip-literal-at-connect", "name-at-resolve"])
def test_an_allowed_host_is_reached_at_public_addresses_only(monkeypatch, host):
    monkeypatch.setenv("SPACE_ID", "owner/space")
    monkeypatch.setenv("TEXTGEN_METRICS_ALLOWED_HOSTS", host)
    with ChatServer(schema_answer) as internal:
        port = internal.httpd.server_address[1]
        judge = make_judge(f"http://{host}:{port}/v1", "m", "")
        assert judge.url_policy == URLPolicy(public_only=True)
        with pytest.raises(Exception) as raised:
            faithfulness(judge)
        message = report_error(raised.value, list(TYPED), judge)
        assert "a URL typed here may name public servers only" in message, message
        assert internal.count == 0  # refused before any request


def test_the_connect_time_check_refuses_private_addresses():
    import socket

    for address in ("127.0.0.1", "169.254.169.254", "10.0.0.5", "192.168.1.1", "::1", "::ffff:127.0.0.1", "fe80::1"):
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        with pytest.raises(OSError, match="not a public address"):
            public_socket((family, socket.SOCK_STREAM, 6, "", (address, 80)))
    sock = public_socket((socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", 80)))
    sock.close()
    assert [public_address(a) for a in ("8.8.8.8", "2606:4700::1111", "100.64.0.1", "0.0.0.0", "224.0.0.1",
                                        "2002:7f00:1::")] == [True, True, False, False, False, False]


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/v1#", "http://127.0.0.1:9/v1?x=", "http://u:p@127.0.0.1:9/v1",
                                 "file:///etc/passwd", "http:///v1"])
def test_a_url_that_would_go_elsewhere_is_refused(url):
    message = failure(lambda: make_judge(url, "m", ""))
    assert message.startswith("Judge: the server URL "), message


def test_a_base_url_with_a_query_or_fragment_is_refused_by_the_library():
    from textgen_metrics.judges import OpenAIJudge

    for url in ("http://127.0.0.1:9/v1#", "http://127.0.0.1:9/v1?x="):
        with pytest.raises(ValueError, match="base_url: .* is followed by a query or a fragment"):
            OpenAIJudge("m", base_url=url, api_key="k")


def test_a_redirect_to_the_metadata_endpoint_is_not_followed():
    with metadata_behind_redirect() as (redirector, metadata):
        judge = make_judge(f"{redirector.root}/v1", "m", "")
        with pytest.raises(Exception) as raised:
            faithfulness(judge)
        message = report_error(raised.value, list(TYPED), judge)
        assert "answered HTTP 303, a redirect, which a typed URL does not follow" in message, message
        assert redirector.requests and metadata.requests == []
        assert not any(v in message for v in CREDENTIALS.values())


def test_a_reply_that_is_no_chat_completion_is_not_shown():
    """The stand-in metadata endpoint named as the judge: its credentials never reach the page."""
    with metadata_behind_redirect() as (_, metadata):
        message = shown(make_judge(f"{metadata.root}/v1", "m", ""))
        assert metadata.requests and "the server sent a body that is not a chat completion" in message, message
        assert not any(v in message for v in CREDENTIALS.values())
    for status in (400, 403, 404, 500):
        leaky = Recorder(lambda h, s=status: (s, {"Content-Type": "application/json"},
                                              json.dumps({"error": {"message": CREDENTIALS["SecretAccessKey"]}}
                                                         ).encode()))
        try:
            message = shown(make_judge(f"{leaky.root}/v1", "m", ""))
            assert f"HTTP {status}" in message and "reply not shown" in message, message
            assert CREDENTIALS["SecretAccessKey"] not in message
        finally:
            leaky.close()


# -- 3. no file a visitor can read ------------------------------------------------------------------------
@pytest.mark.parametrize("options,refused", [
    ('{"rescale_with_baseline": true, "baseline_path": "/etc/passwd", "num_layers": 1}', "baseline_path"),
    ('{"model_type": "/"}', "model_type"), ('{"model_type": "' + str(ROOT) + '"}', "model_type")])
def test_bertscore_path_options_are_refused_in_a_space(options, refused):
    message = failure(lambda: run_metric(metric("bertscore"), [row("bertscore")], options, None, strict=True))
    assert message.startswith(f"Options bert_score.{refused}: "), message  # the module's name


def test_a_bad_baseline_file_is_named_by_row_and_column_not_quoted(tmp_path):
    from textgen_metrics import bertscore

    path = tmp_path / "baseline.tsv"
    path.write_text("LAYER,P,R,F\n0,0.1,0.2,0.3\n1,hunter2-secret,0.2,0.3\n")
    with pytest.raises(ValueError) as raised:
        bertscore(["a cat"], ["a cat"], rescale_with_baseline=True, baseline_path=str(path), num_layers=1)
    assert "row 3, column 2: not a number" in str(raised.value), str(raised.value)
    assert "hunter2" not in str(raised.value)


def test_space_messages_carry_no_server_path(tmp_path):
    upload = tmp_path / "gradio" / "0123abcd" / "data.csv"
    error = ValueError(f"{upload}: row 3 has no field 'prediction'")
    message = report_error(error, [], upload=str(upload))
    assert message == "data.csv: row 3 has no field 'prediction'"
    bug = OSError(f"[Errno 2] No such file or directory: '{ROOT / 'src' / 'textgen_metrics' / 'x.bin'}'")
    assert str(ROOT) not in report_error(bug, [])


# -- 4. limits a visitor cannot lift ----------------------------------------------------------------------
@pytest.mark.parametrize("options,words", [
    ('{"confidence_level": 0.95, "n_resamples": 1000000}', "bleu.n_resamples: 1000000 is over this Space's cap of "
                                                           "10000 bootstrap resamples"),
    ('{"num_threads": 100000}', "bleu.num_threads: 100000 is over this Space's cap of 2 threads"),
    ('{"num_threads": 0}', "bleu.num_threads: 0 is over this Space's cap of 2 threads")])
def test_heavy_options_are_capped(options, words):
    message = failure(lambda: run_metric(metric("bleu"), [row("bleu")], options, None, strict=True))
    assert words in message, message


def test_the_owner_sets_the_caps(monkeypatch):
    monkeypatch.setenv("TEXTGEN_METRICS_MAX_RESAMPLES", "50")
    monkeypatch.setenv("TEXTGEN_METRICS_MAX_ROWS", "3")
    message = failure(lambda: run_metric(metric("bleu"), [row("bleu")], '{"n_resamples": 51}', None, strict=True))
    assert "cap of 50 bootstrap resamples" in message and "TEXTGEN_METRICS_MAX_RESAMPLES" in message
    run_metric(metric("bleu"), [row("bleu")] * 3, '{"n_resamples": 50, "confidence_level": 0.9}', None, strict=True)
    message = failure(lambda: run_metric(metric("bleu"), [row("bleu")] * 4, "{}", None, strict=True))
    assert message.startswith("Inputs: 4 rows, over this Space's cap of 3 rows per click"), message
    monkeypatch.setenv("TEXTGEN_METRICS_MAX_ROWS", "lots")
    message = failure(lambda: run_metric(metric("bleu"), [row("bleu")], "{}", None, strict=True))
    assert "TEXTGEN_METRICS_MAX_ROWS='lots' is not a whole number > 0" in message


def test_the_playground_caps_rows_and_upload_size(monkeypatch, tmp_path):
    data = tmp_path / "big.jsonl"
    data.write_text("".join(json.dumps({"prediction": "a cat " * 40, "references": ["a cat"]}) + "\n"
                            for _ in range(5000)))
    monkeypatch.setenv("TEXTGEN_METRICS_MAX_UPLOAD_MB", "1")
    message = failure(lambda: run_playground(str(data), ["bleu"], "{}", "{}"))
    size = data.stat().st_size / 1e6
    assert 1 < size < 2 and message.startswith(f"File: {size:.1f} MB, over this Space's cap of 1 MB per file"), message
    assert str(tmp_path) not in message
    monkeypatch.setenv("TEXTGEN_METRICS_MAX_UPLOAD_MB", "2")
    message = failure(lambda: run_playground(str(data), ["bleu"], "{}", "{}"))
    assert message.startswith("Inputs: 5000 rows, over this Space's cap of 1000 rows per click"), message


def test_the_playground_hands_the_upload_cap_to_gradio(monkeypatch):
    """Gradio refuses a larger upload before storing it: app.py, run as a Space runs it, launches
    with max_file_size from TEXTGEN_METRICS_MAX_UPLOAD_MB."""
    import runpy

    import gradio

    launched = {}
    monkeypatch.setenv("TEXTGEN_METRICS_MAX_UPLOAD_MB", "3")
    monkeypatch.setattr(gradio.Blocks, "launch", lambda self, **kwargs: launched.update(kwargs))
    runpy.run_path(str(ROOT / "spaces" / "playground" / "app.py"), run_name="__main__")
    assert launched == {"max_file_size": 3_000_000}


def test_judge_requests_are_capped_per_session_and_per_day(monkeypatch):
    monkeypatch.setenv("TEXTGEN_METRICS_SESSION_REQUESTS", "3")
    monkeypatch.setenv("TEXTGEN_METRICS_DAILY_REQUESTS", "5")
    with ChatServer(schema_answer) as visitor:
        message = failure(lambda: faithfulness(make_judge(visitor.url, "m", "", session="a"), rows=4))
        assert "this Space's allowance of 3 judge requests per visitor session is spent" in message, message
        # booked before sent (the run stops with requests in flight, which the server may not have read)
        assert Allowance._sessions["a"][0] == 3 and visitor.count <= 3
        faithfulness(make_judge(visitor.url, "m", "", session="b"))  # 2 requests: 5 today
        message = failure(lambda: faithfulness(make_judge(visitor.url, "m", "", session="c")))
        assert "allowance of 5 judge requests per day, all visitors is spent" in message, message
        assert Allowance._total[0] == 5 and visitor.count <= 5 and Allowance._sessions["c"][0] == 0


def test_judge_tokens_are_capped_per_session(monkeypatch):
    monkeypatch.setenv("TEXTGEN_METRICS_SESSION_TOKENS", "10")
    with ChatServer(schema_answer) as visitor:
        message = failure(lambda: faithfulness(make_judge(visitor.url, "m", "", session="a"), rows=3))
        assert "allowance of 10 judge tokens per visitor session is spent" in message, message
        assert 1 <= Allowance._sessions["a"][0] < 6 and visitor.count < 6  # the verdicts never asked


def test_clicks_run_side_by_side_up_to_the_owners_bound(monkeypatch):
    monkeypatch.setenv("TEXTGEN_METRICS_CONCURRENCY", "3")
    from textgen_metrics.spaces import metric_app, playground_app

    for demo in (metric_app(str(ROOT / "metrics" / "bleu")), playground_app(["bleu"])):
        limits = [fn.concurrency_limit for fn in demo.fns.values() if fn.name == "on_click"]
        assert limits == [3], limits


FAILED_THREAD_START = r"""
import resource, sys
import textgen_metrics
preds = ["the cat sat on the mat number %d today" % i for i in range(4000)]
refs = [["a cat sat on a mat number %d" % i] for i in range(4000)]
want = textgen_metrics.bleu(preds, refs, num_threads=1)
with open("/proc/self/status") as f:
    size = next(int(line.split()[1]) for line in f if line.startswith("VmSize:")) * 1024
resource.setrlimit(resource.RLIMIT_AS, (size + 48 * 2**20, size + 48 * 2**20))  # room for a few thread stacks
got = textgen_metrics.bleu(preds, refs, num_threads=64)
assert got == want, (got, want)
print("same score")
"""


def test_a_failed_thread_start_in_the_compiled_core_does_not_abort_the_process():
    """64 threads asked for, memory for a few 8 MB stacks: the threads that cannot start are
    std::system_error in C++; the chunks they would have run run in the calling thread (before,
    std::terminate: exit 134)."""
    proc = subprocess.run([sys.executable, "-c", FAILED_THREAD_START], capture_output=True, text=True,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout.strip() == "same score"


# -- the key-leak scenario in a real browser -----------------------------------------------------------
def test_in_the_browser_a_visitors_server_never_gets_the_owners_key(page):  # noqa: F811
    with ChatServer(schema_answer) as visitor, serve(ROOT / "metrics" / "faithfulness" / "app.py") as url:
        page.goto(url)
        page.locator("#judge-url textarea, #judge-url input").first.fill(visitor.url)
        page.locator("#judge-model textarea, #judge-model input").first.fill("openai:gpt-4o-mini")
        page.click("#compute")  # the key box left blank
        page.locator("#result-table [data-testid=cell-0-0]").wait_for()
        assert page.locator("#error").inner_text().strip() == ""
        assert visitor.headers and owner_secrets_in(visitor.headers) == []
        assert all("Authorization" not in h for h in visitor.headers)
        page.locator("#judge-url textarea, #judge-url input").first.fill("")
        page.locator("#judge-model textarea, #judge-model input").first.fill("gguf:/etc/passwd")
        page.click("#compute")
        page.locator("#error").get_by_text("Error:").wait_for()
        line = page.locator("#error").inner_text()
        assert "gguf: is not a backend of this Space" in line and "root" not in line, line
        assert not any(value in page.content() for value in OWNER.values())
