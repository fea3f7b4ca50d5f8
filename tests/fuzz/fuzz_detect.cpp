// Environment detection: detect() over a lookup built from fuzz bytes (NAME=VALUE lines). Every
// outcome must be a Topology or a popdist::Error; a crash, a sanitizer report, another exception
// or a huge allocation is a finding.
#include <cstddef>
#include <cstdint>

#include "fuzz_input.hpp"
#include "popdist/error.hpp"
#include "popdist/topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto topology = popdist::detect(popdist::lookup_in(popdist::fuzz::environment_from(popdist::fuzz::as_text(data, size))));
    (void)popdist::describe(topology);  // every field and its provenance is read
    (void)popdist::device_id(topology);
  } catch (const popdist::Error&) {
  }
  return 0;
}
