#include "job/instance_status.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace popdist::cli {
namespace {

constexpr const char* kEndSuffix = ".end";

/// The index of `instance<i>.end`; nullopt for any other name.
std::optional<int> index_of_end_file(const std::string& name) {
  const std::string prefix = "instance";
  const std::string suffix = kEndSuffix;
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return std::nullopt;
  }
  int index = 0;
  const char* first = name.data() + prefix.size();
  const char* last = name.data() + name.size() - suffix.size();
  const auto [next, error] = std::from_chars(first, last, index);
  if (error != std::errc() || next != last) return std::nullopt;
  return index;
}

}  // namespace

int shell_status(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

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

std::string instance_status_file(const std::string& directory, int index) {
  return instance_file(directory, index, kEndSuffix);
}

void record_instance_status(const std::string& file, int status, const std::string& host) {
  // Wall-clock time: the directory may be on a file system that several machines share.
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  const std::string line = std::to_string(status) + " " + std::to_string(now) + " " + host + "\n";
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  ssize_t written = 0;
  do {
    written = ::write(fd, line.data(), line.size());  // one short write: readers see all or nothing
  } while (written < 0 && errno == EINTR);
  ::close(fd);
}

std::vector<InstanceEnd> recorded_ends(const std::string& directory) {
  std::vector<InstanceEnd> ends;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    const auto index = index_of_end_file(entry.path().filename().string());
    if (!index) continue;
    std::ifstream file(entry.path());
    InstanceEnd end;
    end.index = *index;
    if (!(file >> end.status >> end.ended_ns)) continue;
    file >> end.host;
    ends.push_back(end);
  }
  std::sort(ends.begin(), ends.end(), [](const InstanceEnd& a, const InstanceEnd& b) {
    return a.ended_ns != b.ended_ns ? a.ended_ns < b.ended_ns : a.index < b.index;
  });
  return ends;
}

std::optional<int> first_recorded_failure(const std::string& directory) {
  for (const auto& end : recorded_ends(directory)) {
    if (end.status != 0) return end.status;
  }
  return std::nullopt;
}

}  // namespace popdist::cli
