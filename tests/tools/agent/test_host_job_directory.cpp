// The job directory an agent makes on a host where popdist run did not (agent/host_job_directory.hpp):
// made with its mark when missing, tidied by the host's last agent to end, each agent removing
// only its own files; one that was there (popdist run's) is never touched.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "agent/host_job_directory.hpp"
#include "job/job_directory.hpp"

namespace fs = std::filesystem;
using popdist::cli::HostJobDirectory;
using popdist::cli::instance_file;
using popdist::cli::kMadeByAgentsFile;

namespace {

/// A folder of this test's own, removed at the end whatever the test left.
struct Scratch {
  Scratch() { fs::create_directories(root); }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(root, ignored);
  }
  const fs::path root = fs::temp_directory_path() / ("popdist-agent-test-" + std::to_string(::getpid()));
};

std::string first_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

bool exists(const std::string& path) { return fs::exists(path); }

}  // namespace

TEST_CASE("a missing job directory is made private with its mark, and removed at the end with the parents made") {
  const Scratch scratch;
  const fs::path job = scratch.root / "tmp" / "popdist-run-abc";
  {
    const HostJobDirectory directory(job.string(), 3);
    REQUIRE(fs::is_directory(job));
    CHECK((fs::status(job).permissions() & (fs::perms::group_all | fs::perms::others_all)) == fs::perms::none);
    CHECK(first_line(job / kMadeByAgentsFile) == (scratch.root / "tmp").string());  // the topmost made
    CHECK(exists(instance_file(job.string(), 3, ".agent")));
    std::ofstream(instance_file(job.string(), 3, ".stacks")) << "a dump\n";
  }
  CHECK_FALSE(fs::exists(job));
  CHECK_FALSE(fs::exists(scratch.root / "tmp"));
  CHECK(fs::exists(scratch.root));  // it was there before
}

TEST_CASE("a job directory that was there (popdist run's) is left as it was") {
  const Scratch scratch;
  const fs::path job = scratch.root / "popdist-run-xyz";
  fs::create_directories(job);
  std::ofstream(job / "popdist-run.pid") << "123\n";
  {
    const HostJobDirectory directory(job.string(), 0);
    CHECK_FALSE(fs::exists(job / kMadeByAgentsFile));
    CHECK_FALSE(exists(instance_file(job.string(), 0, ".agent")));
    std::ofstream(instance_file(job.string(), 0, ".python")) << "pid=1\n";
  }
  CHECK(fs::exists(job / "popdist-run.pid"));
  CHECK(exists(instance_file(job.string(), 0, ".python")));  // popdist run removes its directory itself
}

TEST_CASE("each agent removes its own files, and the host's last agent to end removes the directory") {
  const Scratch scratch;
  const std::string job = (scratch.root / "popdist-run-two").string();
  auto first = std::make_unique<HostJobDirectory>(job, 0);
  auto second = std::make_unique<HostJobDirectory>(job, 1);
  std::ofstream(instance_file(job, 0, ".python")) << "pid=10\n";
  std::ofstream(instance_file(job, 1, ".python")) << "pid=11\n";
  first.reset();
  REQUIRE(exists(job));
  CHECK_FALSE(exists(instance_file(job, 0, ".python")));
  CHECK_FALSE(exists(instance_file(job, 0, ".agent")));
  CHECK(exists(instance_file(job, 1, ".python")));
  second->tidy();
  CHECK_FALSE(exists(job));
  second->tidy();  // idempotent, and so is the destructor after it
}

TEST_CASE("without a job directory the agent makes nothing") {
  HostJobDirectory directory("", 0);
  directory.tidy();
  CHECK_FALSE(exists(kMadeByAgentsFile));
}
