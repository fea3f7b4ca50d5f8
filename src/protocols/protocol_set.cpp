#include "protocols/protocol_set.hpp"

#include <fmt/format.h>

#include "popdist/error.hpp"
#include "protocols/instance_sets.hpp"

namespace popdist::detail {

void throw_abandoned(const ProtocolSet& set, const char* function) {
  throw UsageError(fmt::format("{}: the communicator over {} ('{}') was abandoned after a timed-out synchronize ({}); "
                               "its members are out of step, so it cannot be used again in this job",
                               function, format_set(set.members), set.name, set.abandoned_reason));
}

}  // namespace popdist::detail
