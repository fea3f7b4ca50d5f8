#pragma once
// The two loops every process of a job writes around read(2), write(2) and poll(2), written once:
// a write of a whole buffer through interruptions and partial writes, never raising SIGPIPE on a
// socket (the launcher and the agents must outlive a peer that went away), and a read that never
// waits past its deadline (a stopped or stuck peer must not hold its reader).

#include <chrono>
#include <cstddef>
#include <string_view>

namespace popdist::cli::io {

/// Writes all of `bytes` to `fd` -- a socket (sent with MSG_NOSIGNAL: no SIGPIPE), a pipe or a
/// file (written: a pipe without a reader raises SIGPIPE, as write(2) does) -- resuming after
/// interruptions and partial writes, waiting while a blocking descriptor is full. False when the
/// reader went away or the write failed (errno says why; EAGAIN on a full non-blocking one).
[[nodiscard]] bool write_all(int fd, std::string_view bytes);

/// One read of at most `size` bytes into `buffer`, waiting until `deadline` for `fd` to have
/// something: the bytes read (> 0), 0 when the peer closed, or -1 with errno saying why
/// (ETIMEDOUT when the deadline passed, ECONNRESET when a socket's peer closed with our data
/// unread). Interruptions are resumed.
[[nodiscard]] long read_by(int fd, char* buffer, std::size_t size, std::chrono::steady_clock::time_point deadline);

}  // namespace popdist::cli::io
