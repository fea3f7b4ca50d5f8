#include "run/supervise/stall_watch.hpp"

#include <sys/stat.h>

#include <filesystem>

namespace popdist::cli {
namespace {

bool is_alive_file(const std::string& name) {
  const std::string suffix = ".alive";
  return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::chrono::system_clock::time_point modified(const std::filesystem::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return {};
  return std::chrono::system_clock::time_point(std::chrono::duration_cast<std::chrono::system_clock::duration>(
      std::chrono::seconds(info.st_mtim.tv_sec) + std::chrono::nanoseconds(info.st_mtim.tv_nsec)));
}

}  // namespace

StallWatch::StallWatch(std::string job_dir, std::chrono::milliseconds limit)
    : job_dir_(std::move(job_dir)), limit_(limit), since_(std::chrono::system_clock::now()) {}

bool StallWatch::stalled() {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(job_dir_, error)) {
    if (is_alive_file(entry.path().filename().string())) since_ = std::max(since_, modified(entry.path()));
  }
  return std::chrono::system_clock::now() - since_ >= limit_;
}

void StallWatch::restart() { since_ = std::chrono::system_clock::now(); }

}  // namespace popdist::cli
