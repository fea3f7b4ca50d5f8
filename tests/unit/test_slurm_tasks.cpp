// Slurm's compressed tasks-per-node syntax: one case per well-formed and per malformed list,
// plus a property check against a plain expansion.

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "popdist/slurm_tasks.hpp"
#include "popdist/error.hpp"
#include "table_case.hpp"

namespace popdist::testing {
namespace {

using popdist::SlurmTasksPerNode;

struct WellFormed {
  std::string text;
  std::vector<int> per_node;  ///< the expansion
};

const std::vector<WellFormed> kWellFormed = {
    {"1", {1}},
    {"4", {4}},
    {"3,1", {3, 1}},  // srun -N2 -n4 (captured)
    {"2(x2)", {2, 2}},  // srun -N2 -n4 --ntasks-per-node=2 (captured)
    {"1(x2)", {1, 1}},  // mpirun's daemon step inside salloc (captured)
    {"2(x3),1", {2, 2, 2, 1}},  // design.md §3.2's example
    {"3,2(x5)", {3, 2, 2, 2, 2, 2}},  // HPX's example
    {"1,2(x2),3,4(x1)", {1, 2, 2, 3, 4}},
    {"16(x1)", {16}},
    {"010", {10}},
};

struct Malformed {
  std::string name;
  std::string text;
  std::string fragment;
};

const std::vector<Malformed> kMalformed = {
    {"empty", "", "is empty"},
    {"empty item in the middle", "2,,1", "item '' is empty"},
    {"leading comma", ",1", "item '' is empty"},
    {"trailing comma", "1,", "item '' is empty"},
    {"letters", "a", "bad task count 'a'"},
    {"zero tasks", "0", "bad task count '0'"},
    {"negative tasks", "-1", "bad task count '-1'"},
    {"zero repeat", "2(x0)", "bad repeat '0'"},
    {"negative repeat", "2(x-1)", "bad repeat '-1'"},
    {"unclosed repeat", "2(x3", "malformed repeat"},
    {"repeat without x", "2(3)", "malformed repeat"},
    {"repeat without count", "(x2)", "bad task count ''"},
    {"empty repeat", "2(x)", "malformed repeat"},
    {"garbage after repeat", "2(x3)x", "malformed repeat"},
    {"space before repeat", "2 (x3)", "bad task count '2 '"},
    {"space after comma", "3, 1", "bad task count ' 1'"},
    {"semicolon separator", "3;1", "bad task count '3;1'"},
    {"count overflow", "99999999999", "bad task count '99999999999'"},
    {"repeat overflow", "1(x99999999999)", "bad repeat '99999999999'"},
    {"nested repeat", "2(x3(x2))", "bad repeat"},
};

/// Test names avoid ',' (Catch2's test-spec "or").
std::string spec_safe(std::string text) {
  for (auto& c : text) {
    if (c == ',') c = '+';
  }
  return text;
}

const bool registered = [] {
  for (const auto& row : kWellFormed) {
    register_case("slurm_tasks.parses " + spec_safe(row.text), "[slurm_tasks]", [row] {
      const SlurmTasksPerNode tasks("SLURM_STEP_TASKS_PER_NODE", row.text);
      std::int64_t total = 0;
      for (const int count : row.per_node) total += count;
      CHECK(tasks.num_nodes() == static_cast<std::int64_t>(row.per_node.size()));
      CHECK(tasks.num_tasks() == total);
      for (std::size_t node = 0; node < row.per_node.size(); ++node) {
        INFO("node " << node);
        CHECK(tasks.tasks_on_node(static_cast<std::int64_t>(node)) == row.per_node[node]);
      }
      CHECK_THROWS_AS(tasks.tasks_on_node(static_cast<std::int64_t>(row.per_node.size())), EnvironmentError);
      CHECK_THROWS_AS(tasks.tasks_on_node(-1), EnvironmentError);
    }, __FILE__, __LINE__);
  }
  for (const auto& row : kMalformed) {
    register_case("slurm_tasks.rejects " + row.name, "[slurm_tasks]", [row] {
      try {
        const SlurmTasksPerNode tasks("SLURM_STEP_TASKS_PER_NODE", row.text);
        FAIL("accepted '" << row.text << "' as " << tasks.num_nodes() << " nodes");
      } catch (const EnvironmentError& error) {
        const std::string message = error.what();
        INFO(message);
        CHECK(message.find("SLURM_STEP_TASKS_PER_NODE='" + row.text + "'") != std::string::npos);
        CHECK(message.find(row.fragment) != std::string::npos);
        CHECK(message.find("expected") != std::string::npos);
        CHECK(message.find("2(x3),1") != std::string::npos);  // the expected form, by example
      }
    }, __FILE__, __LINE__);
  }
  return true;
}();

}  // namespace

TEST_CASE("slurm_tasks.out-of-range node names the variable, its value and the valid range", "[slurm_tasks]") {
  const SlurmTasksPerNode tasks("SLURM_STEP_TASKS_PER_NODE", "2(x3),1");
  CHECK_THROWS_WITH(tasks.tasks_on_node(4), Catch::Contains("SLURM_STEP_TASKS_PER_NODE='2(x3),1'") &&
                                                Catch::Contains("4 node(s)") && Catch::Contains("0..3"));
}

TEST_CASE("slurm_tasks.large compressed lists stay compressed", "[slurm_tasks]") {
  const SlurmTasksPerNode tasks("SLURM_STEP_TASKS_PER_NODE", "8(x8192),4(x2147483647)");
  CHECK(tasks.runs().size() == 2);
  CHECK(tasks.num_nodes() == 8192 + std::int64_t{2147483647});
  CHECK(tasks.num_tasks() == 8 * 8192 + 4 * std::int64_t{2147483647});
  CHECK(tasks.tasks_on_node(8191) == 8);
  CHECK(tasks.tasks_on_node(8192) == 4);
  CHECK(tasks.tasks_on_node(8192 + std::int64_t{2147483646}) == 4);
}

TEST_CASE("slurm_tasks.random lists match their expansion", "[slurm_tasks][property]") {
  std::mt19937 random(20261121);
  for (int trial = 0; trial < 500; ++trial) {
    std::string text;
    std::vector<int> expansion;
    const int items = 1 + static_cast<int>(random() % 6);
    for (int item = 0; item < items; ++item) {
      const int count = 1 + static_cast<int>(random() % 9);
      const int repeat = 1 + static_cast<int>(random() % 4);
      if (!text.empty()) text += ",";
      // A repeat of 1 is written both ways by Slurm versions; exercise both.
      text += repeat == 1 && random() % 2 == 0 ? std::to_string(count)
                                               : std::to_string(count) + "(x" + std::to_string(repeat) + ")";
      expansion.insert(expansion.end(), static_cast<std::size_t>(repeat), count);
    }
    INFO(text);
    const SlurmTasksPerNode tasks("SLURM_STEP_TASKS_PER_NODE", text);
    REQUIRE(tasks.num_nodes() == static_cast<std::int64_t>(expansion.size()));
    for (std::size_t node = 0; node < expansion.size(); ++node) {
      REQUIRE(tasks.tasks_on_node(static_cast<std::int64_t>(node)) == expansion[node]);
    }
  }
}

}  // namespace popdist::testing
