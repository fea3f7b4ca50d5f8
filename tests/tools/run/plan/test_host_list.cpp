// Host lists: bracket ranges (Slurm's compressed hostlist syntax), host:slots, hostfiles.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "popdist/error.hpp"
#include "run/plan/host_list.hpp"
#include "run/plan/host_source.hpp"
#include "run/plan/hostfile.hpp"

using popdist::UsageError;
using popdist::cli::expand_hostlist;
using popdist::cli::HostSpec;
using popdist::cli::parse_host_list;
using Names = std::vector<std::string>;

TEST_CASE("expand_hostlist: plain names, ranges, lists, padding", "[host_list]") {
  CHECK(expand_hostlist("a", "--host") == Names{"a"});
  CHECK(expand_hostlist("a,b.example.com,c_1", "--host") == Names{"a", "b.example.com", "c_1"});
  CHECK(expand_hostlist("node[0-2,4]", "--host") == Names{"node0", "node1", "node2", "node4"});
  CHECK(expand_hostlist("n[1-2]", "SLURM_JOB_NODELIST") == Names{"n1", "n2"});
  CHECK(expand_hostlist("node[01-04,7],gpu5", "SLURM_JOB_NODELIST") ==
        Names{"node01", "node02", "node03", "node04", "node7", "gpu5"});
  CHECK(expand_hostlist("n[08-11]", "x") == Names{"n08", "n09", "n10", "n11"});
  CHECK(expand_hostlist("n[7]", "x") == Names{"n7"});
  CHECK(expand_hostlist("rack[1-2]-n[1-2]", "x") == Names{"rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"});
  CHECK(expand_hostlist("[1-2]x", "x") == Names{"1x", "2x"});
  CHECK(expand_hostlist("n[3-3]", "x") == Names{"n3"});
  CHECK(expand_hostlist("10.0.0.[1-2]", "x") == Names{"10.0.0.1", "10.0.0.2"});
}

TEST_CASE("expand_hostlist: every malformed list is an error naming the source, value and problem", "[host_list]") {
  using Catch::Matchers::Contains;
  const std::vector<std::pair<std::string, std::string>> cases{
      {"", "empty host name"},
      {"a,,b", "empty host name"},
      {"a,", "empty host name"},
      {"node[1-2", "without a closing"},
      {"node1-2]", "without '['"},
      {"n[[1]]", "nested"},
      {"n[]", "empty brackets"},
      {"n[a-b]", "'a' in brackets is not a decimal"},
      {"n[1-]", "'' in brackets"},
      {"n[-1]", "'' in brackets"},
      {"n[3-1]", "runs backwards"},
      {"n[1,,2]", "'' in brackets"},
      {"n[0-999999999]", "more than 4096"},
      {"n[0-999]m[0-999]", "1000 x 1000 = 1000000 hosts: more than 4096"},
      {"a[0-99999]b[0-99999]", "more than 4096"},       // refused before anything is allocated
      {"n[0-3000,4000-6000]", "'4000-6000' makes the brackets name more than 4096"},  // ranges add up
      {"n[0-4095]m[0-1]", "4096 x 2 = 8192 hosts"},
      {"a b", "' ' is not allowed"},
      {"a/b", "'/' is not allowed"},
      {"n[1-2-3]", "'2-3' in brackets"},
  };
  for (const auto& [value, problem] : cases) {
    INFO(value);
    CHECK_THROWS_WITH(expand_hostlist(value, "--host"), Contains("--host '" + value + "'") && Contains(problem));
  }
}

TEST_CASE("parse_host_list: host:slots applies to each expanded name", "[host_list]") {
  CHECK(parse_host_list("a,b") == std::vector<HostSpec>{{"a", {}}, {"b", {}}});
  CHECK(parse_host_list("a:2,b:1") == std::vector<HostSpec>{{"a", 2}, {"b", 1}});
  CHECK(parse_host_list("n[1-2]:4,x") == std::vector<HostSpec>{{"n1", 4}, {"n2", 4}, {"x", {}}});
  using Catch::Matchers::Contains;
  for (const std::string bad : {"a:0", "a:", "a:x", "a:-1", "a:1x", "a:99999999999"}) {
    INFO(bad);
    CHECK_THROWS_WITH(parse_host_list(bad), Contains("must be a whole number >= 1") && Contains(bad));
  }
  CHECK_THROWS_AS(parse_host_list("a:2:3"), UsageError);
}

TEST_CASE("check_unique_hosts names the repeated host", "[host_list]") {
  CHECK_NOTHROW(popdist::cli::check_unique_hosts(parse_host_list("a,b"), "--host"));
  CHECK_THROWS_WITH(popdist::cli::check_unique_hosts(parse_host_list("n[1-2],n2"), "--host"),
                    Catch::Matchers::Contains("host 'n2' is listed more than once"));
}

TEST_CASE("parse_hostfile: Open MPI format with comments, slots and brackets", "[hostfile]") {
  std::istringstream in(
      "# cluster\n"
      "\n"
      "node1 slots=4\n"
      "  node[2-3]   slots=2 max_slots=8   # two more\n"
      "node4\n"
      "node5 count=3\n");
  CHECK(popdist::cli::parse_hostfile(in, "hosts.txt") ==
        std::vector<HostSpec>{{"node1", 4}, {"node2", 2}, {"node3", 2}, {"node4", {}}, {"node5", 3}});
}

TEST_CASE("parse_hostfile: errors name the file, the line number and the line", "[hostfile]") {
  using Catch::Matchers::Contains;
  const std::vector<std::pair<std::string, std::string>> cases{
      {"a\nb slots=0\n", "line 2 'b slots=0'"},
      {"a sockets=2\n", "unexpected 'sockets=2'"},
      {"a slots\n", "unexpected 'slots'"},
      {"a slots=x\n", "'slots=x' must be a whole number"},
      {"n[2-1]\n", "runs backwards"},
      {"# nothing\n\n", "lists no hosts"},
  };
  for (const auto& [text, problem] : cases) {
    INFO(text);
    std::istringstream in(text);
    CHECK_THROWS_WITH(popdist::cli::parse_hostfile(in, "hf"), Contains("hf") && Contains(problem));
  }
  CHECK_THROWS_WITH(popdist::cli::read_hostfile("/nonexistent/hosts"),
                    Contains("--hostfile '/nonexistent/hosts': cannot open"));
}

TEST_CASE("parse_hostfile: what it echoes is escaped and shortened, and its size is bounded", "[hostfile]") {
  using Catch::Matchers::Contains;
  std::istringstream escape("node\x1b[2J slots=2\n");
  CHECK_THROWS_WITH(popdist::cli::parse_hostfile(escape, "hf"), Contains("\\x1b[2J") && !Contains("\x1b"));
  std::istringstream huge("a " + std::string(1000000, 'x') + "\n");
  try {
    (void)popdist::cli::parse_hostfile(huge, "hf");
    FAIL("a bad line was accepted");
  } catch (const popdist::UsageError& e) {
    CHECK(std::string(e.what()).size() < 400);
  }
  std::string many;
  for (int i = 0; i < 5000; ++i) many += "n" + std::to_string(i) + "\n";
  std::istringstream too_many(many);
  CHECK_THROWS_WITH(popdist::cli::parse_hostfile(too_many, "hf"), Contains("more than 4096 hosts (at line 4097)"));
  // A symlink to /proc/self/mem: a read error, not "lists no hosts".
  CHECK_THROWS_WITH(popdist::cli::read_hostfile("/proc/self/mem"), Contains("read error after line 0"));
}

TEST_CASE("hosts_from_slurm: the allocation's nodes and their task slots", "[slurm]") {
  auto env_of = [](popdist::EnvMap vars) { return popdist::lookup_in(std::move(vars)); };
  CHECK_FALSE(popdist::cli::hosts_from_slurm(env_of({})).has_value());
  CHECK(*popdist::cli::hosts_from_slurm(env_of({{"SLURM_JOB_NODELIST", "n[1-2]"}, {"SLURM_TASKS_PER_NODE", "3,1"}})) ==
        std::vector<HostSpec>{{"n1", 3}, {"n2", 1}});
  CHECK(*popdist::cli::hosts_from_slurm(
            env_of({{"SLURM_JOB_NODELIST", "node[01-03],gpu5"}, {"SLURM_TASKS_PER_NODE", "2(x3),1"}})) ==
        std::vector<HostSpec>{{"node01", 2}, {"node02", 2}, {"node03", 2}, {"gpu5", 1}});
  CHECK(*popdist::cli::hosts_from_slurm(env_of({{"SLURM_JOB_NODELIST", "n1"}})) == std::vector<HostSpec>{{"n1", {}}});
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(
      popdist::cli::hosts_from_slurm(env_of({{"SLURM_JOB_NODELIST", "n[1-2]"}, {"SLURM_TASKS_PER_NODE", "4"}})),
      Contains("SLURM_TASKS_PER_NODE '4' describes 1 nodes") && Contains("names 2"));
  CHECK_THROWS_WITH(
      popdist::cli::hosts_from_slurm(env_of({{"SLURM_JOB_NODELIST", "n[1-2]"}, {"SLURM_TASKS_PER_NODE", "2(x"}})),
      Contains("SLURM_TASKS_PER_NODE"));
  CHECK_THROWS_WITH(popdist::cli::hosts_from_slurm(env_of({{"SLURM_JOB_NODELIST", "n[1-"}})),
                    Contains("SLURM_JOB_NODELIST 'n[1-'"));
}

TEST_CASE("select_hosts: --host, then --hostfile, then the Slurm allocation, else this machine", "[slurm]") {
  popdist::cli::RunOptions options;
  const auto slurm = popdist::lookup_in({{"SLURM_JOB_NODELIST", "n[1-2]"}});
  CHECK(popdist::cli::select_hosts(options, popdist::lookup_in({})).hosts.empty());
  const auto from_slurm = popdist::cli::select_hosts(options, slurm);
  CHECK(from_slurm.from_slurm);
  CHECK(from_slurm.source == "SLURM_JOB_NODELIST");
  CHECK(from_slurm.hosts.size() == 2);
  options.host_lists = {"a,b", "c:2"};
  const auto from_host = popdist::cli::select_hosts(options, slurm);
  CHECK_FALSE(from_host.from_slurm);
  CHECK(from_host.hosts == std::vector<HostSpec>{{"a", {}}, {"b", {}}, {"c", 2}});
}
