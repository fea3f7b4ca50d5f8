// Hostfiles (`popdist run --hostfile`, Open MPI's format): parse_hostfile() over fuzz bytes.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "fuzz_input.hpp"
#include "popdist/error.hpp"
#include "run/plan/hostfile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in{std::string(popdist::fuzz::as_text(data, size))};
  try {
    (void)popdist::cli::parse_hostfile(in, "fuzz.hosts");
  } catch (const popdist::UsageError&) {
  }
  return 0;
}
