#pragma once
// Finding a program on PATH the way execvp would, but before anything starts, so that a missing
// mpirun is a clear error that names the directories searched.

#include <optional>
#include <string>
#include <vector>

namespace popdist::cli {

/// The directories of a PATH value, in order (an empty entry means the current directory).
[[nodiscard]] std::vector<std::string> path_directories(const std::string& path);

/// The first executable regular file `name` in the directories of `path`, or std::nullopt.
/// A name containing '/' is checked as given.
[[nodiscard]] std::optional<std::string> find_program(const std::string& name, const std::string& path);

}  // namespace popdist::cli
