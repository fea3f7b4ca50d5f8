#pragma once
// Hostfiles in Open MPI's format, which also covers PopRun's "one host per line":
//     # a comment
//     node1 slots=4
//     node[2-3] slots=2 max_slots=8   # brackets expand as in --host
//     node4
// Pure parsing of a stream; read_hostfile() adds the file access.

#include <iosfwd>
#include <string>
#include <vector>

#include "run/plan/host_list.hpp"

namespace popdist::cli {

/// Parses hostfile lines; `source` names the file in errors. Blank lines and `#` comments are
/// ignored; each line is a host (or a bracket hostlist) optionally followed by `slots=N`,
/// `max_slots=N` (accepted and ignored: Open MPI's cap, not a placement) or `count=N` (a synonym
/// of slots). Anything else throws UsageError naming source, line number and line.
[[nodiscard]] std::vector<HostSpec> parse_hostfile(std::istream& in, const std::string& source);

/// parse_hostfile() on a file; an unreadable file throws UsageError naming the path.
[[nodiscard]] std::vector<HostSpec> read_hostfile(const std::string& path);

}  // namespace popdist::cli
