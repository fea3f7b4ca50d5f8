#include "run/launch/command_length.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string_view>

#include "common/argument_text.hpp"
#include "job/agent_line.hpp"
#include "popdist/error.hpp"

extern char** environ;

namespace popdist::cli {

std::size_t exec_bytes(const std::vector<std::string>& strings) {
  std::size_t total = 0;
  for (const auto& s : strings) total += s.size() + 1 + sizeof(char*);
  return total;
}

void check_command_length(const std::vector<std::string>& argv, std::size_t environment_bytes, std::size_t limit,
                          int num_instances, const std::vector<std::string>& program) {
  for (const auto& word : argv) {
    if (word.size() + 1 > kMaxExecStringBytes) {
      throw UsageError(fmt::format("the mpirun command has a word of {} bytes ({}); Linux passes at most {} bytes per "
                                   "argument: shorten that argument of the program, or of --mpi-global-args / "
                                   "--mpi-local-args / --host",
                                   word.size(), shown(word), kMaxExecStringBytes - 1));
    }
  }
  std::size_t program_bytes = 0;
  for (const auto& word : program) program_bytes += word.size() + 1;
  // Open MPI hands every process its app's arguments joined in one variable, OMPI_ARGV, and Linux
  // passes no string longer than kMaxExecStringBytes.
  const auto app = std::find(argv.begin(), argv.end(), kInstanceCommand);
  std::size_t joined = std::string_view("OMPI_ARGV=").size();
  for (auto word = app; word != argv.end(); ++word) joined += word->size() + 1;
  if (app != argv.end() && joined > kMaxExecStringBytes) {
    throw UsageError(fmt::format("the program's arguments are {} bytes; Open MPI passes them to every instance in one "
                                 "variable (OMPI_ARGV) of at most {} bytes, so the instances could not start: pass "
                                 "long values in a file instead",
                                 program_bytes, kMaxExecStringBytes - 1));
  }
  const std::size_t arguments = exec_bytes(argv);
  if (arguments + environment_bytes <= limit) return;
  throw UsageError(fmt::format(
      "the mpirun command would be {} bytes of arguments plus {} bytes of environment, above this system's limit of "
      "{} bytes (ARG_MAX), so mpirun could not start (\"Argument list too long\"): the program's arguments are {} "
      "bytes (the {} instances share one app context). Use shorter program arguments (e.g. a configuration file), "
      "fewer --mpi-local-args, or a smaller environment",
      arguments, environment_bytes, limit, program_bytes, num_instances));
}

std::size_t current_environment_bytes() {
  std::size_t total = sizeof(char*);  // the terminating null pointer
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    total += std::strlen(*entry) + 1 + sizeof(char*);
  }
  return total;
}

std::size_t exec_size_limit() {
  const long limit = ::sysconf(_SC_ARG_MAX);
  // POSIX's minimum when the system does not say.
  return limit > 0 ? static_cast<std::size_t>(limit) : std::size_t{4096};
}

}  // namespace popdist::cli
