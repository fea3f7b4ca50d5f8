// Saved environments (`popdist topology --env-file`): NAME=VALUE lines, comments, blank lines,
// verbatim values; malformed lines and unreadable files are UsageErrors naming the place.

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "popdist/environment.hpp"
#include "popdist/error.hpp"
#include "popdist/text_input.hpp"

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

TEST_CASE("env_file.names and lines echoed in errors are escaped and shortened", "[env_file]") {
  // A raw escape sequence in a name must not reach the terminal (it could clear the screen).
  CHECK_THROWS_WITH(parse("X\x1b[2J=1\n"), Catch::Contains("'X\\x1b[2J'") && !Catch::Contains("\x1b"));
  // A 10 MB bad line is quoted by its first bytes and its size, not echoed whole.
  const std::string huge_line(100000, 'x');
  try {
    (void)parse(huge_line + "\n");
    FAIL("a line without '=' was accepted");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()).size() < 400);
    CHECK_THAT(e.what(), Catch::Contains("(100000 bytes)"));
  }
}

TEST_CASE("env_file.a line or an input beyond the bounds stops the reading with its size", "[env_file]") {
  // A line longer than any environment string can be (Linux's MAX_ARG_STRLEN) is refused at that
  // length: /dev/zero on standard input never ends a line, and must not be read into memory.
  std::istringstream zeros(std::string(max_input_line_bytes + 10, '\0'));
  CHECK_THROWS_WITH(parse_env_file(zeros, "<standard input>"),
                    Catch::Contains("<standard input>:1: line longer than 131072 bytes"));
  std::istringstream just_fits("A=" + std::string(max_input_line_bytes - 2, 'v') + "\n");
  CHECK(parse_env_file(just_fits, "fits.env").at("A").size() == max_input_line_bytes - 2);
  // Many short lines: the whole input is bounded too, counted as it is read.
  std::string many;
  while (many.size() <= max_input_file_bytes) many += "ABCDEFGHIJKLMNOPQRSTUVWXYZ=0123456789012345678901234\n";
  std::istringstream big(many);
  CHECK_THROWS_WITH(parse_env_file(big, "big.env"), Catch::Contains("big.env: longer than 8388608 bytes"));
}

TEST_CASE("env_file.oversized, special and unreadable files are refused before reading, saying why", "[env_file]") {
  char dir_template[] = "/tmp/popdist_env_XXXXXX";
  REQUIRE(::mkdtemp(dir_template) != nullptr);
  const std::filesystem::path dir(dir_template);
  // A sparse file: 8 GB on paper, nothing on disk; refused by its size without reading a byte.
  const auto sparse = (dir / "sparse.env").string();
  { std::ofstream(sparse).put('A'); }
  std::filesystem::resize_file(sparse, std::uintmax_t{8} << 30);
  CHECK_THROWS_WITH(read_env_file(sparse), Catch::Contains("is 8589934592 bytes; popdist reads at most 8388608"));
  // A fifo with no writer would block the open: refused by its kind.
  const auto fifo = (dir / "fifo.env").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH(read_env_file(fifo), Catch::Contains("is a fifo; expected a regular file"));
  CHECK_THROWS_WITH(read_env_file("/dev/zero"), Catch::Contains("is a device; expected a regular file"));
  // /proc/self/mem looks like an empty regular file, but reading it fails: the error says so.
  const auto mem = (dir / "mem.env").string();
  std::filesystem::create_symlink("/proc/self/mem", mem);
  CHECK_THROWS_WITH(read_env_file(mem), Catch::Contains("read error after line 0: Input/output error"));
  std::filesystem::remove_all(dir);
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
