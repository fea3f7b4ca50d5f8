#include "run/launch/launcher_choice.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run/launch/find_program.hpp"

namespace popdist::cli {
namespace {

/// A --version that takes longer is no launcher we know (they answer in milliseconds).
constexpr std::chrono::seconds kVersionDeadline{5};

[[noreturn]] void exec_version(int out, const std::string& path, const std::string& name) {
  const int null = ::open("/dev/null", O_RDONLY);
  if (null >= 0) ::dup2(null, STDIN_FILENO);
  ::dup2(out, STDOUT_FILENO);
  ::dup2(out, STDERR_FILENO);
  const char* argv[] = {name.c_str(), "--version", nullptr};
  ::execv(path.c_str(), const_cast<char* const*>(argv));
  ::_exit(127);
}

/// Reads `fd` to its end or the deadline; false at the deadline.
bool read_until_end(int fd, std::string& text, std::chrono::steady_clock::time_point deadline) {
  char buffer[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd poll_fd{fd, POLLIN, 0};
    const int ready = ::poll(&poll_fd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return ready == 0 ? false : true;
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return true;
    text.append(buffer, static_cast<std::size_t>(got));
  }
}

/// Why a program found is not the launcher asked for: "/usr/bin/mpirun says 'mpirun (Open MPI) 4.1.4' (Open MPI 4.1.4)".
std::string found_text(const std::string& path, const std::optional<std::string>& output) {
  if (!output) return fmt::format("{} did not answer --version within {} s", path, kVersionDeadline.count());
  const auto identity = identify_launcher(*output);
  return fmt::format("{} says '{}' ({})", path, first_line_of(*output),
                     identity ? identity->description : "no launcher popdist run knows");
}

std::string_view what_to_do(BackendChoice choice) {
  switch (choice) {
    case BackendChoice::openmpi:
      return "install Open MPI (e.g. Debian's openmpi-bin) or put its bin directory first on PATH, or choose another "
             "--backend";
    case BackendChoice::hydra:
      return "install MPICH (e.g. Debian's mpich) or Intel MPI, or put its bin directory first on PATH, or choose "
             "another --backend";
    case BackendChoice::srun: return "run inside a Slurm cluster with srun on PATH, or choose another --backend";
    case BackendChoice::automatic: break;
  }
  return "install Open MPI (openmpi-bin) or MPICH (mpich), or put its bin directory (or Slurm's srun) on PATH, or "
         "name one with --backend";
}

bool wanted(BackendChoice choice, Backend backend) {
  switch (choice) {
    case BackendChoice::automatic: return true;  // srun only when no MPI launcher is there (candidates' order)
    case BackendChoice::openmpi: return backend == Backend::openmpi;
    case BackendChoice::hydra: return backend == Backend::hydra;
    case BackendChoice::srun: return backend == Backend::srun;
  }
  return false;
}

std::string_view choice_word(BackendChoice choice) {
  switch (choice) {
    case BackendChoice::automatic: return "auto";
    case BackendChoice::openmpi: return "openmpi";
    case BackendChoice::hydra: return "hydra";
    case BackendChoice::srun: return "srun";
  }
  return "auto";
}

}  // namespace

std::vector<std::string> launcher_candidates(BackendChoice choice) {
  switch (choice) {
    case BackendChoice::openmpi: return {"mpirun", "mpiexec", "mpirun.openmpi"};
    case BackendChoice::hydra: return {"mpiexec.hydra", "mpiexec", "mpirun"};
    case BackendChoice::srun: return {"srun"};
    case BackendChoice::automatic: break;
  }
  // An MPI launcher the user has always comes first: srun only where neither is found.
  return {"mpirun", "mpiexec", "srun"};
}

std::optional<std::string> version_output(const std::string& path, const std::string& name,
                                          std::chrono::milliseconds deadline) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return std::nullopt;
  const pid_t child = ::fork();
  if (child == 0) exec_version(pipe_fds[1], path, name);
  ::close(pipe_fds[1]);
  if (child < 0) {
    ::close(pipe_fds[0]);
    return std::nullopt;
  }
  std::string text;
  const bool ended = read_until_end(pipe_fds[0], text, std::chrono::steady_clock::now() + deadline);
  ::close(pipe_fds[0]);
  if (!ended) ::kill(child, SIGKILL);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!ended || (WIFEXITED(status) && WEXITSTATUS(status) == 127 && text.empty())) return std::nullopt;
  return text;
}

LauncherSearch find_launcher(BackendChoice choice, const EnvLookup& env) {
  const auto path = env("PATH").value_or("");
  std::vector<std::string> found;
  for (const auto& name : launcher_candidates(choice)) {
    const auto program = find_program(name, path);
    if (!program) continue;
    const auto output = version_output(*program, name, kVersionDeadline);
    const auto identity = output ? identify_launcher(*output) : std::nullopt;
    if (identity && wanted(choice, identity->backend)) {
      return {Launcher{identity->backend, *program, name, identity->description}, {}, found};
    }
    found.push_back(found_text(*program, output));
  }
  const auto searched = path.empty() ? std::string("nothing, PATH is empty")
                                     : fmt::format("{}", fmt::join(path_directories(path), ", "));
  return {std::nullopt,
          fmt::format("no launcher for --backend {}: looked for {} on PATH ({}); {}; {}", choice_word(choice),
                      fmt::join(launcher_candidates(choice), ", "), searched,
                      found.empty() ? std::string("found none of them") : "found " + fmt::format("{}", fmt::join(found, "; ")),
                      what_to_do(choice))};
}

}  // namespace popdist::cli
