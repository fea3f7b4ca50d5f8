// Saved environments (`popdist topology --env-file`): NAME=VALUE lines, comments, blank lines,
// verbatim values; malformed lines and unreadable files are UsageErrors naming the place.

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "popdist/environment.hpp"
#include "popdist/error.hpp"

namespace popdist::testing {
namespace {

EnvMap parse(const std::string& text) {
  std::istringstream in(text);
  return parse_env_file(in, "saved.env");
}

}  // namespace

TEST_CASE("env_file.NAME=VALUE lines, comments and blank lines", "[env_file]") {
  const auto vars = parse(
      "# captured with env\n"
      "\n"
      "OMPI_COMM_WORLD_RANK=1\n"
      "   \n"
      "  # an indented comment\n"
      "OMPI_COMM_WORLD_SIZE=4\n");
  CHECK(vars == EnvMap{{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "4"}});
}

TEST_CASE("env_file.values are verbatim: after the first '=', empty allowed, spaces kept", "[env_file]") {
  const auto vars = parse("A=x=y\nEMPTY=\nSPACED= 4 \nPMIX_SERVER_URI2=pmix-server.6424;tcp4://127.0.0.1:41107\n");
  CHECK(vars.at("A") == "x=y");
  CHECK(vars.at("EMPTY").empty());
  CHECK(vars.at("SPACED") == " 4 ");
  CHECK(vars.at("PMIX_SERVER_URI2") == "pmix-server.6424;tcp4://127.0.0.1:41107");
}

TEST_CASE("env_file.a repeated name keeps the last value", "[env_file]") {
  CHECK(parse("N=1\nN=2\n").at("N") == "2");
}

TEST_CASE("env_file.a last line without newline is read", "[env_file]") { CHECK(parse("N=3").at("N") == "3"); }

TEST_CASE("env_file.only the file's variables are set", "[env_file]") {
  const auto lookup = lookup_in(parse("SLURM_PROCID=0\n"));
  CHECK(lookup("SLURM_PROCID") == std::optional<std::string>("0"));
  CHECK_FALSE(lookup("PATH").has_value());  // set in this process, absent from the file
  CHECK_FALSE(lookup("HOME").has_value());
}

TEST_CASE("env_file.a line without '=' names the source, line number and line", "[env_file]") {
  CHECK_THROWS_AS(parse("A=1\nnot an assignment\n"), UsageError);
  CHECK_THROWS_WITH(parse("A=1\nnot an assignment\n"),
                    Catch::Contains("saved.env:2") && Catch::Contains("'not an assignment'") && Catch::Contains("'='"));
}

TEST_CASE("env_file.invalid names are rejected with the line", "[env_file]") {
  for (const std::string line : {"=value", "1ABC=2", "A B=1", "export A=1", " A=1", "A-B=1", "A.B=1"}) {
    INFO(line);
    CHECK_THROWS_WITH(parse("OK=1\n" + line + "\n"),
                      Catch::Contains("saved.env:2") && Catch::Contains("not a valid variable name") &&
                          Catch::Contains("'" + line + "'"));
  }
}

TEST_CASE("env_file.read_env_file reads a file and names an unreadable path", "[env_file]") {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("popdist_unit_env_file." + std::to_string(::getpid()) + ".env"))
          .string();
  {
    std::ofstream out(path);
    out << "PMI_RANK=2\nPMI_SIZE=3\n";
  }
  CHECK(read_env_file(path) == EnvMap{{"PMI_RANK", "2"}, {"PMI_SIZE", "3"}});
  std::remove(path.c_str());
  CHECK_THROWS_AS(read_env_file("/nonexistent/dir/file.env"), UsageError);
  CHECK_THROWS_WITH(read_env_file("/nonexistent/dir/file.env"), Catch::Contains("/nonexistent/dir/file.env"));
}

TEST_CASE("env_file.a directory is not an environment file", "[env_file]") {
  CHECK_THROWS_AS(read_env_file("/"), UsageError);
}

TEST_CASE("env_file.process_environment reads the live environment", "[env_file]") {
  // setenv only here, in a single-threaded test, to have a known variable to read back.
  REQUIRE(::setenv("POPDIST_UNIT_TEST_VARIABLE", "live value", 1) == 0);
  const auto env = process_environment();
  CHECK(env("POPDIST_UNIT_TEST_VARIABLE") == std::optional<std::string>("live value"));
  REQUIRE(::setenv("POPDIST_UNIT_TEST_VARIABLE", "", 1) == 0);
  CHECK(env("POPDIST_UNIT_TEST_VARIABLE") == std::optional<std::string>(""));  // set but empty
  REQUIRE(::unsetenv("POPDIST_UNIT_TEST_VARIABLE") == 0);
  CHECK_FALSE(env("POPDIST_UNIT_TEST_VARIABLE").has_value());
}

TEST_CASE("env_file.lookup_in copies share the map and outlive the original", "[env_file]") {
  EnvLookup copy;
  {
    EnvMap vars{{"A", "1"}};
    const auto lookup = lookup_in(vars);
    copy = lookup;
    vars["A"] = "2";  // lookup_in took a copy
  }
  CHECK(copy("A") == std::optional<std::string>("1"));
}

}  // namespace popdist::testing
