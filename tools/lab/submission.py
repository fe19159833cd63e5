"""Reading a submission directory (or a roster of them), taking only learner files.

A submission is the seven learner files named in API.md, any subset of them.
Each may sit at its repository path (labs/01_split_heads/split_heads.cc),
in its lab directory (01_split_heads/split_heads.cc), at the top
(split_heads.cc, as Gradescope uploads put them) or deeper in a folder. Only regular files up to
MAX_BYTES are taken; everything else (BUILD files, headers, tests, other
files, symlinks, oversized files, a second copy of a learner file) is
ignored and listed in the report. Nothing in a submission is ever executed,
included or read as configuration.
"""
import os
import stat

MAX_BYTES = 256 << 10
MAX_ENTRIES = 10000
MAX_LISTED = 100


def _match(rel, by_name):
    """(lab, preference) when `rel` may be a learner file, else None.

    Any file named like a learner file counts, at any depth (an uploaded
    folder of a folder); when there are several, the one under
    labs/NN_name/ wins, then one under NN_name/, then the shallowest.
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
        return {}, [], ["%s is not a directory: graded as an empty submission" % path]
    seen = 0
    for dirpath, dirnames, filenames in os.walk(path, followlinks=False):
        dirnames.sort()
        for d in list(dirnames):
            full = os.path.join(dirpath, d)
            if os.path.islink(full):
                ignored.append(os.path.relpath(full, path) + " (symlink)")
                dirnames.remove(d)
        for fn in sorted(filenames):
            seen += 1
            if seen > MAX_ENTRIES:
                notes.append("more than %d files: the rest were not looked at" % MAX_ENTRIES)
                dirnames[:] = []
                break
            full = os.path.join(dirpath, fn)
            rel = os.path.relpath(full, path).replace(os.sep, "/")
            st = os.lstat(full)
            m = _match(rel, by_name)
            if m is None:
                ignored.append(rel + (" (symlink)" if stat.S_ISLNK(st.st_mode) else ""))
                continue
            lab, prio = m
            if stat.S_ISLNK(st.st_mode):
                ignored.append(rel + " (symlink)")
            elif not stat.S_ISREG(st.st_mode):
                ignored.append(rel + " (not a regular file)")
            elif st.st_size > MAX_BYTES:
                ignored.append(rel + " (larger than %d KiB)" % (MAX_BYTES >> 10))
            else:
                chosen.setdefault(lab.number, []).append((prio, rel, full))
    for number, options in chosen.items():
        options.sort()
        _, rel, full = options[0]
        with open(full, "rb") as f:
            files[number] = f.read(MAX_BYTES + 1)[:MAX_BYTES]
        for _, other, _ in options[1:]:
            ignored.append("%s (a second copy; %s was used)" % (other, rel))
    ignored.sort()
    if len(ignored) > MAX_LISTED:
        ignored = ignored[:MAX_LISTED] + ["... and %d more" % (len(ignored) - MAX_LISTED)]
    return files, ignored, notes


def roster(path):
    """(sorted [(name, directory)], ignored [str]) for a directory of submissions."""
    subs, ignored = [], []
    for name in sorted(os.listdir(path)):
        full = os.path.join(path, name)
        if os.path.islink(full):
            ignored.append(name + " (symlink)")
        elif os.path.isdir(full):
            subs.append((name, full))
        else:
            ignored.append(name + " (not a directory)")
    return subs, ignored
