"""Serving the course reader's site on 127.0.0.1 (./lab read), and the
playground's two requests to the learner's model (learner/playground.py).

Everything is for this machine only: the server listens on 127.0.0.1 and
answers only requests whose Host is 127.0.0.1:PORT or localhost:PORT (a page
of another site whose name a DNS server points at 127.0.0.1 gets 421
Misdirected Request, so it can read nothing). The site's files are served
read-only. The model is reached only through

    GET  /api/playground/status?lang=L    where the learner stands (see playground.py)
    POST /api/playground/run              a JSON request: tokens, heads off, sampling

and only with the session's token, a random string made when ./lab read
starts and written into the playground page as it is served (a page of
another origin cannot read it); a request without it, with another, from
another origin (Origin, Sec-Fetch-Site) or not JSON is refused with 403 and
a JSON body that says why. No CORS header is ever sent.
"""
import functools
import hmac
import http.server
import json
import os
import secrets
import socket
import threading
import urllib.parse

from learner.reader_labels import catalogue_of, speaking

API = "/api/playground/"
TOKEN_HEADER = "X-MHA-Token"
# The placeholder of the playground page that the session's token replaces.
TOKEN_SLOT = "@@MHA_SESSION_TOKEN@@"
MAX_BODY = 8192


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def new_token():
    return secrets.token_urlsafe(32)


class Handler(http.server.SimpleHTTPRequestHandler):
    """The site's files, the token in the playground page, the playground's API."""

    def log_message(self, fmt, *args):
        pass

    def our_origins(self):
        port = self.server.server_address[1]
        return {"127.0.0.1:%d" % port, "localhost:%d" % port}

    def host_is_ours(self):
        if self.headers.get("Host", "") in self.our_origins():
            return True
        self.send_error(421, "this server answers only to http://127.0.0.1:%d/"
                        % self.server.server_address[1])
        return False

    # ------------------------------------------------------------ the files
    def do_GET(self):
        if not self.host_is_ours():
            return
        path = urllib.parse.urlsplit(self.path).path
        if path.startswith(API):
            return self.api("GET", path[len(API):])
        if path.endswith("/playground.html"):
            return self.playground_page(path)
        super().do_GET()

    def do_HEAD(self):
        if self.host_is_ours():
            super().do_HEAD()

    def do_POST(self):
        if not self.host_is_ours():
            return
        path = urllib.parse.urlsplit(self.path).path
        if not path.startswith(API):
            return self.send_json(405, {"error": "forbidden", "why": "method"})
        self.api("POST", path[len(API):])

    def do_OPTIONS(self):   # a CORS preflight: never granted
        self.send_json(403, {"error": "forbidden", "why": "origin"})

    def playground_page(self, path):
        file = self.translate_path(path)
        try:
            with open(file, encoding="utf-8") as f:
                page = f.read()
        except OSError:
            return self.send_error(404)
        body = page.replace(TOKEN_SLOT, getattr(self.server, "token", "") or "").encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Referrer-Policy", "no-referrer")
        self.end_headers()
        self.wfile.write(body)

    # -------------------------------------------------------------- the API
    def send_json(self, status, data):
        body = json.dumps(data, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def refusal(self, method):
        """Why a request to the API is refused, or None."""
        origin = self.headers.get("Origin")
        if origin is not None and urllib.parse.urlsplit(origin).netloc not in self.our_origins():
            return "origin"
        if self.headers.get("Sec-Fetch-Site", "same-origin") not in ("same-origin", "none"):
            return "origin"
        token = getattr(self.server, "token", None)
        given = self.headers.get(TOKEN_HEADER, "")
        if not token or not hmac.compare_digest(given.encode(), token.encode()):
            return "token"
        if method == "POST" and \
                self.headers.get("Content-Type", "").split(";")[0].strip() != "application/json":
            return "content-type"
        return None

    def api(self, method, name):
        why = self.refusal(method)
        if why:
            return self.send_json(403, {"error": "forbidden", "why": why})
        playground = getattr(self.server, "playground", None)
        if playground is None:
            return self.send_json(404, {"error": "no_playground"})
        if method == "GET" and name == "status":
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            return self.send_json(200, translated(playground.status(),
                                                  (query.get("lang") or ["en"])[0]))
        if method == "POST" and name == "run":
            try:
                length = int(self.headers.get("Content-Length", "0"))
            except ValueError:
                length = -1
            if not 0 <= length <= MAX_BODY:
                return self.send_json(413, {"error": "bad_request", "detail": "body size"})
            try:
                data = json.loads(self.rfile.read(length).decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                return self.send_json(400, {"error": "bad_request", "detail": "not JSON"})
            return self.send_json(*playground.run(data))
        self.send_json(404, {"error": "bad_request", "detail": "no such request"})


def translated(status, lang):
    """A status for a page in `lang`: a failure ./lab recorded in its words."""
    from learner import playground
    if status.get("state") != "failing" or not status.get("detail"):
        return status
    page = lang if catalogue_of(lang) or lang == "en" else "en"
    with speaking(page):
        return dict(status, detail=playground.failure_text(status["detail"]))


def serve(site, port=0, playground=None, token=None):
    """An HTTP server of `site` on 127.0.0.1:port (0: a free one), started in a
    thread; returns the server (server.server_address[1] is the port).
    playground: a learner.playground.Playground the API reaches, with the
    session's token (one is made when none is given)."""
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", port), functools.partial(Handler, directory=os.path.abspath(site)))
    server.playground = playground
    server.token = token or new_token()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
