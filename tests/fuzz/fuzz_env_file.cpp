// The env-file reader (`popdist topology --env-file`): parse_env_file() over fuzz bytes. A
// well-formed file gives a map, anything else a UsageError naming the line.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "fuzz_input.hpp"
#include "popdist/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in{std::string(popdist::fuzz::as_text(data, size))};
  try {
    (void)popdist::parse_env_file(in, "fuzz.env");
  } catch (const popdist::UsageError&) {
  }
  return 0;
}
