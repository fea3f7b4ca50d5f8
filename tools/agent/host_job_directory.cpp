#include "agent/host_job_directory.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "job/job_directory.hpp"

namespace popdist::cli {
namespace fs = std::filesystem;
namespace {

// An agent that starts while the last one of its host removes the directory makes it again.
constexpr int kAttempts = 3;

fs::path topmost_missing(const fs::path& path) {
  fs::path top;
  std::error_code error;
  for (fs::path at = path; !at.empty() && at != at.root_path() && !fs::exists(at, error); at = at.parent_path())
    top = at;
  return top;
}

/// Makes `path` with the mark in it at once: made aside, then renamed into place, so no agent
/// ever sees the directory without its mark. Losing the race to another agent is fine.
void make_marked(const fs::path& path) {
  std::error_code error;
  const fs::path top = topmost_missing(path);
  if (top.empty()) return;  // there already (popdist run's, or another agent's)
  fs::create_directories(path.parent_path(), error);
  const fs::path aside = path.string() + ".making." + std::to_string(::getpid());
  if (::mkdir(aside.c_str(), 0700) != 0) return;
  std::ofstream(aside / kMadeByAgentsFile) << top.string() << "\n";
  if (::rename(aside.c_str(), path.c_str()) != 0) fs::remove_all(aside, error);  // another agent won
}

std::string read_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

bool only_the_mark_left(const fs::path& path) {
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(path, error))
    if (entry.path().filename() != kMadeByAgentsFile) return false;
  return !error;
}

}  // namespace

HostJobDirectory::HostJobDirectory(std::string path, int instance) : path_(std::move(path)), instance_(instance) {
  if (path_.empty()) return;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    make_marked(path_);
    std::error_code error;
    made_by_agents_ = fs::exists(fs::path(path_) / kMadeByAgentsFile, error);
    if (!made_by_agents_) return;  // not ours to tidy
    const int fd = ::open(instance_file(path_, instance_, ".agent").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) {
      ::close(fd);
      return;
    }
    if (errno != ENOENT) return;  // ENOENT: the host's last agent removed it just now
  }
}

HostJobDirectory::~HostJobDirectory() { tidy(); }

void HostJobDirectory::tidy() noexcept {
  if (!made_by_agents_) return;
  made_by_agents_ = false;
  const fs::path path(path_);
  const std::string own = "instance" + std::to_string(instance_) + ".";
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(path, error))
    if (entry.path().filename().string().rfind(own, 0) == 0) fs::remove(entry.path(), error);
  if (!only_the_mark_left(path)) return;  // another agent of this host still runs: it tidies
  const fs::path top = read_line(path / kMadeByAgentsFile);
  fs::remove(path / kMadeByAgentsFile, error);
  if (::rmdir(path_.c_str()) != 0) return;
  // The parents the agents made (a TMPDIR missing on this host), up to the topmost one.
  const bool top_is_a_parent = !top.empty() && top != path && path.string().rfind(top.string() + "/", 0) == 0;
  for (fs::path at = path.parent_path(); top_is_a_parent && at.string().size() >= top.string().size();
       at = at.parent_path())
    if (::rmdir(at.c_str()) != 0) break;
}

}  // namespace popdist::cli
