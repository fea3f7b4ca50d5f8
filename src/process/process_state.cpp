#include "process/process_state.hpp"

namespace popdist::detail {

ProcessState& process_state() {
  // Never destroyed (see ProcessState).
  static auto* const the_state = new ProcessState();
  return *the_state;
}

RuntimeState& runtime_state() { return process_state().runtime; }

Registry& registry() { return process_state().registry; }

}  // namespace popdist::detail
