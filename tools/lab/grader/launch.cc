// launch: starts one command of a grading job as the job's one-off user, in a
// Landlock domain. The grader compiles it once per work root
// (tools/lab/grader/learner_jail.py: build_launcher) and runs it as root:
//
//   launch [root=DIR] uid=N landlock=0|1 [seccomp=0|1] [read=PATH]... [write=PATH]... --
//          PROGRAM ARGS...
//   launch --abi                 prints the kernel's Landlock ABI (0: none)
//
// In order: chroot into DIR and chdir("/") (when given); drop to uid N with
// no supplementary groups; no new privileges; then, with landlock=1, a
// Landlock domain in which the command may read and execute only beneath the
// `read` paths, do anything beneath the `write` paths and nothing elsewhere,
// neither bind nor connect a TCP socket (Landlock ABI 4 and later), and reach
// no abstract UNIX socket and signal no process outside the domain (ABI 6 and
// later); then, with seccomp=1, a seccomp filter that refuses (EPERM) the
// system calls a learner's process never needs and that reach past its job
// (kRefused below: sockets of any kind, the kernel's keyrings, System V IPC,
// io_uring, tracing another process); then exec PROGRAM with the environment
// it was given. It serves the
// learner's (and the job's reference) process, for which DIR is its jail, and,
// where no mount namespace is allowed, the compiler, assembler and linker
// (jail.py). Any failure exits 126 before PROGRAM runs: nothing runs outside
// its jail. A C++ program and not Python: a learner's process is started
// this way once per lab and after every crash, and Python with ctypes takes
// some 50 ms to start.
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/types.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// linux/landlock.h, spelled out: Debian 12's headers stop at ABI 3.
constexpr long kCreateRuleset = 444, kAddRule = 445, kRestrictSelf = 446;
constexpr __u32 kCreateRulesetVersion = 1;
constexpr int kRulePathBeneath = 1;
constexpr __u64 kFsExecute = 1, kFsWriteFile = 2, kFsReadFile = 4, kFsReadDir = 8;
constexpr __u64 kFsRefer = 1ull << 13, kFsTruncate = 1ull << 14, kFsIoctlDev = 1ull << 15;
constexpr __u64 kNetBindTcp = 1, kNetConnectTcp = 2;
constexpr __u64 kScopeAbstractUnixSocket = 1, kScopeSignal = 2;

struct RulesetAttr {
  __u64 handled_access_fs;
  __u64 handled_access_net;
  __u64 scoped;
};

struct __attribute__((packed)) PathBeneath {
  __u64 allowed_access;
  __s32 parent_fd;
};

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "launch: %s: %s\n", what.c_str(), std::strerror(errno));
  _exit(126);
}

long LandlockAbi() {
  const long abi = syscall(kCreateRuleset, nullptr, 0, kCreateRulesetVersion);
  return abi > 0 ? abi : 0;
}

// Every file-system right of `abi`: all handled, so all refused unless granted.
__u64 FsRights(long abi) {
  __u64 rights = (1ull << 13) - 1;  // ABI 1: execute .. make_sym
  if (abi >= 2) rights |= kFsRefer;
  if (abi >= 3) rights |= kFsTruncate;
  if (abi >= 5) rights |= kFsIoctlDev;
  return rights;
}

void Allow(int ruleset, const std::string& path, __u64 dir_rights, __u64 file_rights) {
  const int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) return;  // not on this machine: nothing to allow
  struct stat st;
  if (fstat(fd, &st) != 0) Fail("stat " + path);
  PathBeneath rule{S_ISDIR(st.st_mode) ? dir_rights : dir_rights & file_rights, fd};
  if (syscall(kAddRule, ruleset, kRulePathBeneath, &rule, 0) != 0) Fail("landlock_add_rule " + path);
  close(fd);
}

// Restricts this process, and what it execs, for good.
void Restrict(const std::vector<std::string>& read, const std::vector<std::string>& write) {
  const long abi = LandlockAbi();
  if (abi < 1) Fail("Landlock is not available");
  const __u64 fs = FsRights(abi);
  RulesetAttr attr{fs, abi >= 4 ? kNetBindTcp | kNetConnectTcp : 0,
                   abi >= 6 ? kScopeAbstractUnixSocket | kScopeSignal : 0};
  const std::size_t size = abi >= 6 ? 24 : abi >= 4 ? 16 : 8;
  const int ruleset = static_cast<int>(syscall(kCreateRuleset, &attr, size, 0));
  if (ruleset < 0) Fail("landlock_create_ruleset");
  const __u64 file_rights = kFsExecute | kFsWriteFile | kFsReadFile | (fs & (kFsTruncate | kFsIoctlDev));
  for (const auto& p : read) Allow(ruleset, p, kFsExecute | kFsReadFile | kFsReadDir, file_rights);
  for (const auto& p : write) Allow(ruleset, p, fs, file_rights);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) Fail("no_new_privs");
  if (syscall(kRestrictSelf, ruleset, 0) != 0) Fail("landlock_restrict_self");
  close(ruleset);
}

// What a learner's (or the job's reference) process may never do: it talks
// to the trusted process through the two pipes it was started with, and needs
// nothing else of the kernel. Each of these reaches past its job where no
// namespace holds it: a socket reaches the host's UDP (and TCP, abstract
// sockets, netlink) even where Landlock has no network rules; a keyring named
// and opened to every uid is found by name by any later job, whatever its uid
// (keyctl's JOIN_SESSION_KEYRING), and outlives the uid's processes; a System
// V object answers a job running at the same time; io_uring opens sockets
// without socket(); ptrace and process_vm_* read another process.
const long kRefused[] = {
    SYS_socket,        SYS_socketpair,     SYS_add_key,       SYS_request_key,
    SYS_keyctl,        SYS_shmget,         SYS_msgget,        SYS_semget,
    SYS_mq_open,       SYS_io_uring_setup, SYS_io_uring_enter, SYS_io_uring_register,
    SYS_ptrace,        SYS_process_vm_readv, SYS_process_vm_writev, SYS_perf_event_open,
    SYS_bpf,           SYS_userfaultfd,
};

#if defined(__x86_64__)
constexpr __u32 kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr __u32 kArch = AUDIT_ARCH_AARCH64;
#else
#error "launch.cc: no seccomp architecture for this machine"
#endif

// Installs the filter: another architecture's calls (i386's int 0x80, x32's
// numbers) and every call of kRefused fail with EPERM; the rest is allowed.
void RefuseWhatReachesPastTheJob() {
  constexpr __u32 kNr = offsetof(struct seccomp_data, nr);
  constexpr __u32 kArchAt = offsetof(struct seccomp_data, arch);
  constexpr __u32 kDeny = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
  std::vector<sock_filter> f = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArchAt),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, kDeny),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kNr),
  };
#if defined(__x86_64__)
  f.push_back(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));  // x32
  f.push_back(BPF_STMT(BPF_RET | BPF_K, kDeny));
#endif
  for (long nr : kRefused) {
    f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<__u32>(nr), 0, 1));
    f.push_back(BPF_STMT(BPF_RET | BPF_K, kDeny));
  }
  f.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  sock_fprog prog{static_cast<unsigned short>(f.size()), f.data()};
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) Fail("seccomp");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--abi") == 0) {
    std::printf("%ld\n", LandlockAbi());
    return 0;
  }
  std::string root;
  long uid = -1;
  bool landlock = false, seccomp = false;
  std::vector<std::string> read, write;
  int at = 1;
  for (; at < argc && std::strcmp(argv[at], "--") != 0; ++at) {
    const std::string word = argv[at];
    const std::size_t eq = word.find('=');
    const std::string key = word.substr(0, eq), value = eq == std::string::npos ? "" : word.substr(eq + 1);
    if (key == "root") {
      root = value;
    } else if (key == "uid") {
      uid = std::strtol(value.c_str(), nullptr, 10);
    } else if (key == "landlock") {
      landlock = value == "1";
    } else if (key == "seccomp") {
      seccomp = value == "1";
    } else if (key == "read") {
      read.push_back(value);
    } else if (key == "write") {
      write.push_back(value);
    } else {
      errno = EINVAL;
      Fail("unknown argument " + word);
    }
  }
  if (uid <= 0 || at + 1 >= argc) {
    errno = EINVAL;
    Fail("usage: launch [root=DIR] uid=N landlock=0|1 [seccomp=0|1] [read=P]... [write=P]... -- "
         "PROGRAM ...");
  }
  if (!root.empty() && (chroot(root.c_str()) != 0 || chdir("/") != 0)) Fail("chroot " + root);
  const uid_t id = static_cast<uid_t>(uid);
  if (setgroups(0, nullptr) != 0 || setresgid(id, id, id) != 0 || setresuid(id, id, id) != 0) {
    Fail("change to uid " + std::to_string(uid));
  }
  if (landlock) {
    Restrict(read, write);
  } else if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    Fail("no_new_privs");
  }
  if (seccomp) RefuseWhatReachesPastTheJob();
  execv(argv[at + 1], argv + at + 1);
  Fail(std::string("exec ") + argv[at + 1]);
}
