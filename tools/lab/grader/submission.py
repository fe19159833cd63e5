"""Reading a submission directory, taking only learner files (a roster of them: roster.py).

A submission is the learner files named in the registry (labs/labs.json),
any subset of them. Each may sit at its repository path
(labs/01_split_heads/split_heads.cc), in its lab directory
(01_split_heads/split_heads.cc), at the top (split_heads.cc, as Gradescope
uploads put them) or deeper in a folder. Only regular files up to
limits.SOURCE_BYTES are taken; everything else (BUILD files, headers, tests,
other files, symlinks, oversized files, a second copy of a learner file) is
ignored and listed in the report. Nothing in a submission is ever executed,
included or read as configuration.

The walk is iterative and bounded (limits.SUBMISSION_ENTRIES entries,
limits.SUBMISSION_DEPTH levels), never follows links, and survives names
that are not valid UTF-8 or hold control characters (they are shown
escaped).
"""
import os
import stat

import limits
from grader import grade
from reports import messages


def _shown(rel):
    return messages.printable(os.fsdecode(rel) if isinstance(rel, bytes) else rel, 200)


def _match(rel, by_name):
    """(lab, preference) when `rel` may be a learner file, else None.

    When there are several, the one under labs/NN_name/ wins, then one under
    NN_name/, then the shallowest.
    """
    name = rel.rsplit("/", 1)[-1]
    lab = by_name.get(name)
    if lab is None:
        return None
    if rel == lab.learner_file or rel.endswith("/" + lab.learner_file):
        prio = 0
    elif rel.endswith("%s/%s" % (lab.dir, name)):
        prio = 1
    else:
        prio = 2
    return lab, (prio, rel.count("/"), rel)


def collect(path, labs):
    """Returns (files {lab number: bytes}, ignored [str], notes [str])."""
    files, ignored, notes = {}, [], []
    by_name = {lab.target + ".cc": lab for lab in labs}
    chosen = {}
    if not os.path.isdir(path):
        return {}, [], ["%s is not a directory: graded as an empty submission" % _shown(path)]
    seen = 0
    stack = [("", 0)]
    while stack:
        rel_dir, depth = stack.pop()
        full_dir = os.path.join(path, rel_dir) if rel_dir else path
        try:
            entries = sorted(os.listdir(full_dir))
        except OSError as e:
            notes.append("could not read %s (%s)" % (_shown(rel_dir or "."), e.strerror))
            continue
        subdirs = []
        for fn in entries:
            seen += 1
            if seen > limits.SUBMISSION_ENTRIES:
                notes.append("more than %d files and folders: the rest were not looked at"
                             % limits.SUBMISSION_ENTRIES)
                stack = []
                break
            rel = fn if not rel_dir else rel_dir + "/" + fn
            full = os.path.join(full_dir, fn)
            try:
                st = os.lstat(full)
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode):
                ignored.append(_shown(rel) + " (symlink)")
                continue
            if stat.S_ISDIR(st.st_mode):
                if depth + 1 > limits.SUBMISSION_DEPTH:
                    notes.append("folders deeper than %d levels were not looked at"
                                 % limits.SUBMISSION_DEPTH)
                else:
                    subdirs.append((rel, depth + 1))
                continue
            m = _match(rel, by_name)
            if m is None:
                ignored.append(_shown(rel))
                continue
            lab, prio = m
            if not stat.S_ISREG(st.st_mode):
                ignored.append(_shown(rel) + " (not a regular file)")
            elif st.st_size > limits.SOURCE_BYTES:
                ignored.append(_shown(rel) + " (larger than %d KiB)" % (limits.SOURCE_BYTES >> 10))
            else:
                chosen.setdefault(lab.number, []).append((prio, rel, full))
        stack.extend(reversed(subdirs))
    for number, options in chosen.items():
        options.sort()
        _, rel, full = options[0]
        try:
            fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as f:
                files[number] = f.read(limits.SOURCE_BYTES + 1)[:limits.SOURCE_BYTES]
        except OSError as e:
            notes.append("could not read %s (%s)" % (_shown(rel), e.strerror))
            continue
        for _, other, _ in options[1:]:
            ignored.append("%s (a second copy; %s was used)" % (_shown(other), _shown(rel)))
    notes = sorted(set(notes))
    ignored.sort()
    if len(ignored) > limits.LISTED_IGNORED:
        ignored = ignored[:limits.LISTED_IGNORED] + [
            "... and %d more" % (len(ignored) - limits.LISTED_IGNORED)]
    return files, ignored, notes


def of_roster(entries, labs):
    """[grade.Submission] of a roster's entries (roster.read), each labelled
    and identified as its entry, its files read now."""
    subs = []
    for e in entries:
        files, ignored, notes = collect(e.path, labs)
        subs.append(grade.Submission(e.label, files, ignored, notes, ident=e.id))
    return subs
