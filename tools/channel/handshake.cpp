#include "channel/handshake.hpp"

#include "io/read_write.hpp"

namespace popdist::cli::channel {
namespace {

// The Welcome, read no further than its frame: the accepting end sends nothing else before our
// Proof, so anything more is a stranger's.
std::optional<Welcome> await_welcome(int fd, std::chrono::steady_clock::time_point deadline) {
  FrameDecoder decoder;
  char chunk[256];
  for (;;) {
    const long got = io::read_by(fd, chunk, sizeof chunk, deadline);
    if (got <= 0) return std::nullopt;
    decoder.feed(std::string_view(chunk, static_cast<std::size_t>(got)));
    try {
      auto message = decoder.next();
      if (!message) continue;
      auto* welcome = std::get_if<Welcome>(&*message);
      if (!welcome || decoder.buffered() != 0) return std::nullopt;
      return std::move(*welcome);
    } catch (const FrameError&) {
      return std::nullopt;
    }
  }
}

}  // namespace

std::optional<Session> shake_hands(int fd, std::string_view job_key, std::string host, Role role,
                                   std::vector<std::int32_t> instances,
                                   std::chrono::steady_clock::time_point deadline) {
  Session session(job_key);
  if (!io::write_all(fd, session.hello(std::move(host), role, std::move(instances)))) return std::nullopt;
  const auto welcome = await_welcome(fd, deadline);
  if (!welcome) return std::nullopt;
  if (!io::write_all(fd, session.prove(*welcome))) return std::nullopt;
  return session;
}

}  // namespace popdist::cli::channel
