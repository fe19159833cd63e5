"""The files the learner's tools read and keep: a lab's learner file (the stub
or started), its BUILD file, and the JSON state in .cache/ (hints seen,
compiler warnings, each lab's last result)."""
import json
import os
import re

from labs import ROOT, sha256

CACHE = os.path.join(ROOT, ".cache")
HINTS_STATE = os.path.join(CACHE, "hints.json")
WARNINGS_STATE = os.path.join(CACHE, "warnings.json")
# Each lab's state at the learner's last status / watch / grade (./lab read shows it).
LAST_RUN_STATE = os.path.join(CACHE, "last_run.json")
# What every stub throws, and every test of a stub says.
NOT_IMPLEMENTED = "is not implemented yet"


def read_text(path):
    """A text file's content as UTF-8 whatever the locale (undecodable bytes
    replaced), or None."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def sha256_file(path):
    try:
        with open(path, "rb") as f:
            return sha256(f.read())
    except OSError:
        return None


def load_json(path):
    """A JSON object from `path`, or {} when it is missing or not an object."""
    try:
        with open(path) as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def save_json(path, data):
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        pass   # remembering is a convenience, never a reason to fail


def is_started(lab, root=ROOT):
    """False while the learner file is the untouched stub, recognised by its
    content (the registry's stub_sha256), not by git history. With no hash
    recorded, a file that still says it is not implemented is not started."""
    if not lab.stub_sha256:
        data = lab.read_learner_file(root)
        return data is None or NOT_IMPLEMENTED not in data.decode("utf-8", "replace")
    return not lab.file_is_stub(root)


def builds_on(lab, labs, root=ROOT):
    """The earlier labs whose code `bazel test //labs/NN_name/...` compiles, read
    from the lab's BUILD file (transitively)."""
    seen, todo = set(), [lab]
    while todo:
        text = read_text(os.path.join(root, todo.pop().build_files[0])) or ""
        named = set(re.findall(r'"(//[^:"]+)[:"]', text))
        for other in labs:
            if other.package in named and other is not lab and other.number not in seen:
                seen.add(other.number)
                todo.append(other)
    return sorted((l for l in labs if l.number in seen), key=lambda l: l.number)
