// The job directory (job/job_directory.hpp): made under TMPDIR, private, removed with its files.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "job/job_directory.hpp"

using popdist::cli::JobDirectory;

TEST_CASE("the job directory is made under TMPDIR, private, and removed with its files", "[status]") {
  std::string path;
  {
    const JobDirectory directory;
    path = directory.path();
    REQUIRE_FALSE(path.empty());
    CHECK(std::filesystem::is_directory(path));
    CHECK((std::filesystem::status(path).permissions() & std::filesystem::perms::others_all) ==
          std::filesystem::perms::none);
    std::ofstream(popdist::cli::instance_file(path, 0, ".python")) << "pid=1\n";
  }
  CHECK_FALSE(std::filesystem::exists(path));
}
