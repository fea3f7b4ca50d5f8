#include "agent/signal_relay.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace popdist::cli {
namespace {

// What the handler reads: globals of volatile sig_atomic_t, as a handler takes no argument of
// ours and may only touch those.
volatile sig_atomic_t g_program_pid = 0;
volatile sig_atomic_t g_group_signaller = 0;  ///< the parent, when it signals the agent's whole group
volatile sig_atomic_t g_asked_to_end = 0;      ///< a TERM, INT or HUP reached the agent

constexpr int kRelayedSignals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2,
                                   SIGCONT, SIGTSTP, SIGALRM, SIGABRT};

/// Whether `pid` is a slurmstepd (which signals every process of its step). Async-signal-safe:
/// open, read and close only, the path built by hand.
bool is_slurmstepd(pid_t pid) {
  char path[32] = "/proc/";
  char digits[12];
  int length = 0;
  for (auto rest = static_cast<unsigned long>(pid); rest > 0 && length < 11; rest /= 10) {
    digits[length++] = static_cast<char>('0' + rest % 10);
  }
  int at = 6;
  while (length > 0) path[at++] = digits[--length];
  std::memcpy(path + at, "/comm", 6);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char name[16] = {};
  const ssize_t got = ::read(fd, name, sizeof name - 1);
  ::close(fd);
  return got >= 10 && std::memcmp(name, "slurmstepd", 10) == 0;
}

/// Whether the sender's signal reached the program already: sent to the agent's process group by
/// its Open MPI parent, or to every process of the step by slurmstepd.
bool reached_program_too(const siginfo_t* info) {
  if (info == nullptr || (info->si_code != SI_USER && info->si_code != SI_QUEUE)) return false;
  if (g_group_signaller != 0 && info->si_pid == g_group_signaller) return true;
  return is_slurmstepd(info->si_pid);
}

void relay(int signal_number, siginfo_t* info, void*) {
  // The agent's own signal to its group (its fence, agent/host_fence.hpp) reached the program already.
  if (info != nullptr && info->si_code == SI_USER && info->si_pid == ::getpid()) return;
  if (signal_number == SIGTERM || signal_number == SIGINT || signal_number == SIGHUP) g_asked_to_end = 1;
  if (g_program_pid > 0 && !reached_program_too(info)) ::kill(g_program_pid, signal_number);
}

}  // namespace

bool signals_direct_children_only(const std::optional<std::string>& value) {
  if (!value) return false;
  std::string word = *value;
  std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::tolower(c); });
  return word == "1" || word == "true" || word == "yes" || word == "on";
}

void relay_signals_to_program(const std::optional<std::string>& direct_children_only) {
  g_group_signaller = signals_direct_children_only(direct_children_only) ? 0 : ::getppid();
  struct sigaction action {};
  action.sa_sigaction = relay;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  for (const int signal_number : kRelayedSignals) ::sigaction(signal_number, &action, nullptr);
}

void set_signal_target(pid_t program) { g_program_pid = program; }

bool asked_to_end() { return g_asked_to_end != 0; }

}  // namespace popdist::cli
