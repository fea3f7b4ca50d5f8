// The PopRun-like box and the column table.
#include <catch2/catch.hpp>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/box_diagram.hpp"
#include "topology/text_table.hpp"

#include <algorithm>

using popdist::cli::DiagramRow;
using popdist::cli::render_box_diagram;
using popdist::cli::topology_cmd::render_text_table;

namespace {
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}
}  // namespace

TEST_CASE("the box: cells span the columns below them and every line has the same width", "[box]") {
  const std::string box = render_box_diagram(
      "job", {DiagramRow{"hosts", {{"hostA", 3}, {"hostB", 1}}}, DiagramRow{"instances", {{"0", 2}, {"1", 1}, {"2", 1}}},
              DiagramRow{"replicas", {{"0", 1}, {"1", 1}, {"2", 1}, {"3", 1}}}});
  const std::string EXPECTED_BOX =
      " ===========================================\n"
      "|                    job                    |\n"
      "|===========================================|\n"
      "| hosts     |         hostA         | hostB |\n"
      "|-----------|-------------------------------|\n"
      "| instances |       0       |   1   |   2   |\n"
      "|-----------|-------------------------------|\n"
      "| replicas  |   0   |   1   |   2   |   3   |\n"
      " -------------------------------------------\n";
  CHECK(box == EXPECTED_BOX);
  const auto lines = lines_of(box);
  REQUIRE(lines.size() == 9);
  // Top and bottom rules start with a space and stop at the inner width (no trailing space).
  for (std::size_t k = 1; k + 1 < lines.size(); ++k) CHECK(lines[k].size() == lines[1].size());
  CHECK(lines.front().size() == lines[1].size() - 1);
  CHECK(lines.back().size() == lines[1].size() - 1);
  // Column boundaries line up: the boundary after hostA's three columns is where instance 1 ends.
  const auto& hosts = lines[3];
  const auto& instances = lines[5];
  const auto& replicas = lines[7];
  CHECK(hosts.find("hostA") != std::string::npos);
  CHECK(hosts.find("hostB") != std::string::npos);
  const auto hosts_boundary = hosts.find('|', hosts.find("hostA"));
  CHECK(instances[hosts_boundary] == '|');
  CHECK(replicas[hosts_boundary] == '|');
  // Five column separators in the replicas row (title | r0 | r1 | r2 | r3 |) plus the left border.
  CHECK(std::count(replicas.begin(), replicas.end(), '|') == 6);
  CHECK(std::count(instances.begin(), instances.end(), '|') == 5);
  CHECK(std::count(hosts.begin(), hosts.end(), '|') == 4);
}

TEST_CASE("the box widens its columns for the longest text and the heading", "[box]") {
  const auto lines = lines_of(render_box_diagram(
      "a rather long heading for a tiny box", {DiagramRow{"r", {{"a long cell spanning two", 2}}},
                                               DiagramRow{"s", {{"x", 1}, {"y", 1}}}}));
  for (std::size_t k = 1; k + 1 < lines.size(); ++k) CHECK(lines[k].size() == lines[1].size());
  CHECK(lines[1].find("a rather long heading for a tiny box") != std::string::npos);
  CHECK(lines[3].find(" a long cell spanning two ") != std::string::npos);
}

TEST_CASE("the box rejects rows that do not line up", "[box]") {
  CHECK_THROWS_AS(render_box_diagram("x", {}), std::invalid_argument);
  CHECK_THROWS_AS(render_box_diagram("x", {DiagramRow{"a", {{"1", 2}}}, DiagramRow{"b", {{"1", 1}}}}),
                  std::invalid_argument);
  CHECK_THROWS_AS(render_box_diagram("x", {DiagramRow{"a", {{"1", 0}}}}), std::invalid_argument);
  CHECK_THROWS_AS(render_box_diagram("x", {DiagramRow{"a", {}}}), std::invalid_argument);
}

TEST_CASE("the column table pads every column to its widest cell", "[table]") {
  CHECK(render_text_table({"a", "bbb"}, {{"1111", "2"}, {"3"}}) ==
        "a     bbb\n"
        "----  ---\n"
        "1111  2\n"
        "3\n");
  CHECK(render_text_table({"x"}, {}, 2) == "  x\n  -\n");
}
