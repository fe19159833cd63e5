"""Serving the course reader's site on 127.0.0.1 (./lab read).

The files of the site, read-only, to this machine only: the server listens on
127.0.0.1 and answers only requests whose Host is 127.0.0.1:PORT or
localhost:PORT (a page of another site whose name a DNS server points at
127.0.0.1 gets 421 Misdirected Request, so it cannot read the pages).
"""
import functools
import http.server
import socket
import threading


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Handler(http.server.SimpleHTTPRequestHandler):
    """The site's files; nothing else."""

    def log_message(self, fmt, *args):
        pass

    def our_hosts(self):
        port = self.server.server_address[1]
        return {"127.0.0.1:%d" % port, "localhost:%d" % port}

    def host_is_ours(self):
        if self.headers.get("Host", "") in self.our_hosts():
            return True
        self.send_error(421, "this server answers only to http://127.0.0.1:%d/"
                        % self.server.server_address[1])
        return False

    def do_GET(self):
        if self.host_is_ours():
            super().do_GET()

    def do_HEAD(self):
        if self.host_is_ours():
            super().do_HEAD()


def serve(site, port=0, handler=Handler, **attributes):
    """An HTTP server of `site` on 127.0.0.1:port (0: a free one), started in a
    thread; returns the server (server.server_address[1] is the port).
    attributes: set on the server, for the handler (self.server.NAME)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port),
                                             functools.partial(handler, directory=site))
    for k, v in attributes.items():
        setattr(server, k, v)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
