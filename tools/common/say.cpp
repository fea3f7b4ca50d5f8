#include "common/say.hpp"

#include <unistd.h>

#include <cstdio>
#include <string>

namespace popdist::cli {

void say(std::string_view message) {
  std::string line = "popdist run: ";
  line.append(message);
  line += '\n';
  // One write(2) of the whole line: stdio may split a long line into several writes.
  std::fflush(stderr);
  (void)!::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace popdist::cli
