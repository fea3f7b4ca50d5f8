#pragma once
/// @file text_input.hpp
/// Reading the small text files a user hands to popdist (`--env-file`, `--hostfile`) with bounds,
/// so that a hostile or mistaken input (a sparse 8 GB file, `/dev/zero` on standard input, a line
/// of 10 MB, a symlink to `/proc/self/mem`) costs neither memory nor time and ends in an error
/// that says what was wrong, instead of gigabytes read into one std::string.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace popdist {

/// The longest line accepted: Linux's MAX_ARG_STRLEN (32 pages of 4 KiB), the longest
/// NAME=VALUE string a process environment can hold, so no real environment line is refused.
inline constexpr std::size_t max_input_line_bytes = 131072;

/// The largest input accepted: 8 MiB, four times Linux's default ARG_MAX (which bounds a whole
/// environment) and far above any hostfile of popdist run's 4096 hosts.
inline constexpr std::uintmax_t max_input_file_bytes = std::uintmax_t{8} << 20;

/// Calls `on_line(number, line)` for each line of `in` (numbered from 1, without the '\n').
/// Throws UsageError naming `source` when a line exceeds max_input_line_bytes, when the input
/// exceeds max_input_file_bytes (checked while reading, so standard input is bounded too), or
/// when reading fails (with the system's reason).
void for_each_input_line(std::istream& in, const std::string& source,
                         const std::function<void(int number, std::string_view line)>& on_line);

/// Refuses, before opening it, a path that is not a regular file (a directory, fifo, socket or
/// device: a fifo with no writer would block) or that is larger than max_input_file_bytes; the
/// UsageError names `what` (e.g. "environment file"), the path and what it is or its size.
void check_input_file(const std::string& path, std::string_view what);

}  // namespace popdist
