"""A roster: a directory of submission folders, one learner each, told apart
by each folder's exact name.

    entries, ignored = roster.read(DIR)      # [Entry], sorted; [str] not graded
    entry.id       the folder's exact name, as os.listdir gives it (a byte that
                   is not UTF-8 as a lone surrogate, so every byte counts):
                   unique in DIR, and the key of every table, folder, Slurm
                   task, report and merge
    entry.label    the name as printed (gradebook, scoreboard, class report):
                   printable, distinct, and never another entry's name; where
                   two folders would print alike, each label says so and shows
                   its exact name ('alice [2 folders print alike; this one is
                   "alice\\x20"]')
    entry.folder   its output folder (folder_names)
    entry.path     its directory

An identity crosses files (a Slurm plan, a block of an array task) as
hex_id(id), and a report names it as shown_id(id), an escape of its bytes
that no two names share. A roster whose entries could not be told apart
(two identities, labels or folders alike, which the construction rules out)
is refused with RosterError, naming them, before anything is graded.
"""
import hashlib
import os
import re

from reports import messages

# A printed name is cut here (a folder name may be 255 bytes of anything).
LABEL_CHARS = 120


class RosterError(RuntimeError):
    """Two entries of a roster cannot be told apart; nothing is graded."""


class Entry:
    def __init__(self, ident, label, folder, path):
        self.id = ident
        self.label = label
        self.folder = folder
        self.path = path

    @property
    def shown_id(self):
        return shown_id(self.id)

    @property
    def hex_id(self):
        return hex_id(self.id)


def shown_id(ident):
    """The folder's exact name, escaped so that no two names give the same
    text: printable ASCII stays (a space too, but not first or last), every
    other byte, a backslash and a double quote become \\xNN."""
    raw = os.fsencode(ident)
    out = []
    for i, b in enumerate(raw):
        edge = i == 0 or i == len(raw) - 1
        if 0x21 <= b <= 0x7e and b not in (0x22, 0x5c) or (b == 0x20 and not edge):
            out.append(chr(b))
        else:
            out.append("\\x%02x" % b)
    return "".join(out)


def hex_id(ident):
    """The identity as hexadecimal bytes, for JSON files (a Slurm plan)."""
    return os.fsencode(ident).hex()


def from_hex(text):
    """The identity that hex_id() wrote."""
    return os.fsdecode(bytes.fromhex(text))


def plain_label(ident):
    return messages.printable(ident, LABEL_CHARS) or "(no printable name)"


def labels(idents):
    """{identity: label}: each identity's printable name; where several print
    alike (or a name prints as another's label), each of them says so and
    shows its exact name. Distinct by construction: the escaped name in a
    label can be read back from its end (it holds no double quote)."""
    plain = {i: plain_label(i) for i in idents}
    alike = {}
    for i in idents:
        alike[plain[i]] = alike.get(plain[i], 0) + 1

    def decorated(i):
        if alike[plain[i]] > 1:
            return '%s [%d folders print alike; this one is "%s"]' % (
                plain[i], alike[plain[i]], shown_id(i))
        return '%s [its folder is "%s"]' % (plain[i], shown_id(i))
    marked = set()
    while True:
        out = {i: decorated(i) if i in marked else plain[i] for i in idents}
        groups = {}
        for i, label in out.items():
            groups.setdefault(label, []).append(i)
        clash = {i for group in groups.values() if len(group) > 1 for i in group}
        if not clash:
            return out
        if clash <= marked:
            _refuse("print alike", [g for g in groups.values() if len(g) > 1])
        marked |= clash


def _safe_name(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name) or "_"


def folder_names(idents):
    """{identity: its output folder}, one distinct folder each: a name made only
    of letters, digits, '.', '_' and '-' keeps it; another gets the start of
    the hash of its exact bytes ("bob smith" -> "bob_smith-3f2a9c1e"), so it
    never takes another's folder ("bob_smith"); what still collides (case-only
    twins, a name chosen to match a hash) is numbered, in sorted order."""
    out, taken = {}, set()
    for ident in sorted(idents):
        base = _safe_name(ident)
        if base in (".", ".."):
            base = "_" + base
        if base != ident:
            base += "-" + hashlib.sha256(os.fsencode(ident)).hexdigest()[:8]
        folder, n = base, 1
        while folder.lower() in taken:
            n += 1
            folder = "%s-%d" % (base, n)
        taken.add(folder.lower())
        out[ident] = folder
    return out


def _refuse(what, groups):
    raise RosterError(
        "the roster has entries that cannot be told apart (they %s): %s; rename them so that "
        "each learner's folder has a name of its own, then grade again" % (
            what, "; ".join(" and ".join('"%s"' % shown_id(i) for i in sorted(g))
                            for g in groups)))


def entries(directory, idents):
    """[Entry] of `idents` (folder names of `directory`), labelled and given
    folders over exactly that set, sorted. Refuses (RosterError) a set whose
    entries cannot be told apart."""
    idents = sorted(idents)
    by_bytes = {}
    for i in idents:
        by_bytes.setdefault(os.fsencode(i), []).append(i)
    twins = [g for g in by_bytes.values() if len(g) > 1]
    if twins:
        _refuse("are one name", twins)
    names = labels(idents)
    folders = folder_names(idents)
    by_folder = {}
    for i in idents:
        by_folder.setdefault(folders[i].lower(), []).append(i)
    if any(len(g) > 1 for g in by_folder.values()):
        _refuse("share an output folder", [g for g in by_folder.values() if len(g) > 1])
    return [Entry(i, names[i], folders[i], os.path.join(directory, i)) for i in idents]


def read(directory):
    """(entries, ignored) of a roster directory: every folder in it is a
    submission (symbolic links and files are listed as ignored)."""
    found, ignored = [], []
    for name in sorted(os.listdir(directory)):
        full = os.path.join(directory, name)
        if os.path.islink(full):
            ignored.append(plain_label(name) + " (symlink)")
        elif os.path.isdir(full):
            found.append(name)
        else:
            ignored.append(plain_label(name) + " (not a directory)")
    return entries(directory, found), ignored
