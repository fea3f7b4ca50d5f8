// The command line of `popdist run` through CLI11, the topology table and PATH search.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "find_program.hpp"
#include "launch_plan.hpp"
#include "popdist/error.hpp"
#include "run_cli.hpp"
#include "topology_table.hpp"

using popdist::cli::RunOptions;

namespace {

// Parses `run <args>` as main.cpp does; returns the options (throws CLI11's or our errors).
RunOptions parse(std::vector<std::string> args) {
  CLI::App app{"test"};
  auto* sub = app.add_subcommand("run");
  RunOptions options;
  popdist::cli::add_run_options(*sub, options);
  args.insert(args.begin(), "run");
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments reversed
  app.parse(args);
  popdist::cli::check_program_after_separator(*sub, options);
  return options;
}

}  // namespace

TEST_CASE("run's options have PopRun's names and defaults", "[cli]") {
  const auto defaults = parse({"--", "prog"});
  CHECK(defaults.num_instances == 1);
  CHECK_FALSE(defaults.num_replicas.has_value());
  CHECK(total_replicas(defaults) == 1);
  CHECK(defaults.ipus_per_replica == 1);
  CHECK_FALSE(defaults.print_topology);
  CHECK_FALSE(defaults.dry_run);
  CHECK(defaults.verbosity == 0);
  CHECK(defaults.program == std::vector<std::string>{"prog"});

  const auto all = parse({"--num-instances", "2", "--num-replicas=8", "--ipus-per-replica", "2", "-H", "a,b",
                          "--host", "c", "--print-topology=yes", "--only-output-from-instance", "1",
                          "--mpi-global-args", "--mca btl self", "--mpi-local-args", "-x A", "--mpi-local-args=-x B",
                          "--numa-aware", "--dry-run", "-vv", "--", "prog", "--num-instances", "3", "--"});
  CHECK(all.num_instances == 2);
  CHECK(all.num_replicas == 8);
  CHECK(all.ipus_per_replica == 2);
  CHECK(all.host_lists == std::vector<std::string>{"a,b", "c"});
  CHECK(all.print_topology);
  CHECK(all.only_output_from_instance == 1);
  CHECK(all.mpi_global_args == "--mca btl self");
  CHECK(all.mpi_local_args == std::vector<std::string>{"-x A", "-x B"});
  CHECK(all.numa_aware);
  CHECK(all.dry_run);
  CHECK(all.verbosity == 2);
  CHECK(all.program == std::vector<std::string>{"prog", "--num-instances", "3", "--"});
  CHECK(total_replicas(parse({"--num-instances", "4", "--", "p"})) == 4);  // one replica per instance
  CHECK(parse({"--vv", "--", "p"}).verbosity == 2);
  CHECK(parse({"-v", "--", "p"}).verbosity == 1);
  CHECK_FALSE(parse({"--print-topology=no", "--", "p"}).print_topology);
}

TEST_CASE("run's command line errors", "[cli]") {
  CHECK_THROWS_AS(parse({"--bogus", "--", "p"}), CLI::ParseError);
  CHECK_THROWS_AS(parse({"--num-instances", "two", "--", "p"}), CLI::ParseError);
  CHECK_THROWS_AS(parse({"--host", "a", "--hostfile", "f", "--", "p"}), CLI::ParseError);
  // a program without `--` (here a value meant for a flag) is never started
  CHECK_THROWS_WITH(parse({"prog", "arg"}), Catch::Matchers::Contains("put the program after '--'"));
  CHECK(parse({}).program.empty());  // validate_options reports the missing program
}

TEST_CASE("topology_table: hosts, instances, replicas and devices, each spanning the row below", "[table]") {
  const auto plan = popdist::cli::plan_launch(4, 8, 2, {{"hostA", {}}, {"hostB", {}}});
  const std::string table = popdist::cli::topology_table(plan);
  INFO(table);
  std::vector<std::string> lines;
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  REQUIRE(lines.size() == 11);
  // a rectangle: bordered rows of one width; the top and bottom rules sit inside the borders
  for (std::size_t i = 1; i + 1 < lines.size(); ++i) CHECK(lines[i].size() == lines[1].size());
  CHECK(lines.front().size() + 1 == lines[1].size());
  CHECK(lines.back().size() + 1 == lines[1].size());
  auto cells_of = [](const std::string& line) {
    std::vector<std::string> cells;
    std::istringstream row(line);
    for (std::string cell; std::getline(row, cell, '|');) {
      const auto first = cell.find_first_not_of(' ');
      if (first != std::string::npos) cells.push_back(cell.substr(first, cell.find_last_not_of(' ') - first + 1));
    }
    return cells;
  };
  CHECK(cells_of(lines[1]) == std::vector<std::string>{"popdist topology"});
  CHECK(cells_of(lines[3]) == std::vector<std::string>{"hosts", "hostA", "hostB"});
  CHECK(cells_of(lines[5]) == std::vector<std::string>{"instances", "0", "1", "2", "3"});
  CHECK(cells_of(lines[7]) == std::vector<std::string>{"replicas", "0", "1", "2", "3", "4", "5", "6", "7"});
  CHECK(cells_of(lines[9]) ==
        std::vector<std::string>{"devices", "0-1", "2-3", "4-5", "6-7", "8-9", "10-11", "12-13", "14-15"});
  // host cell boundaries line up with instance and replica boundaries
  CHECK(lines[3].find('|', 13) == lines[5].find('|', lines[5].find('|', 13) + 1));
}

TEST_CASE("find_program searches PATH like execvp", "[path]") {
  CHECK(popdist::cli::path_directories("/a::/b") == std::vector<std::string>{"/a", ".", "/b"});
  CHECK(popdist::cli::find_program("sh", "/nonexistent:/bin:/usr/bin").value_or("").find("/sh") != std::string::npos);
  CHECK_FALSE(popdist::cli::find_program("sh", "/nonexistent").has_value());
  CHECK_FALSE(popdist::cli::find_program("sh", "").has_value());
  CHECK_FALSE(popdist::cli::find_program("passwd", "/etc").has_value());  // not executable
  CHECK(popdist::cli::find_program("/bin/sh", "").has_value());
}
