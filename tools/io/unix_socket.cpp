#include "io/unix_socket.hpp"

#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

namespace popdist::cli::io {
namespace {

/// The address of `name` and its length; false (errno ENAMETOOLONG) when it does not fit.
bool unix_address(const std::string& name, sockaddr_un& address, socklen_t& length) {
  address = {};
  address.sun_family = AF_UNIX;
  const bool abstract = !name.empty() && name.front() == '@';
  // A path needs its terminating NUL; an abstract name starts with one (sun_path[0] = 0) in the
  // place of its '@', and has no end mark (the length says where it ends).
  if ((abstract ? name.size() : name.size() + 1) > sizeof address.sun_path) {
    errno = ENAMETOOLONG;
    return false;
  }
  if (abstract) {
    std::memcpy(address.sun_path + 1, name.data() + 1, name.size() - 1);
    length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
  } else {
    std::memcpy(address.sun_path, name.c_str(), name.size() + 1);
    length = static_cast<socklen_t>(sizeof address);
  }
  return true;
}

}  // namespace

Fd listen_unix(const std::string& name, int backlog) {
  sockaddr_un address{};
  socklen_t length = 0;
  if (!unix_address(name, address, length)) return Fd();
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Fd();
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0 || ::listen(fd.get(), backlog) != 0)
    return Fd();  // fd closes, errno kept (Fd::reset)
  return fd;
}

Fd connect_unix(const std::string& name) {
  sockaddr_un address{};
  socklen_t length = 0;
  if (!unix_address(name, address, length)) return Fd();
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Fd();
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0) return Fd();
  return fd;
}

PeerCredentials peer_credentials(int fd) {
  ucred credentials{};
  socklen_t length = sizeof credentials;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return {};
  return {credentials.pid, credentials.uid};
}

uid_t peer_uid(int fd) { return peer_credentials(fd).uid; }

bool same_user(int fd) {
  const uid_t uid = peer_uid(fd);
  return uid != static_cast<uid_t>(-1) && uid == ::geteuid();
}

}  // namespace popdist::cli::io
