"""Compiling and linking a learner's file, as the build user, outside Bazel.

    build = Builder(workspace, isolation, suite, labs)
    obj = build.compile_source(lab, source, job)      # labs/NN_name/<target>.cc -> .o
    srv = build.link_server(lab, mode, objects, job)  # .o + runtime -> the learner's process

Each step runs in a fresh directory that only the job's one-off user may
enter, under the build limits of limits.py, as that user, in a jail that
holds only /usr, the staged headers and runtime and that directory where the
kernel allows mount namespaces (Isolation.run_build, jail.py); its
outputs are copied into the grader's private cache, keyed by the content of
everything that went in, so the same file is compiled once per suite version.
"""
import hashlib
import json
import os
import re
import shutil
import threading

import limits
from reports import messages
from grader import objcheck
import surface
from grader.suite import LDFLAGS

_locks = {}
_locks_guard = threading.Lock()


def _lock(key):
    with _locks_guard:
        return _locks.setdefault(key, threading.Lock())


class Built:
    """The outcome of a compile or a link: a file in the cache, or why not."""

    def __init__(self, ok, path=None, message="", warnings=None, key=""):
        self.ok = ok
        self.path = path
        self.message = message
        self.warnings = warnings or []
        self.key = key

    def to_json(self):
        return {"ok": self.ok, "message": self.message, "warnings": self.warnings}


# A second layer, before the compiler sees the file (the wall is the build
# user's permissions): what a lab file never needs.
_PRESCAN = [
    (re.compile(r'^\s*#\s*include\s*[<"]\s*/', re.M),
     "an #include of an absolute path; include the suite's and the standard headers by name"),
    (re.compile(r'^\s*#\s*include\s+[A-Za-z_]', re.M),
     "an #include of a macro; include headers by name"),
    (re.compile(r'^\s*#\s*include\s*[<"][^>"]*\.\.', re.M),
     "an #include that climbs out with '..'; include the suite's headers by their path"),
    (re.compile(r"\bincbin\b"), "an .incbin directive"),
    (re.compile(r"\b(__asm__|__asm|asm)\b"), "inline assembly, which a lab file does not need"),
    (re.compile(r"#\s*pragma\s+GCC\s+(plugin|optimize)"), "a #pragma GCC that changes the compiler"),
]


def prescan(source_text):
    for pattern, what in _PRESCAN:
        if pattern.search(source_text):
            return "rejected before compiling: the file contains %s" % what
    return ""


def _read_output(path, max_bytes):
    """Reads a file the build user wrote, refusing links and oversized files."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        st = os.fstat(fd)
        if not (st.st_mode & 0o170000 == 0o100000) or st.st_size > max_bytes:
            raise OSError("not a regular file of at most %d bytes" % max_bytes)
        chunks, left = [], st.st_size
        while left > 0:
            b = os.read(fd, min(left, 1 << 20))
            if not b:
                break
            chunks.append(b)
            left -= len(b)
        return b"".join(chunks)
    finally:
        os.close(fd)


def add_time(timing, step, seconds):
    """timing[step + "_s"] += seconds; timing[step + "s"] += 1 (a step really done)."""
    if timing is not None:
        timing[step + "_s"] = round(timing.get(step + "_s", 0.0) + seconds, 3)
        timing[step + "s"] = timing.get(step + "s", 0) + 1


class Builder:
    """Compiles and links learner files in `workspace`, through `isolation`,
    with `suite`'s flags and runtimes; `labs` are every lab (the call surface).
    `second_layer`: the source scan and object checks (a second layer behind
    the build user's permissions); the self-test turns them off to show the
    wall holds alone."""

    def __init__(self, workspace, isolation, suite, labs):
        self.workspace = workspace
        self.isolation = isolation
        self.suite = suite
        self.labs = labs
        self.second_layer = True

    def _job_dir(self, job, what):
        d = self.workspace.job_dir(job.slot, what)
        shutil.rmtree(d, ignore_errors=True)
        self.isolation.give_to_job(os.path.dirname(d), job)
        self.isolation.give_to_job(d, job)
        return d

    def _run(self, job, argv, cwd, timeout, timing, step):
        """Runs a build step as the job's user; adds its seconds to timing[step]."""
        res = self.isolation.run_build(job, argv, cwd, timeout, ro=[self.workspace.stage_dir])
        add_time(timing, step, res.seconds)
        return res

    def compile_source(self, lab, source, job, timing=None):
        # The wall the compiler ran behind is part of the key: an object built
        # where it could read more (an .incbin of a file the modes left open)
        # is never served to a grading behind a stronger wall.
        wall = self.isolation.build_wall().encode()
        key = hashlib.sha256(b"compile\0" + self.suite.fingerprint.encode() + b"\0" +
                             b"wall=" + wall + b"\0" +
                             (b"layer2\0" if self.second_layer else b"nolayer2\0") +
                             lab.dir.encode() + b"\0" + source).hexdigest()
        obj_path = self.workspace.cache_path("obj", key + ".o")
        meta_path = self.workspace.cache_path("obj", key + ".json")
        with _lock(key):
            if os.path.exists(meta_path):
                with open(meta_path) as f:
                    meta = json.load(f)
                return Built(meta["ok"], obj_path if meta["ok"] else None, meta["message"],
                             meta.get("warnings"), key)
            built = self._compile(lab, source, job, timing)
            os.makedirs(os.path.dirname(obj_path), exist_ok=True)
            if built.ok:
                shutil.move(built.path, obj_path)
                built.path = obj_path
            built.key = key
            with open(meta_path, "w") as f:
                json.dump(built.to_json(), f)
            return built


    def _compile(self, lab, source, job, timing):
        text = source.decode("utf-8", "replace")
        why = prescan(text) if self.second_layer else ""
        if why:
            return Built(False, message=why)
        d = self._job_dir(job, "compile")
        rel = lab.learner_file
        src = os.path.join(d, rel)
        os.makedirs(os.path.dirname(src), exist_ok=True)
        for p in (os.path.join(d, "labs"), os.path.dirname(src)):
            os.chmod(p, 0o755)
        with open(src, "wb") as f:
            f.write(source)
        os.chmod(src, 0o644)
        out = "learner.o"
        argv = ["g++"] + self.suite.compile_flags() + ["-c", rel, "-o", out]
        res = self._run(job, argv, d, limits.COMPILE_SECONDS, timing, "compile")
        output = messages.clean_paths(res.output, [d + "/", self.suite.include_root + "/"])
        if res.timed_out:
            return Built(False, message="does not compile: the compiler ran longer than %d s "
                         "(an #include of a device or a pipe?)" % limits.COMPILE_SECONDS)
        if res.returncode != 0:
            return Built(False, message=messages.compile_error(output, rel))
        warnings = messages.compile_warnings(output, rel)
        try:
            data = _read_output(os.path.join(d, out), limits.COMPILE_FILE_MB << 20)
        except OSError as e:
            return Built(False, message="does not compile: no object file (%s)" % e)
        problem = self._check_object(job, d, out, timing) if self.second_layer else ""
        if problem:
            return Built(False, message="rejected: " + problem)
        tmp = self.workspace.cache_path("obj", "tmp-%d-%d.o" % (os.getpid(), job.slot))
        os.makedirs(os.path.dirname(tmp), exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(data)
        shutil.rmtree(d, ignore_errors=True)
        return Built(True, tmp, warnings=warnings)


    def _check_object(self, job, d, obj, timing):
        readelf = self._run(job, ["readelf", "-S", "-W", obj], d, 30, timing, "check")
        nm = self._run(job, ["nm", "-P", obj], d, 30, timing, "check")
        if readelf.returncode != 0 or nm.returncode != 0 or readelf.timed_out or nm.timed_out:
            return "the object file could not be inspected (nm/readelf failed on it)"
        found = objcheck.problems(readelf.output, nm.output)
        return "; ".join(found)


    def _outside_surface(self, lab, job, d, obj, timing):
        """Why the lab's object calls an earlier lab outside its call surface
        ("" if it does not)."""
        nm = self._run(job, ["nm", "-u", "-C", obj], d, 30, timing, "check")
        if nm.returncode != 0 or nm.timed_out:
            return "the object file could not be inspected (nm failed on it)"
        found = surface.violations(lab, self.labs, nm.output, lab.root)
        return "; ".join(found[:3])


    def _hide_private(self, owner, job, d, obj, timing):
        """Renames, in the earlier lab `owner`'s object `obj`, every strong global
        symbol that is not a function of owner's API (its remote interface,
        surface.units) to a name no other file can spell: another lab's file
        cannot call an extra helper of owner's file by name. Weak symbols
        (inline and template code, shared by every file that includes the same
        header) keep their names. Returns why it could not ("" when done)."""
        api = set(surface.units(owner, owner.root))
        argv = ["nm", "-P", "-p", "-g", "--defined-only"]
        raw = self._run(job, argv + [obj], d, 30, timing, "check")
        dem = self._run(job, argv + ["-C", obj], d, 30, timing, "check")
        if raw.returncode != 0 or dem.returncode != 0 or raw.timed_out or dem.timed_out:
            return "the object file of lab %d could not be inspected (nm failed on it)" % (
                owner.number)
        raw_lines, dem_lines = raw.output.splitlines(), dem.output.splitlines()
        if len(raw_lines) != len(dem_lines):
            return "the object file of lab %d could not be inspected" % owner.number
        renames = []
        for r, m in zip(raw_lines, dem_lines):
            parts = r.split()
            shown = re.match(r"^(.*) ([A-Za-z]) [0-9a-fA-F]+(?: [0-9a-fA-F]+)?$", m)
            if len(parts) < 2 or not shown or parts[1] not in "TDBRGS":
                continue
            if surface.qualified(shown.group(1)) in api:
                continue
            renames.append("%s %s.mha_lab%d_private\n" % (parts[0], parts[0], owner.number))
        if not renames:
            return ""
        with open(os.path.join(d, "rename.txt"), "w") as f:
            f.writelines(renames)
        os.chmod(os.path.join(d, "rename.txt"), 0o644)
        res = self._run(job, ["objcopy", "--redefine-syms=rename.txt", obj, obj + ".tmp"], d, 30,
                        timing, "check")
        if res.returncode != 0 or res.timed_out:
            return "the object file of lab %d could not be prepared (objcopy failed on it)" % (
                owner.number)
        res = self._run(job, ["mv", obj + ".tmp", obj], d, 30, timing, "check")
        return "" if res.returncode == 0 else "the object file of lab %d could not be prepared" % (
            owner.number)

    def link_server(self, lab, mode, objects, job, timing=None, owners=()):
        """Links the learner's process for `lab` in `mode` from `objects` (Built, in
        link order: the lab's own first; `owners`, the labs of the others, in
        cumulative mode). Cached by the objects' keys."""
        key = hashlib.sha256(("link\0%s\0%s\0%s\0%s" % (
            self.suite.fingerprint, lab.dir, mode, ",".join(o.key for o in objects))).encode()
        ).hexdigest()
        bin_path = self.workspace.cache_path("bin", key)
        meta_path = bin_path + ".json"
        with _lock(key):
            if os.path.exists(meta_path):
                with open(meta_path) as f:
                    meta = json.load(f)
                return Built(meta["ok"], bin_path if meta["ok"] else None, meta["message"], key=key)
            d = self._job_dir(job, "link")
            names = []
            for i, o in enumerate(objects):
                name = "obj%d.o" % i
                shutil.copyfile(o.path, os.path.join(d, name))
                os.chmod(os.path.join(d, name), 0o644)
                names.append(name)
            # The call surface (surface.py): in cumulative mode the wall itself (the
            # learner's own earlier labs are linked in), in isolated mode a second
            # layer (the trusted process refuses such calls anyway).
            outside = (self._outside_surface(lab, job, d, names[0], timing)
                       if mode == "cumulative" or self.second_layer else "")
            # Cumulative mode: the earlier labs' extra helpers out of reach by name.
            for name, owner in zip(names[1:], owners):
                if not outside:
                    outside = self._hide_private(owner, job, d, name, timing)
            if outside:
                built = Built(False, key=key, message="rejected: " + outside)
                shutil.rmtree(d, ignore_errors=True)
                os.makedirs(os.path.dirname(meta_path), exist_ok=True)
                with open(meta_path, "w") as f:
                    json.dump(built.to_json(), f)
                return built
            argv = (["g++", "-o", "server"] + LDFLAGS + names +
                    self.suite.link_inputs(lab, mode))
            res = self._run(job, argv, d, limits.LINK_SECONDS, timing, "link")
            built = Built(False, key=key)
            if res.timed_out:
                built.message = ("does not link: the linker ran longer than %d s"
                                 % limits.LINK_SECONDS)
            elif res.returncode != 0:
                built.message = messages.link_error(messages.clean_paths(res.output, [d + "/"]))
            else:
                try:
                    data = _read_output(os.path.join(d, "server"), 256 << 20)
                    os.makedirs(os.path.dirname(bin_path), exist_ok=True)
                    with open(bin_path, "wb") as f:
                        f.write(data)
                    os.chmod(bin_path, 0o755)
                    built = Built(True, bin_path, key=key)
                except OSError as e:
                    built.message = "does not link: no executable (%s)" % e
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(os.path.dirname(meta_path), exist_ok=True)
            with open(meta_path, "w") as f:
                json.dump(built.to_json(), f)
            return built
