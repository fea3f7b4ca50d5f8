#pragma once
// Unix stream sockets and who is at their other end. A name is a path (popdist run's `stacks.sock`
// in the job directory) or, with a leading '@' as ss(8) shows them, a name in Linux's abstract
// namespace (the channel's host relays: no file to clean up, gone with the process). Both ends
// serve only their own user, and say which one came instead (SO_PEERCRED).

#include <sys/socket.h>
#include <sys/types.h>

#include <string>

#include "io/fd.hpp"

namespace popdist::cli::io {

/// Binds and listens on the Unix stream socket `name` ("@..." abstract). An invalid Fd, errno
/// saying why, when it cannot: EADDRINUSE when the name is taken, ENAMETOOLONG when it does
/// not fit a socket address.
[[nodiscard]] Fd listen_unix(const std::string& name, int backlog = SOMAXCONN);

/// A blocking connection to the Unix stream socket `name`; an invalid Fd, errno saying why (ECONNREFUSED, ENOENT: nobody listens there).
[[nodiscard]] Fd connect_unix(const std::string& name);

/// Who is at the other end of a Unix socket, as it was when it connected; -1 each when unknown.
struct PeerCredentials {
  pid_t pid = -1;
  uid_t uid = static_cast<uid_t>(-1);
};
[[nodiscard]] PeerCredentials peer_credentials(int fd);
/// The peer's uid, -1 when unknown.
[[nodiscard]] uid_t peer_uid(int fd);
/// Whether the peer runs as this process's (effective) user; false when unknown.
[[nodiscard]] bool same_user(int fd);

}  // namespace popdist::cli::io
