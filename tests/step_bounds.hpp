// The tests' own count of a protocol's steps, which their bounds on messages are written in (not
// the library's count: a test that used the library's would agree with any mistake in it).
#pragma once

#include <cstddef>

namespace popdist_test {

/// ceil(log2(count)): the most steps of a recursive-doubling exchange over `count` members.
inline std::size_t ceil_log2(std::size_t count) {
  std::size_t steps = 0;
  for (std::size_t reach = 1; reach < count; reach *= 2) ++steps;
  return steps;
}

}  // namespace popdist_test
