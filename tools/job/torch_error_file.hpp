#pragma once
// torch.distributed.elastic's error file (TORCHELASTIC_ERROR_FILE): where torch's @record writes
// an instance's uncaught exception as JSON. Each instance's agent reads it on its own host and
// sends the traceback over the job's channel (agent/instance_agent.cpp); the failure report shows
// it instead of the stderr tail.

#include <string>

namespace popdist::cli {

/// The traceback (else the message) in the JSON that torch.distributed.elastic's @record writes;
/// empty when the text holds neither.
[[nodiscard]] std::string torch_error_text(const std::string& json);

}  // namespace popdist::cli
