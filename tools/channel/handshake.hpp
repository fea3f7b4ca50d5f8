#pragma once
// The connecting end's handshake on a blocking socket (a relay to popdist run, an agent to its
// host's relay): Hello with a fresh nonce, the Welcome awaited and its proof checked, the Proof
// sent. See session.hpp for what is proven and how.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "channel/session.hpp"

namespace popdist::cli::channel {

/// Shakes hands on `fd` for the job of `job_key`: the session, established, or nullopt when the
/// peer closed, sent anything but one Welcome, or `deadline` passed. Throws HandshakeError when the
/// Welcome does not prove the job's key (a stranger in the peer's place).
[[nodiscard]] std::optional<Session> shake_hands(int fd, std::string_view job_key, std::string host, Role role,
                                                 std::vector<std::int32_t> instances,
                                                 std::chrono::steady_clock::time_point deadline);

}  // namespace popdist::cli::channel
