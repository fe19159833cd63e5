"""The grader's side of the authenticated result channel (see common/grading.h).

A fresh 32-byte secret goes to each test process on a pipe it reads before
any code under test runs. Every line the harness sends back ends with
HMAC-SHA256(secret, rest of the line); lines are numbered from 0. A line
whose tag does not verify, or whose number was already used, is not the
harness's: it is counted (tamper evidence) and otherwise ignored.
"""
import hashlib
import hmac
import os

SECRET_BYTES = 32
MAX_LINE = 64 << 20


def new_secret():
    return os.urandom(SECRET_BYTES)


def _unescape(b):
    s = b.decode("utf-8", errors="replace")
    if "\\" not in s:
        return s
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            out.append({"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}.get(s[i + 1], s[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


class Event:
    __slots__ = ("kind", "seq", "fields")

    def __init__(self, kind, seq, fields):
        self.kind, self.seq, self.fields = kind, seq, fields

    def __repr__(self):
        return "Event(%s, %d, %r)" % (self.kind, self.seq, [f[:60] for f in self.fields])


class Channel:
    """Verifies lines as they arrive. `events` holds the authentic ones in order."""

    def __init__(self, secret):
        self.secret = secret
        self.next_seq = 0
        self.buf = b""
        self.events = []
        self.rejected = 0    # lines that failed authentication
        self.lost = 0        # authentic line numbers skipped (a line was destroyed)
        self.overflow = False

    def feed(self, data):
        self.buf += data
        while True:
            i = self.buf.find(b"\n")
            if i < 0:
                if len(self.buf) > MAX_LINE:
                    self.overflow = True
                    self.buf = b""
                return
            line, self.buf = self.buf[:i], self.buf[i + 1:]
            self._line(line)

    def close(self):
        if self.buf:
            self.rejected += 1  # an unterminated line is never the harness's
            self.buf = b""

    def _line(self, line):
        parts = line.split(b"\t")
        if len(parts) < 3:
            self.rejected += 1
            return
        body = line[:len(line) - len(parts[-1]) - 1]
        want = hmac.new(self.secret, body, hashlib.sha256).hexdigest().encode()
        if not hmac.compare_digest(want, parts[-1]):
            self.rejected += 1
            return
        try:
            seq = int(parts[1])
        except ValueError:
            self.rejected += 1
            return
        if seq < self.next_seq:
            self.rejected += 1   # a replayed line
            return
        self.lost += seq - self.next_seq
        self.next_seq = seq + 1
        self.events.append(Event(_unescape(parts[0]), seq, [_unescape(p) for p in parts[2:-1]]))
