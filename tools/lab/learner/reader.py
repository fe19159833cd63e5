"""./lab read: the course as a site in out/site/, served on 127.0.0.1.

One concern per module:
    reader.py          the command: build the site, serve it until Ctrl-C
    reader_site.py     building the site: every page in every language (jinja2 templates,
                       tools/reader/templates/), the search index, the assets
    reader_lessons.py  a lesson's Markdown as HTML (python3-markdown, python3-pygments)
    reader_panels.py   what sits beside a lesson: the last run, pictures, the quiz, the heads
    reader_labels.py   every word of the chrome through ./lab's catalogue; the languages
    reader_server.py   the HTTP server, on 127.0.0.1 only, and the playground's requests
    playground.py      the playground's model process (lab 15's playground program)
The page's script and style are tools/reader/ (reader.js, heads.js, reader.css).
"""
import os
import signal
import threading

from labs import ROOT
from learner.console import FAILED, OK, USAGE, err
from learner.i18n import _
from learner.reader_lessons import MissingLibrary
from learner import playground, reader_server, reader_site


def cmd_read(args):
    site = os.path.join(ROOT, "out", "site")
    if args.port is not None and not 0 < args.port < 65536:
        err(_("lab read: --port %d is not a port (1 to 65535)") % args.port)
        return USAGE
    try:
        pages, drawn = reader_site.build(site)
    except MissingLibrary as e:
        err(_("lab read: %s") % e)
        return FAILED
    print(_("built %(pages)d pages into %(site)s") % {
        "pages": pages, "site": os.path.relpath(site, os.getcwd())}, flush=True)
    if not drawn:
        err(_("lab read: the formulas are shown as TeX: KaTeX is missing (Debian's libjs-katex; "
              "run tools/setup.sh)"))
    if args.build_only:
        return OK
    # Lab 15's model for the playground page: checked, built and started in
    # the background when the page first asks for it.
    model = playground.Playground(solutions=getattr(args, "solutions", False))
    try:
        server = reader_server.serve(site, args.port or 0, playground=model)
    except OSError as e:
        model.stop()
        err(_("lab read: cannot serve on 127.0.0.1:%(port)s: %(why)s (choose another with "
              "--port N)") % {"port": args.port, "why": e.strerror or e})
        return FAILED
    print(_("reading at http://127.0.0.1:%d/  (Ctrl-C stops)") % server.server_address[1],
          flush=True)
    # Ctrl-C stops it even where the shell started it with SIGINT ignored (in
    # the background), and so does SIGTERM.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        print()
    finally:
        server.shutdown()
        model.stop()
    return OK
