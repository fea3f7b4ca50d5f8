#pragma once
// The number of cores this process may use, counted as Open MPI counts slots on a host it is not
// told about: physical cores (not hardware threads) in our CPU affinity mask.

namespace popdist::cli {

/// Cores in the affinity mask (distinct package/core pairs from /sys); falls back to the number of
/// hardware threads when the topology files are unreadable. At least 1.
[[nodiscard]] int local_cores();

}  // namespace popdist::cli
