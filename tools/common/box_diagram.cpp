#include "common/box_diagram.hpp"

#include <algorithm>
#include <stdexcept>

namespace popdist::cli {
namespace {

std::string centred(const std::string& text, std::size_t width) {
  if (text.size() >= width) return text;
  const std::size_t left = (width - text.size()) / 2;
  return std::string(left, ' ') + text + std::string(width - text.size() - left, ' ');
}

std::string padded_right(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

}  // namespace

std::string index_range(std::int64_t first, std::int64_t count) {
  return count == 1 ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(first + count - 1);
}

std::string render_box_diagram(const std::string& heading, const std::vector<DiagramRow>& rows) {
  if (rows.empty()) throw std::invalid_argument("render_box_diagram: no rows");
  long long columns = -1;
  std::size_t title_width = 0;
  for (const DiagramRow& row : rows) {
    long long sum = 0;
    for (const DiagramCell& cell : row.cells) {
      if (cell.span < 1) throw std::invalid_argument("render_box_diagram: a cell of row '" + row.title + "' spans < 1 column");
      sum += cell.span;
    }
    if (sum == 0) throw std::invalid_argument("render_box_diagram: row '" + row.title + "' is empty");
    if (columns >= 0 && sum != columns) {
      throw std::invalid_argument("render_box_diagram: row '" + row.title + "' spans " + std::to_string(sum) +
                                  " columns, the rows above " + std::to_string(columns));
    }
    columns = sum;
    title_width = std::max(title_width, row.title.size());
  }

  // A cell spanning k columns is k x column_width wide plus the k - 1 separators it swallows;
  // it needs its text plus a space either side.
  std::size_t column_width = 1;
  for (const DiagramRow& row : rows) {
    for (const DiagramCell& cell : row.cells) {
      const auto span = static_cast<std::size_t>(cell.span);
      const std::size_t needed = cell.text.size() + 2;
      const std::size_t available = span * column_width + (span - 1);
      if (needed > available) {
        const std::size_t without_separators = needed - (span - 1);
        column_width = std::max(column_width, (without_separators + span - 1) / span);  // rounded up
      }
    }
  }
  const std::size_t title_cell = title_width + 2;
  const auto body_width_for = [&](std::size_t width) {
    return static_cast<std::size_t>(columns) * width + static_cast<std::size_t>(columns - 1);
  };
  while (title_cell + 1 + body_width_for(column_width) < heading.size() + 2) ++column_width;  // the heading fits too
  const std::size_t body_width = body_width_for(column_width);
  const std::size_t inner_width = title_cell + 1 + body_width;

  std::string out;
  out += ' ' + std::string(inner_width, '=') + "\n";
  out += '|' + centred(heading, inner_width) + "|\n";
  out += '|' + std::string(inner_width, '=') + "|\n";
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (r > 0) out += '|' + std::string(title_cell, '-') + '|' + std::string(body_width, '-') + "|\n";
    out += "| " + padded_right(rows[r].title, title_width) + " |";
    for (const DiagramCell& cell : rows[r].cells) {
      const auto span = static_cast<std::size_t>(cell.span);
      out += centred(cell.text, span * column_width + (span - 1)) + '|';
    }
    out += '\n';
  }
  out += ' ' + std::string(inner_width, '-') + "\n";
  return out;
}

}  // namespace popdist::cli
