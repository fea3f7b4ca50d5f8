#pragma once
// PopRun's --print-topology picture: a box with one row per level (hosts, instances, replicas,
// devices), where each cell spans the cells of the level below it that it contains.
//
//    ===============================
//   |        popdist topology       |
//   |===============================|
//   | hosts     |   host 0          |
//   |-----------|-------------------|
//   | instances |   0     |    1    |
//   |-----------|-------------------|
//   | replicas  | 0  | 1  | 2  | 3  |
//    -------------------------------

#include <cstdint>
#include <string>
#include <vector>

namespace popdist::cli {

/// The most columns a box has before it stops fitting a terminal: callers group larger jobs into
/// ranges (one column per instance or per host) instead of listing every replica.
inline constexpr int kMaxBoxColumns = 32;

/// "first" or "first-last" for `count` consecutive indices starting at `first` (64-bit: a range
/// of devices may end past INT_MAX in a caller's arithmetic before it is checked).
[[nodiscard]] std::string index_range(std::int64_t first, std::int64_t count);

/// One cell: its text and how many columns of the finest level it spans (>= 1).
struct DiagramCell {
  std::string text;
  int span = 1;
};

/// One level: its title and its cells; every row's spans add up to the same number of columns.
struct DiagramRow {
  std::string title;
  std::vector<DiagramCell> cells;
};

/// Renders the box (lines end with '\n'); every column gets the same width, wide enough for
/// every cell's text. Throws std::invalid_argument when the rows' spans do not add up alike.
[[nodiscard]] std::string render_box_diagram(const std::string& heading, const std::vector<DiagramRow>& rows);

}  // namespace popdist::cli
