#include "instance_status.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace popdist::cli {

int shell_status(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

InstanceStatusDirectory::InstanceStatusDirectory() {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string pattern = std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") + "/popdist-run-XXXXXX";
  if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
}

InstanceStatusDirectory::~InstanceStatusDirectory() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string instance_status_file(const std::string& directory, int index) {
  return directory + "/instance" + std::to_string(index);
}

void record_instance_status(const std::string& file, int status) {
  // Wall-clock time: the directory may be on a file system that several machines share.
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  const std::string line = std::to_string(status) + " " + std::to_string(now) + "\n";
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  ssize_t written = 0;
  do {
    written = ::write(fd, line.data(), line.size());  // one short write: readers see all or nothing
  } while (written < 0 && errno == EINTR);
  ::close(fd);
}

std::optional<int> first_recorded_failure(const std::string& directory) {
  std::optional<int> first;
  long long first_time = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    std::ifstream file(entry.path());
    int status = 0;
    long long ended = 0;
    if (!(file >> status >> ended) || status == 0) continue;
    if (!first || ended < first_time) {
      first = status;
      first_time = ended;
    }
  }
  return first;
}

}  // namespace popdist::cli
