#include "run/supervise/reach_probe.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <sstream>

#include "io/fd.hpp"
#include "job/reach_line.hpp"

namespace popdist::cli {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> split_words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string word; in >> word;) {
    if (word == ":") break;  // Open MPI's "ssh : rsh": the first alternative
    words.push_back(word);
  }
  return words;
}

/// The value after `option` (any of `names`) in `words`, or after "--mca <name>" for an MCA name.
std::optional<std::string> option_value(const std::vector<std::string>& words, const std::vector<std::string>& names) {
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    if (std::find(names.begin(), names.end(), words[i]) != names.end()) return words[i + 1];
    const bool mca = words[i] == "--mca" || words[i] == "-mca";
    if (mca && i + 2 < words.size() && std::find(names.begin(), names.end(), words[i + 1]) != names.end())
      return words[i + 2];
  }
  return std::nullopt;
}

/// One running probe: its pid (and process group), its output's read end, what it wrote.
struct Running {
  pid_t pid = -1;
  io::Fd output;
  std::string written;
  std::optional<int> status;
};

Running start_probe(const std::vector<std::string>& command) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return {};
  io::Fd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  std::vector<char*> argv;
  for (const auto& word : command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {  // the child: only async-signal-safe calls until exec
    ::setpgid(0, 0);  // its own group, so that a remote shell's children are killed with it
    const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    ::dup2(null, 0), ::dup2(write_end.get(), 1), ::dup2(write_end.get(), 2);
    ::execvp(argv[0], argv.data());
    const char message[] = "popdist run: the reach probe's program could not be started\n";
    (void)!::write(2, message, sizeof message - 1);
    ::_exit(127);
  }
  if (pid < 0) return {};
  ::setpgid(pid, pid);
  io::set_nonblocking(read_end.get());
  return {pid, std::move(read_end), {}, std::nullopt};
}

/// Reads what is there; closes the end at EOF.
void drain(Running& probe) {
  char buffer[4096];
  ssize_t got;
  while ((got = ::read(probe.output.get(), buffer, sizeof buffer)) > 0) probe.written.append(buffer, got);
  if (got == 0) probe.output.reset();
}

/// Polls every open output until `deadline` or until all probes ended (their status reaped).
void wait_all(std::vector<Running>& probes, Clock::time_point deadline) {
  while (Clock::now() < deadline) {
    std::vector<pollfd> fds;
    bool running = false;
    for (auto& probe : probes) {
      if (probe.pid > 0 && !probe.status) {
        int raw = 0;
        if (::waitpid(probe.pid, &raw, WNOHANG) == probe.pid)
          probe.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
      }
      running = running || (probe.pid > 0 && (!probe.status || probe.output.valid()));
      if (probe.output.valid()) fds.push_back({probe.output.get(), POLLIN, 0});
    }
    if (!running) return;
    ::poll(fds.data(), fds.size(), 50);  // 50 ms: the children's ends are polled, not signalled
    for (auto& probe : probes)
      if (probe.output.valid()) drain(probe);
  }
}

std::string last_line(const std::string& text) {
  std::istringstream in(text);
  std::string last;
  for (std::string line; std::getline(in, line);)
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  const auto first = last.find_first_not_of(" \t");
  return first == std::string::npos ? "" : last.substr(first);
}

}  // namespace

std::vector<std::string> remote_shell(Backend backend, const std::vector<std::string>& global_words,
                                      const EnvLookup& env) {
  if (backend == Backend::srun) return {};
  const bool hydra = backend == Backend::hydra;
  const std::vector<std::string> names = hydra ? std::vector<std::string>{"-launcher-exec", "-bootstrap-exec"}
                                               : std::vector<std::string>{"plm_rsh_agent", "orte_rsh_agent"};
  auto value = option_value(global_words, names);
  if (!value) value = env(hydra ? "HYDRA_LAUNCHER_EXEC" : "OMPI_MCA_plm_rsh_agent");
  auto words = split_words(value.value_or("ssh"));
  return words.empty() ? std::vector<std::string>{"ssh"} : words;
}

std::vector<std::string> probe_command(const std::vector<std::string>& shell, const std::string& host,
                                       const std::string& self, const std::string& address, int port,
                                       std::chrono::milliseconds within) {
  std::vector<std::string> command = shell;
  command.push_back(host);
  for (std::string word : {self, std::string(kReachCommand), std::string("--address"), address,
                           std::string("--port"), std::to_string(port), std::string("--within"),
                           std::to_string(within.count())})
    command.push_back(std::move(word));
  return command;
}

ProbeOutcome classify_probe(int status, bool timed_out) {
  if (timed_out) return ProbeOutcome::no_answer;
  if (status == kReachConnected) return ProbeOutcome::connected;
  if (status == kReachNoConnection) return ProbeOutcome::no_connection;
  return ProbeOutcome::shell_failed;
}

bool is_this_machine(const std::string& host) {
  char name[256] = {};
  if (host == "localhost" || host.rfind("127.", 0) == 0) return true;
  if (::gethostname(name, sizeof name - 1) != 0) return false;
  const std::string self(name);
  const auto short_name = [](const std::string& text) { return text.substr(0, text.find('.')); };
  return host == self || short_name(host) == short_name(self);
}

std::vector<ProbeResult> run_probes(const std::vector<std::string>& hosts,
                                    const std::vector<std::vector<std::string>>& commands,
                                    Clock::time_point deadline) {
  std::vector<Running> probes;
  for (const auto& command : commands) probes.push_back(start_probe(command));
  wait_all(probes, deadline);
  std::vector<ProbeResult> results;
  for (std::size_t i = 0; i < probes.size(); ++i) {
    Running& probe = probes[i];
    // Late, or ended while a child of it (a remote shell's) still holds its output: its group goes.
    if (probe.pid > 0 && (!probe.status || probe.output.valid())) ::kill(-probe.pid, SIGKILL);
    if (probe.pid > 0 && !probe.status) ::waitpid(probe.pid, nullptr, 0);
    const bool timed_out = probe.pid > 0 && !probe.status;
    const int status = probe.pid > 0 ? probe.status.value_or(0) : 127;
    results.push_back({hosts[i], classify_probe(status, timed_out), status, last_line(probe.written)});
  }
  return results;
}

}  // namespace popdist::cli
