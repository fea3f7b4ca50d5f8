#include "run/launch/find_program.hpp"

#include <sys/stat.h>
#include <unistd.h>

namespace popdist::cli {
namespace {

bool is_executable_file(const std::string& file) {
  struct stat info {};
  return ::stat(file.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::access(file.c_str(), X_OK) == 0;
}

}  // namespace

std::vector<std::string> path_directories(const std::string& path) {
  std::vector<std::string> directories;
  std::size_t start = 0;
  while (true) {
    const std::size_t colon = path.find(':', start);
    std::string directory = path.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    directories.push_back(directory.empty() ? "." : directory);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return directories;
}

std::optional<std::string> find_program(const std::string& name, const std::string& path) {
  if (name.find('/') != std::string::npos) return is_executable_file(name) ? std::optional(name) : std::nullopt;
  if (path.empty()) return std::nullopt;
  for (const auto& directory : path_directories(path)) {
    const std::string candidate = directory + "/" + name;
    if (is_executable_file(candidate)) return candidate;
  }
  return std::nullopt;
}

}  // namespace popdist::cli
