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
import unicodedata

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


# Letters of other scripts (and Latin ones) that a screen shows as the Latin
# letter beside them, after case folding: "Bоb" with a Cyrillic o, "aIice"
# with a capital I. Not Unicode's whole table of confusables: the ones a
# classmate's name is likely to be forged with.
_LOOKALIKE = str.maketrans(
    "\u0430\u0432\u0435\u043d\u043a\u043c\u043e\u0440\u0441\u0442\u0443\u0445"
    "\u0456\u0458\u0455\u0501\u04bb\u051b\u051d\u04cf\u0261\u0131"
    "\u03b1\u03b2\u03b5\u03b9\u03ba\u03bd\u03bf\u03c1\u03c4\u03c5\u03c7\u03b3\u03b6"
    "i1|0",
    "abehkmopctyx" "ijsdhqwlgi" "abeikvoptuxyz" "lllo")


def look(label):
    """What `label` looks like on a screen, as a key: two names that a reader
    could take for one another have one look (invisible characters, accents,
    case, width and the lookalike letters above set aside)."""
    text = unicodedata.normalize("NFKD", label)
    text = "".join(c for c in text if unicodedata.category(c) not in ("Mn", "Me", "Cf"))
    text = text.casefold().translate(_LOOKALIKE)
    return re.sub(r"\s+", " ", text.replace("rn", "m").replace("vv", "w")).strip()


def labels(idents):
    """{identity: label}: each identity's printable name; where several look
    alike (look(): "alice" and "alice ", "bob" and "Bоb" with a Cyrillic o),
    or a name prints as another's label, each of them says so and shows its
    exact name. Distinct by construction: the escaped name in a label can be
    read back from its end (it holds no double quote)."""
    plain = {i: plain_label(i) for i in idents}
    looks = {}
    for i in idents:
        looks.setdefault(look(plain[i]), []).append(i)
    alike = {i: len(looks[look(plain[i])]) for i in idents}

    def decorated(i):
        if alike[i] > 1:
            return '%s [%d folders print alike; this one is "%s"]' % (
                plain[i], alike[i], shown_id(i))
        return '%s [its folder is "%s"]' % (plain[i], shown_id(i))
    # A name that ends as a decorated label does ("... this one is \"x\"]") is
    # decorated too: it shows its own exact name, whatever it claims.
    marked = {i for i in idents if alike[i] > 1 or plain[i].endswith("]")}
    while True:
        # A label that looks like another (a name forged to look like a
        # classmate's decorated label) is decorated in its turn.
        out = {i: decorated(i) if i in marked else plain[i] for i in idents}
        groups = {}
        for i, label in out.items():
            groups.setdefault(look(label), []).append(i)
        clash = {i for group in groups.values() if len(group) > 1 for i in group} - marked
        if not clash:
            same = {}
            for i, label in out.items():
                same.setdefault(label, []).append(i)
            if any(len(g) > 1 for g in same.values()):
                _refuse("print alike", [g for g in same.values() if len(g) > 1])
            return out
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
