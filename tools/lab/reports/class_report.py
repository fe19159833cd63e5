"""The class picture of a graded roster: what the class got wrong, which
submissions are unusually similar, and a static HTML report to look at.

    summary = summarise(reports, labs)                  # per lab: mistakes, tests, hardest
    sim = similarity(submissions, labs, settings)       # pairs of similar learner files
    section = {"labs": summary, "similarity": sim}      # the roster JSON's "class"
    index = html_report.write(out_dir, ...)             # see html_report.py

instructor._grade_roster calls build() after grading. Everything here is
deterministic (sorted, no times), so the roster JSON stays reproducible.

Misconceptions come only from each failed test's "mistake" field, which the
grader's result stream writes when a test recognises a classic mistake; never
from a failure message, which may carry the learner's own words (an exception
message that ends "; see docs/..." would name a mistake). The same mistake, worded differently by two
tests, counts once per submission (feedback.mistake_key of its words, then
keys that are a word prefix of one another are merged); a row lists the
MistakeTable names counted under it.

Similarity is measured per lab with Debian's similarity-tester (sim_c++,
or sim_c), on the learner files with every line of the lab's stub and
header blanked out, so that the starter code makes nobody similar. Code
that more than `max_copies` submissions share is treated as common (what
a lab's short, convergent solution looks like), as MOSS's -m does. What is
left of a file is its own code; a pair is flagged when at least `threshold`
percent of EACH file's own code is found in the other, and that shared code
is at least `min_tokens` tokens long. A flag is a reason to look, not a
verdict.
"""
import os
import re
import shutil
import subprocess
import tempfile
import time

from reports import feedback
from reports import html_report
from labs import ROOT

# ---------------------------------------------------------------------------
# Misconceptions and tests


def lab_diagnoses(lab_report, names=None):
    """{mistake key: [its wordings]} named by the failed tests of one lab
    report. `names`, when given, collects {key: {MistakeTable names}}."""
    out = {}
    if lab_report.get("status") != "graded":
        return out
    for t in lab_report.get("tests", []):
        if t.get("passed"):
            continue
        # The structured field only (written by the verdict process): a failure
        # message carries the learner's own words ("...; see docs/..." in an
        # exception message), which must not name, or rename, a mistake.
        found = feedback.as_mistake(t.get("mistake"))
        text = feedback.diagnosis("", found) if found else ""
        if text:
            key = feedback.mistake_key(text)
            words = out.setdefault(key, [])
            if text not in words:
                words.append(text)
            if names is not None and found["name"]:
                names.setdefault(key, set()).add(found["name"])
    return out


def merge_keys(keys):
    """{key: root key}: a key whose words start with another key's words (at
    least two of them) belongs to that shorter key."""
    roots = {}
    for key in sorted(keys, key=lambda k: (len(k.split()), k)):
        words = key.split()
        root = key
        for r in sorted(set(roots.values()), key=lambda k: (len(k.split()), k)):
            rw = r.split()
            if len(rw) >= 2 and words[:len(rw)] == rw:
                root = r
                break
        roots[key] = root
    return roots


def shown_wording(texts):
    """One wording for a mistake the tests word in several ways: the shortest,
    without its parenthesised details when they differ."""
    texts = sorted(texts, key=lambda t: (len(t), t))
    if len(texts) == 1:
        return texts[0]
    plain = sorted({feedback.without_asides(t) for t in texts}, key=lambda t: (len(t), t))
    return plain[0]


def count_mistakes(named, table_names=None):
    """[(submission, {key: [wordings]})] -> [{"mistake", "wordings", "names",
    "count", "submissions"}], most frequent first. Each submission counts once
    per (merged) mistake. `table_names`: {key: {MistakeTable names}}."""
    table_names = table_names or {}
    all_keys = {k for _, d in named for k in d}
    roots = merge_keys(all_keys)
    texts, who, tables = {}, {}, {}
    for name, d in named:
        for key in sorted(d):
            root = roots[key]
            texts.setdefault(root, set()).update(d[key])
            who.setdefault(root, set()).add(name)
            tables.setdefault(root, set()).update(table_names.get(key, ()))
    rows = [{"mistake": shown_wording(texts[r]), "wordings": sorted(texts[r]),
             "names": sorted(tables[r]), "count": len(who[r]),
             "submissions": sorted(who[r])} for r in who]
    rows.sort(key=lambda x: (-x["count"], x["mistake"]))
    return rows


def lab_summary(lab, lab_reports, hardest=5):
    """The class picture of one lab from [(submission name, lab report)]."""
    statuses = {}
    submitted = [(n, r) for n, r in lab_reports if r.get("submitted")]
    for _, r in lab_reports:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    table_names = {}
    named = [(n, lab_diagnoses(r, table_names)) for n, r in submitted]
    unnamed = sorted(n for (n, r), (_, d) in zip(submitted, named)
                     if r["status"] == "graded" and not d and r["passed"] < r["total"])
    order, passed, failed = [], {}, {}
    for _, r in submitted:
        for t in r.get("tests", []):
            if t["name"] not in passed:
                order.append(t["name"])
                passed[t["name"]] = failed[t["name"]] = 0
            if t["passed"]:
                passed[t["name"]] += 1
            else:
                failed[t["name"]] += 1
    tests = [{"name": n, "passed": passed[n], "failed": failed[n]} for n in order]
    worst = sorted((t for t in tests if t["failed"]), key=lambda t: (-t["failed"], t["name"]))
    n = len(submitted)
    return {
        "lab": lab.number, "dir": lab.dir, "title": lab.title,
        "submissions": len(lab_reports), "submitted": n, "statuses": statuses,
        "full_marks": sum(1 for _, r in submitted if r["points"] >= r["max_points"] > 0),
        "mistakes": count_mistakes(named, table_names),
        "failed_without_a_named_mistake": unnamed,
        "tests": tests,
        "hardest": [dict(t, majority=2 * t["failed"] > n) for t in worst[:hardest]],
    }


def summarise(reports, labs):
    """Per lab, in registry order: see lab_summary()."""
    out = []
    for lab in labs:
        rows = []
        for rep in reports:
            for r in rep["labs"]:
                if r["lab"] == lab.number:
                    rows.append((rep["submission"], r))
        out.append(lab_summary(lab, rows))
    return out


# ---------------------------------------------------------------------------
# Similarity

DEFAULTS = {"threshold": 50, "min_tokens": 100, "max_copies": 4, "min_run": 24}
TOOLS = ("sim_c++", "sim_c")


def find_tool(path=None):
    """The similarity tester to use (sim_c++, else sim_c), or None."""
    for name in TOOLS:
        found = shutil.which(name, path=path)
        if found:
            return found
    return None


def _norm_line(line):
    return re.sub(r"\s+", " ", line).strip()


def starter_lines(lab, root=ROOT):
    """The lines of the lab's stub and header, normalised (whitespace)."""
    out = set()
    for rel in (lab.learner_file, lab.learner_file[:-3] + ".h"):
        try:
            with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                out.update(_norm_line(l) for l in f)
        except OSError:
            pass
    out.discard("")
    return out


def strip_starter(text, starter):
    """`text` with every line that is also a line of the starter code blanked
    (line numbers are kept, so regions can be quoted from the original)."""
    starter = {_norm_line(l) for l in starter}
    return "\n".join("" if _norm_line(l) in starter else l for l in text.split("\n"))


def content_lines(text):
    """Numbers (from 1) of the lines that hold code: not blank, not only a
    comment, not a preprocessor line."""
    out = set()
    in_block = False
    for i, l in enumerate(text.split("\n"), 1):
        s = l.strip()
        if in_block:
            if "*/" in s:
                in_block = False
                s = s[s.index("*/") + 2:].strip()
            else:
                continue
        if s.startswith("/*") and "*/" not in s:
            in_block = True
            continue
        # The tester skips comments and preprocessor lines too.
        if s and not s.startswith(("//", "#")):
            out.add(i)
    return out


_RUN = re.compile(r"^(?P<a>\S+): line (?P<a0>\d+)(?:-(?P<a1>\d+))?\s*\|"
                  r"(?P<b>\S+): line (?P<b0>\d+)(?:-(?P<b1>\d+))?\s*\[(?P<tokens>\d+)\]\s*$")


def parse_sim(output):
    """Runs [(file a, (first, last), file b, (first, last), tokens)] from
    the summary output (-n) of sim_c/sim_c++."""
    runs = []
    for line in output.splitlines():
        m = _RUN.match(line.strip())
        if not m:
            continue
        a = (int(m.group("a0")), int(m.group("a1") or m.group("a0")))
        b = (int(m.group("b0")), int(m.group("b1") or m.group("b0")))
        runs.append((m.group("a"), a, m.group("b"), b, int(m.group("tokens"))))
    return runs


_FILE = re.compile(r"^File (?P<f>\S+): (?P<tokens>\d+) tokens")


def parse_tokens(output):
    """{file: tokens} from the tester's list of its input files."""
    return {m.group("f"): int(m.group("tokens"))
            for m in (_FILE.match(l.strip()) for l in output.splitlines()) if m}


def run_sim(tool, texts, min_run, timeout=600):
    """Runs the tester on {file name: text} (every file against every other);
    returns (runs, {file: tokens}); raises RuntimeError when it fails."""
    d = tempfile.mkdtemp(prefix="mha-sim-")
    try:
        for name, text in texts.items():
            with open(os.path.join(d, name), "w", encoding="utf-8") as f:
                f.write(text)
        names = "\n".join(sorted(texts)) + "\n"
        p = subprocess.run([tool, "-e", "-s", "-n", "-i", "-r", str(min_run)], cwd=d,
                           input=names, capture_output=True, text=True, timeout=timeout)
        if p.returncode != 0:
            raise RuntimeError("%s exited with status %d: %s" % (
                os.path.basename(tool), p.returncode, (p.stderr or p.stdout).strip()[-300:]))
        return parse_sim(p.stdout), parse_tokens(p.stdout)
    except subprocess.TimeoutExpired:
        raise RuntimeError("%s ran longer than %d s" % (os.path.basename(tool), timeout))
    finally:
        shutil.rmtree(d, ignore_errors=True)


def sharers(runs, sizes):
    """{file: {line: how many OTHER submissions hold that line}}, counting
    the copies of each distinct file (`sizes`: {file: submissions holding it})."""
    by = {}
    for a, (a0, a1), b, (b0, b1), _ in runs:
        for f, lo, hi, other in ((a, a0, a1, b), (b, b0, b1, a)):
            lines = by.setdefault(f, {})
            for l in range(lo, hi + 1):
                lines.setdefault(l, set()).add(other)
    out = {}
    for f in sizes:
        base = sizes[f] - 1
        out[f] = {l: base + sum(sizes[o] for o in others)
                  for l, others in by.get(f, {}).items()}
    return out


def _common(f, line, shared, sizes, max_copies):
    count = shared.get(f, {}).get(line, sizes[f] - 1)
    return count + 1 > max_copies


def own_lines(shared, content, sizes, max_copies):
    """{file: its code lines that are not common}: what a percentage is of.
    `shared`: sharers(runs, sizes)."""
    return {f: {l for l in content[f] if not _common(f, l, shared, sizes, max_copies)}
            for f in content}


def pair_scores(runs, shared, content, sizes, max_copies, tokens_of=None):
    """Per pair of distinct files, what is shared once common code is left out:
    {(a, b): {"lines_a", "lines_b", "tokens", "regions"}}. Identical files
    (a file held by several submissions) are scored against themselves as
    (a, a); their tokens are the file's, in proportion to the lines kept.
    `shared`: sharers(runs, sizes)."""
    tokens_of = tokens_of or {}
    out = {}

    def uncommon(f, lo, hi):
        return {l for l in range(lo, hi + 1)
                if l in content[f] and not _common(f, l, shared, sizes, max_copies)}

    for a, (a0, a1), b, (b0, b1), tokens in runs:
        key, swap = ((a, b), False) if a <= b else ((b, a), True)
        if swap:
            a, a0, a1, b, b0, b1 = b, b0, b1, a, a0, a1
        ua, ub = uncommon(a, a0, a1), uncommon(b, b0, b1)
        la = len([l for l in range(a0, a1 + 1) if l in content[a]]) or 1
        lb = len([l for l in range(b0, b1 + 1) if l in content[b]]) or 1
        frac = min(len(ua) / la, len(ub) / lb)
        e = out.setdefault(key, {"lines_a": set(), "lines_b": set(), "tokens": 0.0,
                                 "regions": []})
        e["lines_a"] |= ua
        e["lines_b"] |= ub
        e["tokens"] += tokens * frac
        if frac > 0.5:
            e["regions"].append({"a": [a0, a1], "b": [b0, b1], "tokens": tokens})
    for f, n in sizes.items():
        if n > 1:
            lines = uncommon(f, 1, max(content[f] or {0}))
            if lines:
                tokens = tokens_of.get(f, 0) * len(lines) / max(1, len(content[f]))
                out[(f, f)] = {"lines_a": lines, "lines_b": lines, "tokens": tokens,
                               "regions": [{"a": [min(lines), max(lines)],
                                            "b": [min(lines), max(lines)],
                                            "tokens": int(round(tokens))}]}
    return out


def lab_pairs(lab, files, settings, tool, root=ROOT):
    """Flagged pairs of one lab. `files`: {submission name: bytes}."""
    starter = starter_lines(lab, root)
    groups = {}       # stripped text -> [submission names]
    for name in sorted(files):
        text = strip_starter(files[name].decode("utf-8", "replace"), starter)
        groups.setdefault(text, []).append(name)
    ids = {}
    for i, text in enumerate(sorted(groups, key=lambda t: groups[t][0])):
        ids["f%04d.cc" % i] = text
    members = {f: groups[t] for f, t in ids.items()}
    sizes = {f: len(m) for f, m in members.items()}
    content = {f: content_lines(t) for f, t in ids.items()}
    texts = {f: t for f, t in ids.items() if content[f]}
    runs, tokens_of = run_sim(tool, texts, settings["min_run"]) if texts else ([], {})
    shared = sharers(runs, sizes)
    scores = pair_scores(runs, shared, content, sizes, settings["max_copies"], tokens_of)
    own = own_lines(shared, content, sizes, settings["max_copies"])
    pairs = []
    for (fa, fb), s in sorted(scores.items()):
        pa = 100.0 * len(s["lines_a"]) / max(1, len(own[fa]))
        pb = 100.0 * len(s["lines_b"]) / max(1, len(own[fb]))
        tokens = int(round(s["tokens"]))
        if min(pa, pb) < settings["threshold"] or tokens < settings["min_tokens"]:
            continue
        for x in members[fa]:
            for y in members[fb]:
                if fa == fb and x >= y:
                    continue
                a, b, ra = (x, y, False) if x < y else (y, x, True)
                regions = [{"a": r["b"], "b": r["a"], "tokens": r["tokens"]} if ra else r
                           for r in s["regions"]]
                pairs.append({"lab": lab.number, "dir": lab.dir, "a": a, "b": b,
                              "percent_a": round(pb if ra else pa),
                              "percent_b": round(pa if ra else pb),
                              "identical": fa == fb, "tokens": tokens,
                              "regions": sorted(regions, key=lambda r: r["a"])})
    pairs.sort(key=lambda p: (-min(p["percent_a"], p["percent_b"]), p["a"], p["b"]))
    return pairs


def similarity(submissions, labs, settings=None, tool=None, root=ROOT):
    """The similarity section. `submissions`: [(name, {lab number: bytes})]."""
    s = dict(DEFAULTS)
    s.update(settings or {})
    out = {"settings": s, "pairs": [], "labs_compared": [], "tool": "", "available": False,
           "note": "A flag is a reason to look at two files side by side, not a verdict: "
                   "short labs have few ways to be written, and learners may have worked "
                   "together as allowed."}
    if not s.get("enabled", True):
        out["note"] = "similarity was turned off (--similarity-threshold 0 or the rubric)"
        return out
    tool = tool if tool is not None else find_tool()
    if not tool:
        out["note"] = ("similarity was not measured: Debian's similarity-tester (sim_c++ or "
                       "sim_c) is not installed; tools/setup.sh installs it")
        return out
    out["tool"] = os.path.basename(tool)
    out["available"] = True
    errors = []
    for lab in labs:
        files = {name: f[lab.number] for name, f in submissions if lab.number in f}
        if len(files) < 2:
            continue
        try:
            pairs = lab_pairs(lab, files, s, tool, root)
        except (RuntimeError, OSError) as e:
            errors.append("lab %d: %s" % (lab.number, e))
            continue
        out["labs_compared"].append({"lab": lab.number, "files": len(files)})
        out["pairs"].extend(pairs)
    if errors:
        out["errors"] = errors
    return out


def build(reports, submissions, labs, settings=None, tool=None):
    """The roster JSON's "class" section."""
    return {"labs": summarise(reports, labs),
            "similarity": similarity(submissions, labs, settings, tool)}


def headline(klass):
    """One line for the console: the most common mistake and the flagged pairs."""
    top = [(m["count"], lab["lab"], m["mistake"]) for lab in klass["labs"]
           for m in lab["mistakes"][:1]]
    top.sort(key=lambda x: (-x[0], x[1]))
    sim = klass["similarity"]
    if not sim.get("available"):
        pairs = "similarity not measured"
    else:
        pairs = "%d similar pair(s)" % len(sim["pairs"])
    if not top:
        return "no named mistake; " + pairs
    n, lab, text = top[0]
    return "most common named mistake: lab %d, %d submission(s): %s; %s" % (
        lab, n, text[:80], pairs)


def similarity_settings(rubric, threshold=None):
    """The rubric's similarity settings, with --similarity-threshold on top
    (0 turns the check off)."""
    settings = rubric.similarity()
    if threshold is not None:
        settings["threshold"] = threshold
        if threshold <= 0:
            settings["enabled"] = False
    return settings


def for_roster(reports, submissions, labs, rubric, run_note, roster_name, out, threshold=None,
               log=print):
    """The class section and the HTML report of a graded roster (instructor.py);
    `run_note` says how it was graded (mode, isolation). Returns (class
    section, console lines). Never raises: a failure here costs the class
    report, never the grades."""
    t0 = time.time()
    try:
        klass = build(reports, [(s.name, s.files) for s in submissions], labs,
                      similarity_settings(rubric, threshold))
        index = html_report.write(
            os.path.join(out, "html"), roster_name, reports, labs, klass,
            {s.name: s.files for s in submissions}, run_note)
    except Exception as e:
        log("grade: the class report failed: %s: %s" % (type(e).__name__, e))
        return {"error": "%s: %s" % (type(e).__name__, e)}, ["class report: not written (%s)" % e]
    return klass, ["%s; class report: %s (%.0f s)" % (headline(klass), index, time.time() - t0)]
