"""What the reader shows beside a lesson, as data for its templates: the lab's
state at the learner's last ./lab status / watch / grade (.cache/last_run.json)
with the command to run next, the learner's own pictures beside the lesson's,
the lab's quiz, and the head viewer's runs (the view.json files the programs
wrote). Every sentence in the language being built (reader_labels.speaking).
"""
import datetime
import glob
import json
import os
import re

from labs import ROOT
from learner import files, i18n, quiz
from learner.i18n import _
from learner.reader_labels import labels

# Where each lab program writes (mha::OutputFolder): out/<program>, except
# show_heads, whose folder is out/heads.
_FOLDER_OF = {"show_heads": "heads"}
# The head viewer's data, in the order the viewer offers them.
VIEW_FILES = ["out/heads/trained_view.json", "out/heads/view.json",
              "out/heads/induction_view.json", "out/ablate_heads/view.json",
              "out/grow_induction_heads/view.json", "out/train_mini_gpt/view.json"]


def when(seconds):
    return datetime.datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M")


def last_run(root=ROOT):
    data = files.load_json(os.path.join(root, ".cache", "last_run.json"))
    labs = data.get("labs")
    return labs if isinstance(labs, dict) else {}


def status_of(lab, labs, runs, root=ROOT):
    """(state, detail lines, the command to run next) from the last run; the
    lines in the current language (a test's failure as ./lab printed it)."""
    t = labels()
    r = runs.get(str(lab.number))
    if not isinstance(r, dict) or r.get("state") not in ("not started", "failing", "passing"):
        return ("unknown", [_("no run of ./lab status, watch or grade recorded yet")],
                "./lab status")
    lines = []
    if isinstance(r.get("time"), (int, float)):
        lines.append(_("at your last run ({when})").format(when=when(r["time"])))
    if r["state"] == "not started":
        return ("not started", lines + [_("{file} is still the stub").format(
            file=lab.learner_file)], _("./lab watch {n}   (then edit {file})").format(
                n=lab.number, file=lab.learner_file))
    if r["state"] == "failing":
        if r.get("total"):
            lines.append(_("{passed}/{total} public tests pass").format(
                passed=r.get("passed", 0), total=r["total"]))
        if isinstance(r.get("detail"), str) and r["detail"]:
            lines.append(_("first failure: %s") % i18n.test_text(r["detail"], root))
        lines += [i18n.test_text(n, root) for n in r.get("notes", []) if isinstance(n, str)]
        lines += [w for w in r.get("warnings", []) if isinstance(w, str)]
        lines.append(_("stuck? ./lab hint {n}, and the lesson's Classic mistakes").format(
            n=lab.number))
        return ("failing", lines, "./lab watch %d" % lab.number)
    later = [l for l in labs if l.number > lab.number and
             (runs.get(str(l.number)) or {}).get("state") != "passing"]
    lines += [w for w in r.get("warnings", []) if isinstance(w, str)]
    if later:
        return ("passing", lines, _("./lab watch {n}   (next: {lab})").format(
            n=later[0].number, lab=t["lab_title"].format(n=later[0].number,
                                                         title=i18n.title(later[0]))))
    return ("passing", lines, "./lab grade")


def program_folders(lab, root=ROOT):
    """The out/ folders of the lab's programs (lab_program in its BUILD)."""
    text = files.read_text(os.path.join(root, "labs", lab.dir, "BUILD")) or ""
    names = re.findall(r'lab_program\(\s*name\s*=\s*"(\w+)"', text)
    return [_FOLDER_OF.get(n, n) for n in names]


def learner_pictures(lab, root=ROOT):
    """[(path relative to root, modification time)] of the PNGs the lab's programs wrote."""
    out = []
    for folder in program_folders(lab, root):
        for p in sorted(glob.glob(os.path.join(root, "out", folder, "*.png"))):
            out.append((os.path.relpath(p, root), os.path.getmtime(p)))
    return out


def pictures(lab, lesson_images, root=ROOT):
    """The pictures panel's data, or None when there is nothing to show:
    {"yours": [{"rel", "name" (the site's copy in yours/), "made"}],
    "lessons": [image names], "folders"}."""
    mine = learner_pictures(lab, root)
    if not mine and not lesson_images:
        return None
    return {"yours": [{"rel": rel, "name": rel.replace("/", "__"), "made": when(mtime)}
                      for rel, mtime in mine],
            "lessons": sorted(lesson_images),
            "folders": ", ".join("out/%s/" % f for f in program_folders(lab, root))}


def quiz_payload(lab, page, root=ROOT):
    """The quiz's JSON for the page's script, in page code `page`, or None."""
    data = quiz.load(lab, root)
    if data is None or quiz.problems_of(data, "quiz"):
        return None
    # The page's language: its questions, options, explanations and the quiz's
    # own words from the quiz catalogue (po/quiz/), English where it has none.
    # Each option carries what the learner reads once it is chosen (quiz.said:
    # the verdict and its explanation, spaced as the page's language spaces them).
    words = quiz.labels(page, root)
    questions = [dict(q, options=[dict(o, said=quiz.said(words, o)) for o in q["options"]])
                 for q in quiz.translated(data, page, root)["questions"]]
    return {"key": lab.dir, "questions": questions, "labels": words}


def views(root=ROOT, extra_views=None):
    """[{"id", "label", "made", "data"}] of the head viewer's files that exist."""
    out = []
    for rel in VIEW_FILES + list(extra_views or []):
        path = rel if os.path.isabs(rel) else os.path.join(root, rel)
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or data.get("kind") != "heads_view":
            continue
        shown = os.path.basename(rel) if os.path.isabs(rel) else os.path.relpath(path, root)
        out.append({"id": re.sub(r"[^a-z0-9]+", "-", shown.lower()).strip("-"),
                    "label": "%s: %s" % (data.get("program", "?"), shown),
                    "made": when(os.path.getmtime(path)), "data": data})
    _add_ablation([v["data"] for v in out])
    return out


def _add_ablation(views):
    """ablate_heads silences the heads of the model show_heads --trained draws,
    on the same sentence: its loss increases join that view's heads."""
    losses = [v for v in views if v.get("program") == "ablate_heads"]
    for v in views:
        if v.get("program") != "show_heads" or not losses:
            continue
        a = losses[0]
        try:
            ours, theirs = v["layers"][0]["heads"], a["layers"][0]["heads"]
            if v["tokens"] != a["tokens"] or len(ours) != len(theirs):
                continue
            for h, t in zip(ours, theirs):
                if isinstance(t.get("loss_increase"), (int, float)):
                    h["loss_increase"] = t["loss_increase"]
        except (KeyError, IndexError, TypeError):
            continue
