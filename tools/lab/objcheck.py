"""Static checks on the learner's compiled object, made outside any learner process.

Lab code is pure arithmetic on tensors. Code that reaches into the test
harness or the operating system is how a submission would tamper with a
test process it shares, so the grader inspects the object file the
compiler made from the learner's file (symbols with nm, sections with
readelf; both only read the file) before linking it:

  rejected  (the lab scores 0, with the reason): references to GoogleTest,
            mha::testing or mha::grading; process, signal-free syscall,
            dynamic-loading, memory-protection and environment-changing
            functions (fork, exec*, system, syscall, ptrace, dlopen, dlsym,
            mprotect, setenv, ...); definitions that would replace a system
            library's or the harness's functions (interposition) or main;
            GNU indirect functions (which run before any constructor);
            .preinit_array entries; inline assembly in the source.
  review    (no effect on points; listed in the report for the instructor):
            exit()/abort-family calls, file and descriptor I/O, getenv,
            signal handlers, threads, mmap.
"""
import re
import subprocess

REJECT_IMPORTS = {
    "fork", "vfork", "clone", "clone3", "execv", "execve", "execvp", "execvpe", "execl",
    "execle", "execlp", "fexecve", "posix_spawn", "posix_spawnp", "system", "popen", "daemon",
    "setsid", "setpgid", "kill", "killpg", "tgkill", "tkill", "ptrace", "syscall", "prctl",
    "dlopen", "dlmopen", "dlsym", "dlvsym", "dladdr", "dl_iterate_phdr", "mprotect",
    "pkey_mprotect", "process_vm_readv", "process_vm_writev", "setenv", "unsetenv", "putenv",
    "clearenv", "setrlimit", "prlimit", "prlimit64", "chroot", "mount", "umount", "unshare",
    "setns", "setuid", "setgid", "seteuid", "setegid", "setreuid", "setregid", "setresuid",
    "setresgid", "socket", "connect", "bind", "sendto", "pthread_atfork", "__libc_start_main",
    "environ", "__environ", "_environ", "memfd_create", "personality", "vmsplice", "splice",
}
REVIEW_IMPORTS = {
    "exit", "_exit", "_Exit", "quick_exit", "atexit", "at_quick_exit", "abort",
    "open", "open64", "openat", "openat64", "fopen", "fopen64", "freopen", "creat", "read",
    "write", "pread", "pread64", "pwrite", "pwrite64", "close", "dup", "dup2", "dup3", "pipe",
    "pipe2", "unlink", "unlinkat", "rename", "mkdir", "rmdir", "opendir", "readdir", "fdopen",
    "getenv", "secure_getenv", "signal", "sigaction", "raise", "sigprocmask", "_setjmp",
    "setjmp", "longjmp", "__longjmp_chk", "siglongjmp", "pthread_create", "mmap", "mmap64",
    "munmap", "sbrk", "brk", "sched_setaffinity", "sleep", "usleep", "nanosleep",
}
# Mangled prefixes: GoogleTest and the suite's own test and grading helpers.
REJECT_PREFIXES = ("_ZN7testing", "_ZNK7testing", "_ZN3mha7testing", "_ZNK3mha7testing",
                   "_ZN3mha7grading", "_ZNK3mha7grading", "_ZTVN7testing", "_ZTIN7testing")
REVIEW_PREFIXES = {
    "_ZNSt14basic_ofstream": "std::ofstream", "_ZNSt14basic_ifstream": "std::ifstream",
    "_ZNSt13basic_fstream": "std::fstream", "_ZNSt13basic_filebuf": "std::filebuf",
    "_ZNSt6thread": "std::thread", "_ZSt4exit": "std::exit",
}


class Finding:
    def __init__(self, severity, what):
        self.severity, self.what = severity, what


def _nm(obj):
    out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True)
    syms = []
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            syms.append((parts[0], parts[1]))
    return syms


def _demangle(names):
    if not names:
        return {}
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True,
                         text=True).stdout.splitlines()
    return dict(zip(names, out)) if len(out) == len(names) else {n: n for n in names}


def _sections(obj):
    out = subprocess.run(["readelf", "-S", "-W", obj], capture_output=True, text=True).stdout
    return re.findall(r"\]\s+(\S+)\s+", out)


def strip_comments_and_strings(src):
    """C++ source without comments, string and character literals (for keyword scans)."""
    return re.sub(r'//[^\n]*|/\*.*?\*/|R"([^(]*)\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                  " ", src, flags=re.S)


def source_findings(src):
    """Findings from the learner's source text: inline assembly is rejected."""
    text = strip_comments_and_strings(src.decode("utf-8", errors="replace"))
    if re.search(r"\b(asm|__asm__|__asm)\b", text):
        return [Finding("reject", "uses inline assembly (asm)")]
    return []


_SYSTEM_SYMBOLS = None


def system_symbols(libraries):
    """Names exported by the system libraries the test binary loads."""
    global _SYSTEM_SYMBOLS
    if _SYSTEM_SYMBOLS is None:
        names = set()
        for lib in libraries:
            out = subprocess.run(["nm", "-D", "--defined-only", "-P", lib], capture_output=True,
                                 text=True).stdout
            for line in out.splitlines():
                parts = line.split()
                if parts:
                    names.add(parts[0].split("@")[0])
        _SYSTEM_SYMBOLS = names
    return _SYSTEM_SYMBOLS


def check(objects, libraries, source=b""):
    """[Finding] for the learner's object files (and source text)."""
    findings = source_findings(source)
    sys_names = system_symbols(libraries)
    for obj in objects:
        syms = _nm(obj)
        dem = _demangle(sorted({n for n, _ in syms}))
        for name, typ in syms:
            base = name.split("@")[0]
            pretty = dem.get(name, name)
            if typ == "U":
                if base in REJECT_IMPORTS or base.startswith(REJECT_PREFIXES):
                    findings.append(Finding("reject", "calls %s" % pretty))
                elif base in REVIEW_IMPORTS:
                    findings.append(Finding("review", "calls %s" % pretty))
                else:
                    for prefix, what in REVIEW_PREFIXES.items():
                        if base.startswith(prefix):
                            findings.append(Finding("review", "uses %s" % what))
                            break
                continue
            if typ == "i":
                findings.append(Finding("reject", "defines the indirect function %s" % pretty))
                continue
            if typ in "TDBRGSCVW":
                strong = typ in "TDBRGSC"
                if base == "main" or base.startswith(REJECT_PREFIXES):
                    findings.append(Finding("reject", "defines %s" % pretty))
                elif base in sys_names and (strong or not base.startswith("_Z")):
                    findings.append(Finding(
                        "reject", "defines %s, which would replace the system library's" % pretty))
        sections = _sections(obj)
        for s in sections:
            if s.startswith(".preinit_array"):
                findings.append(Finding("reject", "adds a .preinit_array entry"))
    seen, unique = set(), []
    for f in findings:
        key = (f.severity, f.what)
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return sorted(unique, key=lambda f: (f.severity != "reject", f.what))
