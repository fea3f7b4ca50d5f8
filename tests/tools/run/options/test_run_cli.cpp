// The command line of `popdist run` through CLI11, the topology table and PATH search.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>

#include "job/launch_plan.hpp"
#include "popdist/error.hpp"
#include "run/launch/find_program.hpp"
#include "run/options/run_command.hpp"
#include "run/plan/topology_table.hpp"

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
  CHECK(all.mpi_global_args == std::vector<std::string>{"--mca btl self"});
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

TEST_CASE("run takes PopRun's command lines", "[cli]") {
  // the program starts at the first word that is not an option; its own options stay its own
  const auto plain = parse({"--num-instances", "2", "python3", "train.py", "--num-instances", "3"});
  CHECK(plain.num_instances == 2);
  CHECK(plain.program == std::vector<std::string>{"python3", "train.py", "--num-instances", "3"});
  CHECK(parse({"prog", "--", "x"}).program == std::vector<std::string>{"prog", "--", "x"});
  CHECK(parse({"--", "-prog"}).program == std::vector<std::string>{"-prog"});
  // boolean options take PopRun's words, in any case, with a space or '='
  for (const char* yes : {"yes", "true", "on", "1", "YES", "True"}) {
    CHECK(parse({"--print-topology", yes, "prog"}).print_topology);
    CHECK(parse({std::string("--numa-aware=") + yes, "prog"}).numa_aware);
  }
  for (const char* no : {"no", "false", "off", "0", "No"}) {
    const auto options = parse({"--print-topology", no, "--numa-aware", no, "prog"});
    CHECK_FALSE(options.print_topology);
    CHECK_FALSE(options.numa_aware);
  }
  CHECK(parse({"--print-topology", "--", "prog"}).print_topology);     // bare, then '--'
  CHECK(parse({"--numa-aware", "--dry-run", "prog"}).numa_aware);      // bare, then an option
  CHECK(parse({"--print-topology=yes", "--print-topology=no", "p"}).print_topology == false);  // the last counts
  // the MPI argument options repeat and accumulate
  const auto mpi = parse({"--mpi-global-args=--tag-output", "--mpi-global-args", "--mca btl self", "--mpi-local-args",
                          "-x A", "--mpi-local-args", "-x B", "prog"});
  CHECK(mpi.mpi_global_args == std::vector<std::string>{"--tag-output", "--mca btl self"});
  CHECK(mpi.mpi_local_args == std::vector<std::string>{"-x A", "-x B"});
  // PopRun's IPU options: ignored ones are noted (test_run_line.cpp checks each), kept ones kept
  const auto ipu = parse({"--reset-partition=no", "--update-partition", "yes", "--vipu-server-timeout", "600",
                          "--executable-cache-path", "/tmp/cache", "--offline-mode=1", "--num-ilds", "2",
                          "--vipu-partition=p", "prog"});
  CHECK(ipu.notices.size() == 5);
  CHECK(ipu.executable_cache_path == "/tmp/cache");
  CHECK(ipu.num_ilds == 2);
}

TEST_CASE("run's command line errors name the option and the value", "[cli]") {
  using Catch::Matchers::Contains;
  CHECK_THROWS_AS(parse({"--bogus", "--", "p"}), CLI::ExtrasError);
  CHECK_THROWS_WITH(parse({"--num-instances", "two", "--", "p"}),
                    Contains("--num-instances") && Contains("'two' is not a whole number from 1 to 65536"));
  for (const char* number : {"0x10", "+2", " 2", "2.0", "-1", ""}) {
    CHECK_THROWS_AS(parse({"--num-replicas", number, "p"}), CLI::ValidationError);
  }
  CHECK_THROWS_WITH(parse({"--num-instances", "65537", "p"}), Contains("out of range") && Contains("1 to 65536"));
  CHECK_THROWS_WITH(parse({"--print-topology", "python3", "train.py"}),
                    Contains("--print-topology") && Contains("'python3' is not a boolean") && Contains("yes/no"));
  CHECK_THROWS_WITH(parse({"--import-config", "poprun.cfg", "p"}),
                    Contains("--import-config") && Contains("'poprun.cfg'") && Contains("configuration file"));
  CHECK_THROWS_WITH(parse({"--num-ilds=two", "p"}), Contains("--num-ilds") && Contains("'two' is not a whole number"));
  CHECK_THROWS_AS(parse({"--host", "a", "--hostfile", "/etc/hostname", "--", "p"}), CLI::ParseError);
  CHECK_THROWS_WITH(parse({"--hostfile", "/tmp", "p"}), Contains("--hostfile") && Contains("is a directory"));
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

TEST_CASE("topology_table: large jobs by ranges, a column per instance, per host or for the job", "[table]") {
  // 8 instances of 8 replicas: too many replicas for a column each, one column per instance.
  const std::string per_instance = popdist::cli::topology_table(popdist::cli::plan_launch(8, 64, 2, {}));
  INFO(per_instance);
  CHECK(per_instance.find("|   0-7   |") != std::string::npos);
  CHECK(per_instance.find("| 112-127 |") != std::string::npos);  // the devices of instance 7
  // 64 instances on 4 hosts: one column per host
  const std::vector<popdist::cli::HostSpec> four{{"a", {}}, {"b", {}}, {"c", {}}, {"d", {}}};
  const std::string per_host = popdist::cli::topology_table(popdist::cli::plan_launch(64, 64, 1, four));
  INFO(per_host);
  CHECK(per_host.find("48-63") != std::string::npos);
  // the largest job: 4096 instances of 256 replicas of 1024 devices on 4096 hosts, in one column
  std::vector<popdist::cli::HostSpec> many;
  for (int i = 0; i < 4096; ++i) many.push_back({"h" + std::to_string(i), {}});
  const std::string largest = popdist::cli::topology_table(popdist::cli::plan_launch(4096, 1 << 20, 1024, many));
  INFO(largest);
  CHECK(largest.find("4096 hosts") != std::string::npos);
  CHECK(largest.find("0-1048575") != std::string::npos);
  CHECK(largest.find("0-1073741823") != std::string::npos);  // 2^30 devices, no overflow
  CHECK(largest.size() < 2000);
}

TEST_CASE("find_program searches PATH like execvp", "[path]") {
  CHECK(popdist::cli::path_directories("/a::/b") == std::vector<std::string>{"/a", ".", "/b"});
  CHECK(popdist::cli::find_program("sh", "/nonexistent:/bin:/usr/bin").value_or("").find("/sh") != std::string::npos);
  CHECK_FALSE(popdist::cli::find_program("sh", "/nonexistent").has_value());
  CHECK_FALSE(popdist::cli::find_program("sh", "").has_value());
  CHECK_FALSE(popdist::cli::find_program("passwd", "/etc").has_value());  // not executable
  CHECK(popdist::cli::find_program("/bin/sh", "").has_value());
}
