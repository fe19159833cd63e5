"""The compiler's warnings about a learner's file, remembered.

Bazel prints a file's warnings only when it compiles it: those seen are kept
in .cache/warnings.json for that content of the file, and a file that Bazel
compiled outside ./lab (your own bazel test) is compiled once more with
Bazel's own command line (bazel aquery) and -fsyntax-only to see them.
"""
import json
import os
import re
import subprocess

from labs import ROOT
from learner import files
from reports import messages


def relevant_warnings(warnings, source_text):
    """The warnings worth a learner's attention: an unused parameter of a
    function that still throws "is not implemented yet" is the stub's, not a
    slip, and is left out."""
    lines = source_text.splitlines()
    out = []
    for w in warnings:
        m = re.match(r"^[^:]+:(\d+): warning: unused parameter", w)
        if m:
            body = []
            for line in lines[int(m.group(1)) - 1:]:
                body.append(line)
                if line.startswith("}"):
                    break
            if files.NOT_IMPLEMENTED in "\n".join(body):
                continue
        out.append(w)
    return out


def digests_of(labs, root=ROOT):
    """{learner file: sha256 of its current content, None if unreadable}."""
    return {lab.learner_file: files.sha256_file(os.path.join(root, lab.learner_file))
            for lab in labs}


def note_warnings(state, output, labs, digests):
    """Updates the warnings cache `state` with what this output shows."""
    own = {lab.learner_file for lab in labs}
    seen = messages.warnings_in(output, own)
    compiled = set(seen)
    for line in output.splitlines():
        for f in own:
            if f in line and ("Compiling " + f) in line:
                compiled.add(f)
    for f in compiled:
        state[f] = {"sha256": digests[f], "warnings": seen.get(f, [])}


def remember_warnings(output, labs, state_path=None, root=ROOT):
    """Keeps the warnings this output shows for each learner file, keyed by the
    file's content; returns {file: [warnings]} for the current contents."""
    state_path = state_path or files.WARNINGS_STATE
    digests = digests_of(labs, root)
    state = files.load_json(state_path)
    note_warnings(state, output, labs, digests)
    files.save_json(state_path, state)
    return known_in(state, labs, digests)


def syntax_only_command(arguments, source):
    """Bazel's compile command for `source` (its argument list, from aquery)
    turned into a check that writes nothing: -fsyntax-only instead of -c, no
    object or dependency file."""
    out, skip = [], False
    for a in arguments:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF"):
            skip = True
            continue
        if a in ("-MD", "-MMD"):
            continue
        out.append("-fsyntax-only" if a == "-c" else a)
    return out if source in out else None


def recheck_warnings(labs, bazel, state_path=None, root=ROOT, state=None,
                     digests=None):
    """Bazel prints a file's warnings only when it compiles it. For the learner
    files of `labs` whose current content has no entry in the warnings cache
    (compiled by your own `bazel test`, say), run the compiler again, exactly as
    Bazel does (bazel aquery) but with -fsyntax-only, and remember what it says.
    Given the cache already read as `state` (and the files' `digests`), it
    updates that dict rather than reading the file again."""
    state_path = state_path or files.WARNINGS_STATE
    if state is None:
        state = files.load_json(state_path)
    if digests is None:
        digests = digests_of(labs, root)
    todo = [lab for lab in labs
            if (state.get(lab.learner_file) or {}).get("sha256") != digests[lab.learner_file]]
    if not todo:
        return
    query = "mnemonic('CppCompile', set(%s))" % " ".join(
        lab.library for lab in todo)
    rc, out = bazel.run(["aquery", "--color=no", "--output=jsonproto", query], stdout_only=True)
    irc, execroot = bazel.run(["info", "execution_root"], stdout_only=True)
    if rc != 0 or irc != 0:
        return
    try:
        actions = json.loads(out).get("actions", [])
    except ValueError:
        return
    execroot = execroot.strip()
    for lab in todo:
        for action in actions:
            cmd = syntax_only_command(action.get("arguments", []), lab.learner_file)
            if not cmd:
                continue
            try:
                p = subprocess.run(cmd, cwd=execroot, stdin=subprocess.DEVNULL,
                                   env=dict(os.environ, LC_ALL="C"),   # Bazel's plain quotes
                                   capture_output=True, text=True, errors="replace", timeout=120)
            except (OSError, subprocess.TimeoutExpired):
                break
            if p.returncode == 0:   # a file that does not compile: Bazel said it all
                state[lab.learner_file] = {
                    "sha256": digests[lab.learner_file],
                    "warnings": messages.warnings_in(p.stderr, {lab.learner_file}).get(
                        lab.learner_file, [])}
            break
    files.save_json(state_path, state)


def known_in(state, labs, digests):
    """{learner file: [warnings]} of the cache `state` for the contents `digests`."""
    out = {}
    for lab in labs:
        entry = state.get(lab.learner_file)
        if isinstance(entry, dict) and entry.get("warnings") and \
                entry.get("sha256") == digests[lab.learner_file]:
            out[lab.learner_file] = list(entry["warnings"])
    return out


def known_warnings(labs, state_path=None, root=ROOT):
    """{learner file: [warnings]} remembered for the files' current contents."""
    state = files.load_json(state_path or files.WARNINGS_STATE)
    return known_in(state, labs, digests_of(labs, root))

