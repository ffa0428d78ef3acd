"""Secrets stay secret everywhere (issue 45, item 5), tried as an attacker would: a loopback
stand-in server that echoes the key it was sent into its answer and the answer's logprob tokens;
a judge URL with ``user:password@`` in it, through the command line's output and both reports;
the key written in other spellings; the caches' file modes under a permissive umask; and a shared
cache entry rewritten by someone with write access to its folder."""

import base64
import json
import os
import stat
import subprocess
import sys
import urllib.parse
import warnings

import pytest

from chat_server import ChatServer, schema_answer
from conftest import ROOT
from textgen_metrics.judges import DirectoryCache, JudgeCache, JudgeRequest, OpenAIJudge
from textgen_metrics.judges.cache import default_cache_path
from textgen_metrics.judges.redaction import REDACTED, Redactor, mask_url_credentials

SECRET = "sk-Echo+Secret/Key=4242abcd"
SCORE = {"type": "object", "required": ["score"], "properties": {"score": {"type": "integer"}}}


def spellings(secret):
    """The key as a leaky server or proxy might write it back."""
    raw = secret.encode()
    return [secret, secret.upper(), secret.lower(), f"Bearer {secret}", urllib.parse.quote(secret, safe=""),
            urllib.parse.quote_plus(secret), base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()]


def leaked(text, secret=SECRET):
    """The spellings of ``secret`` found in ``text`` (letter case ignored)."""
    return [s for s in spellings(secret) if s.lower() in text.lower()]


def stored_bytes(path):
    """Every byte a cache left on disk: the SQLite file with its -wal/-shm, or a folder's files."""
    paths = [os.path.join(d, f) for d, _, names in os.walk(path) for f in names] if os.path.isdir(path) else \
        [p for p in (path, f"{path}-wal", f"{path}-shm") if os.path.exists(p)]
    return "".join(open(p, "rb").read().decode("latin-1") for p in paths)


# -- an echoing server leaves no key in the cache -------------------------------------------------
def echo(body, task, key):
    """A server that writes the key it was sent into its answer, into one logprob token whole (an
    alternative of the score's token) and spread over two more, beside the score's own token."""
    return {"content": f'{{"score": 4, "note": "you sent {key}"}}',
            "logprobs": [{"token": '{"score": ', "logprob": -0.01, "top_logprobs": []},
                         {"token": "4", "logprob": -0.2, "top_logprobs": [{"token": "4", "logprob": -0.2},
                                                                          {"token": key, "logprob": -3.0}]},
                         {"token": ', "note": "you sent ', "logprob": -0.1, "top_logprobs": []},
                         {"token": key[:5], "logprob": -0.1, "top_logprobs": []},
                         {"token": key[5:], "logprob": -0.1, "top_logprobs": []},
                         {"token": '"}', "logprob": -0.1, "top_logprobs": []}]}


@pytest.mark.parametrize("kind", ["sqlite", "folder"])
def test_a_server_echoing_the_key_leaves_no_key_in_the_cache_or_the_result(tmp_path, kind):
    where = tmp_path / ("c.sqlite" if kind == "sqlite" else "shared")
    cache = str(where) if kind == "sqlite" else f"dir:{where}"
    request = JudgeRequest([{"role": "user", "content": "rate it"}], schema=SCORE, logprobs=True, top_logprobs=2)
    with ChatServer(echo, key=SECRET) as srv:
        judge = OpenAIJudge("judge-model", base_url=srv.url, api_key=SECRET, cache=cache)
        [first] = judge.judge([request])
        assert srv.count == 1 and first.ok and first.value["score"] == 4
        assert srv.headers[0]["Authorization"] == f"Bearer {SECRET}"  # the server had the key to echo
        assert len(judge.cache) == 1  # the answer was cached
        assert leaked(stored_bytes(str(where))) == []
        assert leaked(json.dumps(first.logprobs)) == [] and leaked(first.text) == []
        tokens = [t["token"] for t in first.logprobs]
        assert tokens[1] == "4" and tokens[3] == tokens[4] == REDACTED  # the score's token kept, the key's gone
        assert first.logprobs[1]["top_logprobs"][1]["token"] == REDACTED
        [again] = OpenAIJudge("judge-model", base_url=srv.url, api_key=SECRET, cache=cache).judge([request])
    assert srv.count == 1 and again.cached == 1 and again.value == first.value
    assert leaked(json.dumps(again.logprobs)) == []


def test_a_callable_judge_s_own_logprob_shapes_are_scrubbed_before_the_cache(tmp_path):
    """Whatever shape a function judge gives its logprobs, every string in them (a field's name
    too) is redacted before the result and the cache see it."""
    from textgen_metrics.judges import CallableJudge

    class Keyed(CallableJudge):  # a client whose key the judge knows
        def secrets(self):
            return [SECRET]

    def judge_fn(messages):
        return {"text": '{"score": 3}', "finish_reason": f"stop ({SECRET})",
                "logprobs": [{SECRET.upper(): 1.0, "alternatives": [[f"Bearer {SECRET}", -1.0]]}]}

    judge = Keyed(judge_fn, cache=str(tmp_path / "c.sqlite"))
    [res] = judge.judge([JudgeRequest([{"role": "user", "content": "rate"}], schema=SCORE)])
    assert res.ok and res.value == {"score": 3} and len(judge.cache) == 1
    assert leaked(json.dumps(res.logprobs)) == [] and leaked(stored_bytes(str(tmp_path / "c.sqlite"))) == []


# -- credentials in a judge URL are masked ---------------------------------------------------------
PASSWORD = "hunter2-url-pass"


def write_rows(path, n):
    """``n`` rows for faithfulness; row 1 (from 0) has BAD in it, which the server refuses."""
    rows = [{"prediction": f"{'BAD ' if i == 1 else ''}Paris is in France. It has {i} parks.",
             "contexts": ["Paris is in France."], "query": "Where?"} for i in range(n)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_url_credentials_are_masked_in_cli_output_json_and_html(tmp_path):
    """A judge URL with ``user:password@``: the server answers one row with an error that names the
    URL, the other rows fine; neither the output, the reports, the log nor the cache holds the
    password, and the URL is shown masked. A second run against a closed port fails at once with
    the URL in its one-line error, masked."""
    rows = write_rows(tmp_path / "rows.jsonl", 3)
    out, html_out, cache = tmp_path / "r.json", tmp_path / "r.html", tmp_path / "c.sqlite"

    def fault(body, task):
        bad = "BAD" in body["messages"][1]["content"]
        return ("status", 400, f"upstream {srv.url.replace('://', f'://judge:{PASSWORD}@')} refused") if bad else None

    with ChatServer(schema_answer, fault_fn=fault) as srv:
        url = srv.url.replace("://", f"://judge:{PASSWORD}@")
        proc = subprocess.run(
            [sys.executable, "-m", "textgen_metrics", "score", str(rows), "--metrics", "faithfulness",
             "--judge", "openai:judge-x", "--judge-url", url, "--judge-option", f"cache={cache}",
             "--judge-option", "max_retries=0", "--out", str(out), "--html", str(html_out), "--allow-errors"],
            capture_output=True, text=True, cwd=ROOT, env={**os.environ, "OPENAI_API_KEY": ""})
        assert proc.returncode == 0, proc.stderr
        basic = "Basic " + base64.b64encode(f"judge:{PASSWORD}".encode()).decode()
        assert {h.get("Authorization") for h in srv.headers} == {basic}  # the URL's credentials were sent
    report = json.loads(out.read_text())
    assert report["metrics"]["faithfulness"]["per_example"]["faithfulness"][1] is None
    error = report["metrics"]["faithfulness"]["aggregate"]["errors"][0]["error"]
    assert "://***@127.0.0.1" in error, error  # the URL is named, masked
    for text in (proc.stdout, proc.stderr, out.read_text(), html_out.read_text(), stored_bytes(str(cache))):
        assert PASSWORD not in text and "judge:" + PASSWORD not in text
    assert "***@127.0.0.1" in proc.stderr  # the unscored row's error, as the command line prints it

    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    closed = subprocess.run(
        [sys.executable, "-m", "textgen_metrics", "score", str(rows), "--metrics", "faithfulness",
         "--judge", "openai:judge-x", "--judge-url", f"http://judge:{PASSWORD}@127.0.0.1:{port}/v1",
         "--judge-option", "max_retries=0", "--out", str(out), "--html", str(html_out)],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, "OPENAI_API_KEY": ""})
    assert closed.returncode == 1 and f"http://***@127.0.0.1:{port}/v1" in closed.stderr, closed.stderr
    assert PASSWORD not in closed.stdout + closed.stderr


def test_reports_mask_any_url_credentials_they_quote(tmp_path):
    """The reports mask what reached them by another way than a judge's redactor: here a source
    named by a URL with credentials, in the HTML page and in the JSON the command line writes."""
    from textgen_metrics.cli_args import write
    from textgen_metrics.report import report_html
    from textgen_metrics.scoring import score_records

    source = f"https://reader:{PASSWORD}@data.example/rows.jsonl"
    report = score_records([{"prediction": "a cat", "reference": "a cat"}], ["rouge"], source=source)
    page = report_html(report)
    write(str(tmp_path / "r.json"), json.dumps(report))
    for text in (page, (tmp_path / "r.json").read_text()):
        assert PASSWORD not in text and "https://***@data.example/rows.jsonl" in text


def test_a_judge_names_its_url_masked_and_redacts_the_url_password():
    judge = OpenAIJudge("m", base_url=f"http://judge:{PASSWORD}@127.0.0.1:9/v1", api_key=SECRET)
    said = judge.redact(f"{judge.describe()}; {PASSWORD.upper()}; Authorization: Basic "
                        + base64.b64encode(f"judge:{PASSWORD}".encode()).decode())
    assert PASSWORD.lower() not in said.lower() and "http://***@127.0.0.1:9/v1" in said
    assert "judge:" + PASSWORD not in judge.redact(f"judge:{PASSWORD}")


# -- the key's other spellings -------------------------------------------------------------------
@pytest.mark.parametrize("spelling", range(len(spellings(SECRET))))
def test_every_spelling_of_the_key_is_redacted(spelling):
    text = spellings(SECRET)[spelling]
    for shown in (text, f"error: {text}!", f'{{"echo": "{text}"}}', f"Authorization: {text}"):
        said = Redactor([SECRET])(shown)
        assert leaked(said) == [] and REDACTED in said, (shown, said)


def test_base64_of_the_key_inside_a_longer_text_and_the_bearer_form_of_a_secret():
    key = SECRET.encode()
    windows = {base64.b64encode(key[i:i + 9]).decode() for i in range(len(key) - 8)}  # 12 characters each
    for prefix in (b"", b"x", b"xy"):  # each of the three alignments inside a longer base64 text
        blob = base64.b64encode(prefix + b"user:" + key + b"@tail").decode()
        assert any(w in blob for w in windows)  # the key is readable in the blob...
        said = Redactor([SECRET])(blob)
        assert REDACTED in said and not any(w in said for w in windows), prefix  # ...and not after
    given_with_prefix = Redactor([f"Bearer {SECRET}"])  # a secret given as its header value
    assert leaked(given_with_prefix(f"the key {SECRET} and {SECRET.lower()}")) == []
    assert Redactor([SECRET])("a Basic idea: basic auth") == "a Basic idea: basic auth"  # ordinary words stay


def test_url_credentials_are_masked_whoever_the_judge_is():
    text = "see https://alice:s3cr%40t@proxy.example:8443/v1?x=1 and mailto:bob@example.com, ftp://u@h/"
    assert mask_url_credentials(text) == ("see https://***@proxy.example:8443/v1?x=1 and mailto:bob@example.com, "
                                          "ftp://***@h/")
    assert Redactor()(text) == mask_url_credentials(text)


# -- caches are private ----------------------------------------------------------------------------
@pytest.fixture
def open_umask():
    """The most permissive umask: what the caches create must be private all the same."""
    before = os.umask(0)
    try:
        yield
    finally:
        os.umask(before)


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_caches_are_created_private_whatever_the_umask(tmp_path, open_umask, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("TEXTGEN_METRICS_CACHE_KEY", raising=False)
    sqlite = JudgeCache(default_cache_path())
    sqlite.put("ab" * 32, {"text": "x"})
    assert len(sqlite) == 1
    folder = DirectoryCache(tmp_path / "new" / "shared")
    folder.put("cd" * 32, {"text": "y"})
    files = [sqlite.path, f"{sqlite.path}-wal", f"{sqlite.path}-shm", folder.file("cd" * 32),
             str(tmp_path / "config" / "textgen_metrics" / "cache_key")]
    folders = [tmp_path / "xdg", tmp_path / "xdg" / "textgen_metrics", tmp_path / "new", tmp_path / "new" / "shared",
               os.path.dirname(folder.file("cd" * 32)), os.path.dirname(os.path.dirname(folder.file("cd" * 32))),
               tmp_path / "config" / "textgen_metrics"]
    assert {f: oct(mode(f)) for f in files if os.path.exists(f)} == {f: "0o600" for f in files}
    assert {str(f): oct(mode(f)) for f in folders} == {str(f): "0o700" for f in folders}


def test_the_library_s_own_cache_folder_made_by_an_older_version_is_made_private(tmp_path, monkeypatch):
    """A ``~/.cache/textgen_metrics`` made 0755 before: opening the default cache makes it 0700 (so
    the files an older version left in it, 0644, are no longer reachable by others); a folder
    the user named is left as it is."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    own, chosen = tmp_path / "xdg" / "textgen_metrics", tmp_path / "team"
    for folder in (own, chosen):
        folder.mkdir(parents=True)
        folder.chmod(0o755)
    JudgeCache(default_cache_path()).put("ab" * 32, {"text": "x"})
    JudgeCache(chosen / "c.sqlite").put("ab" * 32, {"text": "x"})
    assert (mode(own), mode(chosen), mode(chosen / "c.sqlite")) == (0o700, 0o755, 0o600)


def test_the_wordnet_copy_and_index_are_private(tmp_path, open_umask, monkeypatch):
    from textgen_metrics import wordnet

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    root = wordnet.wordnet_dir()
    index = wordnet.wordnet_index_path()
    wordnet._load_or_build(index, wordnet._source_dir(wordnet._NEEDED))
    assert root.startswith(str(tmp_path)) and index.startswith(str(tmp_path))  # Debian's folder lacks lexnames
    made = [os.path.join(root, name) for name in os.listdir(root)] + [index]
    assert mode(root) == mode(tmp_path / "xdg" / "textgen_metrics") == 0o700
    assert {f: oct(mode(f)) for f in made} == {f: "0o600" for f in made}


def test_the_tiny_judge_s_assembled_model_is_private(open_umask):
    """``tiny:gemma3``'s GGUF file, assembled into the user's cache folder (or found there, made
    by an older version with the umask's mode): 0600 in a folder of 0700."""
    from textgen_metrics.judges.tiny import tiny_model_file

    path = tiny_model_file("gemma3")
    assert (oct(mode(path)), oct(mode(os.path.dirname(path)))) == ("0o600", "0o700")


def test_wordnet_never_uses_another_user_s_folder_or_index_in_the_temp_folder(tmp_path, monkeypatch):
    """With the cache folder unusable, WordNet's copy and index go to the temp folder, where anyone
    can make a folder or file first: one that is not the user's own is not used (here the user's
    id is made to differ from the planted files' owner)."""
    from textgen_metrics import wordnet

    (tmp_path / "not-a-folder").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "not-a-folder"))  # no cache folder can be made there
    monkeypatch.setattr(wordnet.tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    source = wordnet._source_dir(wordnet._NEEDED)
    planted = tmp_path / "tmp" / ("wordnet-" + source.strip("/").replace("/", "_"))
    planted.mkdir(parents=True)
    (planted / "lexnames").write_text("planted")
    index = tmp_path / "tmp" / "wordnet-index-planted.bin"
    index.write_bytes(b"planted")
    monkeypatch.setattr(wordnet.os, "getuid", lambda: os.stat(planted).st_uid + 1)
    with pytest.raises(wordnet.WordNetMissingError, match="could not assemble"):
        wordnet.wordnet_dir()
    with pytest.raises(OSError, match="belongs to another user"):
        wordnet._load_or_build(str(index), source)
    assert (planted / "lexnames").read_text() == "planted" and index.read_bytes() == b"planted"


# -- a shared cache's entries are checked ----------------------------------------------------------
TOXIC = {"type": "object", "required": ["verdict"], "properties": {"verdict": {"enum": ["yes", "no"]}}}


def test_a_rewritten_shared_cache_entry_is_refused_said_and_asked_again(tmp_path, monkeypatch):
    """Someone with write access to the shared folder turns a toxic verdict ("yes": score 1.0) into
    "no" (0.0), rewrites its hash too, and copies another request's entry onto it: each time the
    entry is refused (counted, warned once), the request asked again, and the judge's own answer
    used and stored back."""
    monkeypatch.setenv("TEXTGEN_METRICS_CACHE_KEY", "the user's own secret")
    folder = tmp_path / "shared"
    request = JudgeRequest([{"role": "user", "content": "is this toxic?"}], schema=TOXIC, task="toxicity/verdict")
    other = JudgeRequest([{"role": "user", "content": "is this other text toxic?"}], schema=TOXIC,
                         task="toxicity/verdict")
    with ChatServer(lambda body: '{"verdict": "yes"}' if "this toxic" in str(body) else '{"verdict": "no"}') as srv:
        judge = OpenAIJudge("m", base_url=srv.url, api_key=SECRET, cache=f"dir:{folder}")
        assert [r.value for r in judge.judge([request, other])] == [{"verdict": "yes"}, {"verdict": "no"}]
        path = judge.cache.file(judge.request_key(request))
        entry = json.loads(open(path, encoding="utf-8").read())
        assert entry["value"]["text"] == '{"verdict": "yes"}' and "hmac" in entry

        def attack(rewrite):
            with open(path, "w", encoding="utf-8") as f:
                f.write(rewrite)
            fresh = OpenAIJudge("m", base_url=srv.url, api_key=SECRET, cache=DirectoryCache(folder))
            before = srv.count
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                [res] = fresh.judge([request])
            return res, srv.count - before, fresh.cache.refused, caught

        import hashlib

        flipped = dict(entry, value=dict(entry["value"], text='{"verdict": "no"}'))
        plain_hash = dict(flipped, hmac=hashlib.sha256(json.dumps(flipped["value"]).encode()).hexdigest())
        copied = open(judge.cache.file(judge.request_key(other)), encoding="utf-8").read()
        unsigned = json.dumps({"text": '{"verdict": "no"}'})  # the format before entries were signed
        for i, rewrite in enumerate([json.dumps(flipped), json.dumps(plain_hash), copied, unsigned]):
            res, sent, refused, caught = attack(rewrite)
            assert (res.value, res.cached, sent, refused) == ({"verdict": "yes"}, 0, 1, 1), i
            assert json.loads(open(path, encoding="utf-8").read())["value"]["text"] == '{"verdict": "yes"}'
        res, sent, refused, _ = attack(open(path, encoding="utf-8").read())  # the entry stored back is trusted
        assert (res.value, res.cached, sent, refused) == ({"verdict": "yes"}, 1, 0, 0)


def test_the_integrity_warning_is_said_once_per_folder(tmp_path):
    cache = DirectoryCache(tmp_path, secret="s1")
    for key in ("ab" * 32, "cd" * 32):
        cache.put(key, {"text": "x"})
    stranger = DirectoryCache(tmp_path, secret="another user's secret")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert stranger.get("ab" * 32) is None and stranger.get("cd" * 32) is None
    assert stranger.refused == 2 and cache.get("ab" * 32) == {"text": "x"}
    assert len([w for w in caught if "integrity check" in str(w.message)]) == 1


def test_a_shared_cache_pickles_with_its_secret(tmp_path, monkeypatch):
    import pickle

    monkeypatch.setenv("TEXTGEN_METRICS_CACHE_KEY", "driver secret")
    cache = DirectoryCache(tmp_path)
    cache.put("ab" * 32, {"text": "x"})
    monkeypatch.setenv("TEXTGEN_METRICS_CACHE_KEY", "a worker without the driver's environment")
    assert pickle.loads(pickle.dumps(cache)).get("ab" * 32) == {"text": "x"}
    with pytest.warns(RuntimeWarning, match="failed its integrity check"):
        assert DirectoryCache(tmp_path).get("ab" * 32) is None
    assert "driver secret" not in repr(cache)


def test_a_judge_printed_by_its_user_masks_the_credentials_of_its_url():
    from textgen_metrics.judges.openai import OpenAIJudge

    judge = OpenAIJudge("m", base_url="http://someone:url-secret-pw@127.0.0.1:9/v1", api_key="sk-anything")
    assert "url-secret-pw" not in repr(judge) and "someone" not in repr(judge)
    assert "127.0.0.1:9/v1" in repr(judge)
