#pragma once
// An mpirun that hangs in its own teardown after its job ended, as a watch (watch.hpp): one of its
// children that has ended and stays unreaped (unreaped_children.hpp) for the limit means that its
// event loop has stopped (seen with Open MPI 4.1: PMIx's server finalize, when an instance dies
// while others start MPI). A live mpirun reaps its instances at once.

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "run/supervise/watch.hpp"

namespace popdist::cli {

/// The watch: once a child of mpirun stays unreaped for `limit`, it says so and its verdict is
/// SIGKILL at once, with the status of the instance that failed first as its agent told it
/// (`first_failure`, the one mpirun would have reported), else the lowest non-zero status among
/// mpirun's unreaped children, or 0 when all succeeded. (mpirun tears a failed job down with
/// SIGTERM and SIGKILL, 143 and 137, so the lowest is usually, but not always, the instance that
/// failed first: that one may already have been reaped.) `program` names mpirun in the message.
[[nodiscard]] Watch hung_teardown_watch(std::chrono::milliseconds limit,
                                        std::function<std::optional<int>()> first_failure, std::string program);

}  // namespace popdist::cli
