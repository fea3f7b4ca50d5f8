#include "run/supervise/unreaped_children.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "job/shell_status.hpp"

namespace popdist::cli {
namespace {

/// The fields of /proc/<pid>/stat after the command name, which may itself hold spaces and
/// parentheses (it ends at the last ')'): [0] is the state, field N of proc(5) is [N - 3].
std::vector<std::string> stat_fields(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(file, line)) return {};
  const auto name_end = line.rfind(')');
  if (name_end == std::string::npos) return {};
  std::istringstream rest(line.substr(name_end + 1));
  std::vector<std::string> fields;
  for (std::string field; rest >> field;) fields.push_back(field);
  return fields;
}

}  // namespace

std::vector<UnreapedChild> unreaped_children(pid_t parent) {
  constexpr std::size_t state = 0;       // proc(5) field 3
  constexpr std::size_t exit_code = 49;  // proc(5) field 52
  std::vector<UnreapedChild> zombies;
  std::error_code error;
  // Each thread lists the children it forked: read every thread's list.
  const std::filesystem::path tasks = "/proc/" + std::to_string(parent) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(tasks, error)) {
    std::ifstream children(task.path() / "children");
    for (pid_t child = 0; children >> child;) {
      const auto fields = stat_fields(child);
      if (fields.size() > exit_code && fields[state] == "Z") {
        zombies.push_back({child, shell_status(static_cast<int>(std::strtol(fields[exit_code].c_str(), nullptr, 10)))});
      }
    }
  }
  return zombies;
}

}  // namespace popdist::cli
