"""Unit tests of the reader's playground: the checks of a request
(learner/playground.py), the model process and its states, and ./lab read's
server in front of it (learner/reader_server.py): the session's token, the
origin, the host. The program is a stand-in that speaks the protocol
(fake_playground.py); lab 15's own program is tested by its cc_test and by
./lab test's browser check.

Run: /usr/bin/python3 -m pytest tools/lab/tests/test_playground.py
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request

import pytest

from learner import playground, reader_server
from learner.playground import RequestError, parse_request

FAKE = [sys.executable, os.path.join(os.path.dirname(__file__), "fake_playground.py")]
VOCAB = __import__("fake_playground").VOCAB
INFO = {"vocab": VOCAB, "config": {"max_len": 32, "n_layers": 2, "n_heads": 4}}


# --------------------------------------------------------------------------- requests

def test_a_prompt_becomes_one_request_line_starting_at_bos():
    line = parse_request({"tokens": "I walk , you walk , he walk", "off": [[1, 2]],
                          "mode": "sample", "temperature": 0.8, "top_k": 5, "seed": 7,
                          "max_new": 10}, INFO)
    assert line == ("run\ttokens=<bos> I walk , you walk , he walk\toff=1.2\tmode=sample\t"
                    "temperature=0.8\ttop_k=5\tseed=7\tmax_new=10")


@pytest.mark.parametrize("data, error, fields", [
    ({"tokens": "he walks"}, "unknown_token", {"token": "walks", "position": 2,
                                               "suggestion": "walk s"}),
    ({"tokens": "I walk,"}, "unknown_token", {"token": "walk,", "suggestion": "walk ,"}),
    ({"tokens": "he <script>"}, "unknown_token", {"token": "<script>", "suggestion": None}),
    ({"tokens": "  "}, "empty", {}),
    ({"tokens": "<bos>"}, "empty", {}),
    ({"tokens": " ".join(["walk"] * 32)}, "too_long", {"length": 33, "max": 32}),
    ({"tokens": "he", "off": [[2, 0]]}, "bad_head", {"blocks": 2, "heads": 4}),
    ({"tokens": "he", "off": [[0, True]]}, "bad_head", {}),
    ({"tokens": "he", "off": "1.2"}, "bad_head", {}),
    ({"tokens": "he", "temperature": 0}, "bad_value", {"field": "temperature"}),
    ({"tokens": "he", "top_k": 65}, "bad_value", {"field": "top_k", "high": 64}),
    ({"tokens": "he", "seed": -1}, "bad_value", {"field": "seed"}),
    ({"tokens": "he", "max_new": True}, "bad_value", {"field": "max_new"}),
    ({"tokens": "he", "max_new": 2.5}, "bad_value", {"field": "max_new"}),
    ({"tokens": "he", "mode": "beam"}, "bad_request", {}),
    ({"tokens": "he", "cmd": "rm"}, "bad_request", {"detail": "unknown field cmd"}),
    ({"tokens": ["he", 3]}, "bad_request", {}),
    ([], "bad_request", {}),
])
def test_a_malformed_request_is_named_with_what_is_wrong(data, error, fields):
    with pytest.raises(RequestError) as e:
        parse_request(data, INFO)
    assert e.value.answer["error"] == error
    for k, v in fields.items():
        assert e.value.answer[k] == v


def test_no_field_can_smuggle_a_separator_into_the_request_line():
    with pytest.raises(RequestError):
        parse_request({"tokens": ["he\twalk"]}, INFO)      # not one of the 64
    line = parse_request({"tokens": "he\twalk\nI"}, INFO)  # whitespace separates tokens
    assert line.count("\t") == 7 and "\n" not in line and "tokens=<bos> he walk I\t" in line


# --------------------------------------------------------------------------- the process

@pytest.fixture
def checkpoint(tmp_path):
    path = tmp_path / "checkpoint.npz"
    path.write_text("ok")
    return path


def ready(model, seconds=20):
    deadline = time.time() + seconds
    while time.time() < deadline:
        s = model.status()
        if s["state"] not in ("idle", "starting", "building"):
            return s
        time.sleep(0.05)
    raise AssertionError("the model did not start: %s" % model.status())


def test_the_model_answers_and_a_head_switched_off_changes_it(checkpoint):
    model = playground.Playground(command=FAKE, checkpoint=str(checkpoint))
    try:
        s = ready(model)
        assert s["state"] == "ready" and s["vocab"] == VOCAB and s["examples"]
        status, a = model.run({"tokens": "I walk , you walk , he walk", "seed": 3})
        assert status == 200 and a["tokens"][0] == "<bos>" and a["seed"] == 3
        s_id = VOCAB.index("s")
        status, b = model.run({"tokens": "I walk , you walk , he walk", "off": [[1, 2]]})
        assert status == 200 and b["last"][s_id] < a["last"][s_id]
        status, e = model.run({"tokens": "he walks"})
        assert status == 400 and e["error"] == "unknown_token"
    finally:
        model.stop()


def test_without_a_checkpoint_the_page_is_told_what_to_run(tmp_path):
    model = playground.Playground(command=FAKE, checkpoint=str(tmp_path / "none.npz"))
    s = ready(model)
    assert s["state"] == "no_checkpoint" and s["command"] == playground.TRAIN
    assert model.run({"tokens": "he"}) == (409, {"error": "not_ready", "state": "no_checkpoint"})


def test_a_checkpoint_the_program_refuses_is_named_and_a_new_one_is_loaded(checkpoint):
    checkpoint.write_text("vocab 50")
    model = playground.Playground(command=FAKE, checkpoint=str(checkpoint))
    try:
        s = ready(model)
        assert s["state"] == "bad_checkpoint" and "vocab 50" in s["detail"]
        time.sleep(0.01)
        checkpoint.write_text("ok")
        os.utime(checkpoint, (time.time() + 5, time.time() + 5))
        assert model.status()["state"] == "ready"
    finally:
        model.stop()


def test_a_crashed_program_is_reported_and_started_again(checkpoint):
    model = playground.Playground(command=FAKE + ["--crash-on", "ella"],
                                  checkpoint=str(checkpoint))
    try:
        ready(model)
        status, a = model.run({"tokens": "ella"})
        assert status == 500 and a["error"] == "crashed"
        assert model.status()["state"] == "ready"
        assert model.run({"tokens": "he"})[0] == 200
    finally:
        model.stop()


# --------------------------------------------------------------------------- the server

@pytest.fixture
def served(tmp_path, checkpoint):
    site = tmp_path / "site"
    (site / "en").mkdir(parents=True)
    (site / "en" / "playground.html").write_text(
        '<meta name="mha-session" content="%s">' % reader_server.TOKEN_SLOT)
    (site / "en" / "index.html").write_text("hello")
    model = playground.Playground(command=FAKE, checkpoint=str(checkpoint))
    server = reader_server.serve(str(site), playground=model, token="s3cret-token")
    yield "http://127.0.0.1:%d/" % server.server_address[1], server
    server.shutdown()
    server.server_close()
    model.stop()


def fetch(url, body=None, headers=None, method=None):
    req = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode(),
                                 headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


TOKEN = {"X-MHA-Token": "s3cret-token"}
JSON = {"Content-Type": "application/json"}


def test_the_playground_page_is_served_with_the_sessions_token(served):
    base, _ = served
    status, page = fetch(base + "en/playground.html")
    assert status == 200 and 'content="s3cret-token"' in page
    assert reader_server.TOKEN_SLOT not in page


def test_a_request_without_the_token_or_with_another_is_refused(served):
    base, _ = served
    for headers in ({}, {"X-MHA-Token": "guess"}, {"X-MHA-Token": ""}):
        status, body = fetch(base + "api/playground/status", headers=headers)
        assert status == 403 and json.loads(body) == {"error": "forbidden", "why": "token"}
        status, body = fetch(base + "api/playground/run", {"tokens": "he"},
                             dict(headers, **JSON))
        assert status == 403 and json.loads(body)["why"] == "token"


def test_a_request_from_another_origin_is_refused_even_with_the_token(served):
    base, _ = served
    for extra in ({"Origin": "http://evil.example"}, {"Origin": "null"},
                  {"Sec-Fetch-Site": "cross-site"}):
        status, body = fetch(base + "api/playground/run", {"tokens": "he"},
                             dict(TOKEN, **JSON, **extra))
        assert status == 403 and json.loads(body)["why"] == "origin"
    status, _ = fetch(base + "api/playground/run", method="OPTIONS")
    assert status == 403


def test_a_page_reached_by_another_host_name_gets_nothing(served):
    base, _ = served
    for path in ("en/index.html", "en/playground.html", "api/playground/status"):
        status, _ = fetch(base + path, headers=dict(TOKEN, Host="attacker.example:80"))
        assert status == 421, path


def test_a_run_must_be_json(served):
    base, _ = served
    req = urllib.request.Request(base + "api/playground/run", data=b"tokens=he",
                                 headers=dict(TOKEN, **{"Content-Type": "text/plain"}))
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=10)
    assert e.value.code == 403


def test_with_the_token_the_page_reaches_the_model(served):
    base, _ = served
    deadline = time.time() + 20
    while True:
        status, body = fetch(base + "api/playground/status?lang=es", headers=TOKEN)
        if json.loads(body)["state"] == "ready" or time.time() > deadline:
            break
        time.sleep(0.1)
    assert status == 200 and json.loads(body)["state"] == "ready"
    status, body = fetch(base + "api/playground/run", {"tokens": "I walk , you walk , he walk",
                                                       "off": [[1, 2]]}, dict(TOKEN, **JSON))
    assert status == 200 and json.loads(body)["tokens"][-1] == "walk"
    status, body = fetch(base + "api/playground/run", {"tokens": "he walks"}, dict(TOKEN, **JSON))
    assert status == 400 and json.loads(body)["suggestion"] == "walk s"


def test_a_failing_lab_is_told_in_the_pages_language():
    status = {"state": "failing", "command": "./lab watch 15",
              "detail": "T.X: lab 15: gpt_loss_and_grads is not implemented yet, see "
                        "docs/15_mini_gpt.md"}
    es = reader_server.translated(status, "es")
    assert "todavía no está implementada" in es["detail"]
    assert reader_server.translated(status, "xx")["detail"] == status["detail"]


def test_before_building_the_page_is_told_where_the_learner_stands(tmp_path, monkeypatch):
    from labs import Lab
    lab = Lab({"number": 15, "dir": "15_mini_gpt", "target": "mini_gpt", "title": "Mini-GPT"})
    monkeypatch.setattr(playground, "lab_of", lambda root: lab)
    built = []
    monkeypatch.setattr(playground.Playground, "_build", lambda self, l: built.append(l) or
                        {"state": "build_failed", "detail": "x.cc:1: error", "command": "w"})
    monkeypatch.setattr(playground.files, "is_started", lambda l: False)
    model = playground.Playground(root=str(tmp_path))
    s = ready(model)
    assert s == {"state": "not_started", "file": lab.learner_file, "command": "./lab watch 15"}
    monkeypatch.setattr(playground.files, "is_started", lambda l: True)
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "last_run.json").write_text(json.dumps(
        {"labs": {"15": {"state": "failing", "detail": "T.X: looks like y"}}}))
    s = ready(playground.Playground(root=str(tmp_path)))
    assert s["state"] == "failing" and s["detail"] == "T.X: looks like y" and not built
    (tmp_path / ".cache" / "last_run.json").write_text("{}")
    s = ready(playground.Playground(root=str(tmp_path)))
    assert s["state"] == "build_failed" and built == [lab]
    monkeypatch.setattr(playground, "lab_of", lambda root: None)
    assert ready(playground.Playground(root=str(tmp_path)))["state"] == "no_lab"
