#pragma once
// A plain column table: a header, a rule, and rows with every column padded to its widest cell.

#include <string>
#include <vector>

namespace popdist::cli::topology_cmd {

/// Renders `header` and `rows` left-aligned, columns two spaces apart, each line indented by
/// `indent` spaces and ending with '\n' (no trailing spaces). Rows shorter than the header are
/// padded with empty cells.
[[nodiscard]] std::string render_text_table(const std::vector<std::string>& header,
                                            const std::vector<std::vector<std::string>>& rows, int indent = 0);

}  // namespace popdist::cli::topology_cmd
