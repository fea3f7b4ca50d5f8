#include "job/job_directory.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace popdist::cli {

std::string job_directory_template() {
  const char* tmpdir = std::getenv("TMPDIR");
  return std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") + "/popdist-run-XXXXXX";
}

JobDirectory::JobDirectory() {
  std::string pattern = job_directory_template();
  if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
}

JobDirectory::~JobDirectory() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string instance_file(const std::string& directory, int index, const std::string& suffix) {
  return directory + "/instance" + std::to_string(index) + suffix;
}

}  // namespace popdist::cli
