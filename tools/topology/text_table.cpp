#include "topology/text_table.hpp"

#include <algorithm>

namespace popdist::cli::topology_cmd {
namespace {

std::string render_line(const std::vector<std::string>& cells, const std::vector<std::size_t>& widths, int indent) {
  std::string line(static_cast<std::size_t>(indent), ' ');
  for (std::size_t c = 0; c < widths.size(); ++c) {
    const std::string cell = c < cells.size() ? cells[c] : std::string();
    line += cell;
    if (c + 1 < widths.size()) line += std::string(widths[c] - cell.size() + 2, ' ');
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line + '\n';
}

}  // namespace

std::string render_text_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                              int indent) {
  std::size_t columns = header.size();
  for (const auto& row : rows) columns = std::max(columns, row.size());
  std::vector<std::size_t> widths(columns, 0);
  const auto widen = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < cells.size(); ++c) widths[c] = std::max(widths[c], cells[c].size());
  };
  widen(header);
  for (const auto& row : rows) widen(row);

  std::vector<std::string> rule;
  for (std::size_t width : widths) rule.emplace_back(width, '-');
  std::string out = render_line(header, widths, indent) + render_line(rule, widths, indent);
  for (const auto& row : rows) out += render_line(row, widths, indent);
  return out;
}

}  // namespace popdist::cli::topology_cmd
