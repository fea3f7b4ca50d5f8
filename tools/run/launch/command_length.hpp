#pragma once
// Linux refuses an execve whose arguments and environment together exceed ARG_MAX (E2BIG, "Argument
// list too long"), or any one string longer than MAX_ARG_STRLEN. popdist run's command repeats the
// program and popdist's variables once per instance, so a big job with long program arguments
// crosses the line; checked before mpirun starts (and by --dry-run), naming what to change.

#include <cstddef>
#include <string>
#include <vector>

namespace popdist::cli {

/// The longest single string execve takes (Linux's MAX_ARG_STRLEN, 32 pages of 4 KiB).
inline constexpr std::size_t kMaxExecStringBytes = 131072;

/// What execve counts for a set of strings: each one's bytes, its NUL and its pointer.
[[nodiscard]] std::size_t exec_bytes(const std::vector<std::string>& strings);

/// Throws UsageError when `argv` plus an environment of `environment_bytes` (as exec_bytes counts
/// it) exceeds `limit` bytes, or one word exceeds kMaxExecStringBytes. `num_instances` and
/// `program` explain the size in the message (each instance's app context repeats the program).
void check_command_length(const std::vector<std::string>& argv, std::size_t environment_bytes, std::size_t limit,
                          int num_instances, const std::vector<std::string>& program);

/// This process's environment as exec_bytes counts it (mpirun inherits it).
[[nodiscard]] std::size_t current_environment_bytes();

/// The system's ARG_MAX (sysconf(_SC_ARG_MAX): a quarter of the stack limit on Linux).
[[nodiscard]] std::size_t exec_size_limit();

}  // namespace popdist::cli
