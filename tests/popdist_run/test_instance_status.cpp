// The instances' status files (instance_status.hpp): what `popdist run` reports when mpirun hangs
// after the first instance failed. Real files in a real temporary directory.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "job/instance_status.hpp"

using popdist::cli::first_recorded_failure;
using popdist::cli::instance_status_file;
using popdist::cli::JobDirectory;
using popdist::cli::record_instance_status;

TEST_CASE("the status directory is made under TMPDIR and removed with its files", "[status]") {
  std::string path;
  {
    const JobDirectory directory;
    path = directory.path();
    REQUIRE_FALSE(path.empty());
    CHECK(std::filesystem::is_directory(path));
    record_instance_status(instance_status_file(path, 0), 0);
    CHECK(std::filesystem::exists(path + "/instance0.end"));
  }
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("the first recorded failure is the one that ended first, whatever the instance", "[status]") {
  const JobDirectory directory;
  const auto& path = directory.path();
  CHECK_FALSE(first_recorded_failure(path).has_value());  // nothing recorded
  record_instance_status(instance_status_file(path, 2), 0);
  CHECK_FALSE(first_recorded_failure(path).has_value());  // a success is no failure
  record_instance_status(instance_status_file(path, 1), 3);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  record_instance_status(instance_status_file(path, 0), 143);  // killed afterwards by the launcher
  CHECK(first_recorded_failure(path) == 3);
  std::ofstream(path + "/instance3.end") << "";  // being written: skipped, never misread
  std::ofstream(path + "/instance4.end") << "garbage";
  std::ofstream(path + "/instance5.python") << "1 2\n";  // another file of the job: not a status
  std::ofstream(path + "/instance6.stderr") << "9 9\n";
  CHECK(first_recorded_failure(path) == 3);
}

TEST_CASE("every instance's end is read back with its host, first to end first", "[status]") {
  const JobDirectory directory;
  const auto& path = directory.path();
  record_instance_status(instance_status_file(path, 1), 139, "hostB");
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  record_instance_status(instance_status_file(path, 0), 0, "hostA");
  const auto ends = popdist::cli::recorded_ends(path);
  REQUIRE(ends.size() == 2);
  CHECK(ends[0].index == 1);
  CHECK(ends[0].status == 139);
  CHECK(ends[0].host == "hostB");
  CHECK(ends[1].index == 0);
  CHECK(ends[1].host == "hostA");
  CHECK(ends[0].ended_ns <= ends[1].ended_ns);
}

TEST_CASE("recording where no directory exists does nothing (an instance on another host)", "[status]") {
  record_instance_status("/nonexistent-popdist-dir/instance0", 3);
  CHECK_FALSE(std::filesystem::exists("/nonexistent-popdist-dir"));
  CHECK_FALSE(first_recorded_failure("/nonexistent-popdist-dir").has_value());
}
