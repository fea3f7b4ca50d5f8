// Unix sockets by path or abstract name, and who is at the other end (io/unix_socket.hpp).
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "io/unix_socket.hpp"

using namespace popdist::cli::io;

namespace {

/// A name no other test process uses at the same time.
std::string unique_name(const std::string& what) {
  return "popdist-io-test/" + what + "/" + std::to_string(::getpid());
}

}  // namespace

TEST_CASE("the peer's uid and pid are this process's over a socketpair: the same user") {
  int ends[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) == 0);
  const Fd ours(ends[0]);
  const Fd theirs(ends[1]);
  CHECK(peer_uid(ours.get()) == ::geteuid());
  CHECK(peer_credentials(ours.get()).pid == ::getpid());
  CHECK(same_user(ours.get()));
}

TEST_CASE("the peer of a descriptor that is no Unix socket is unknown, never the same user") {
  int ends[2];
  REQUIRE(::pipe(ends) == 0);
  const Fd read_end(ends[0]);
  const Fd write_end(ends[1]);
  CHECK(peer_uid(read_end.get()) == static_cast<uid_t>(-1));
  CHECK(peer_credentials(read_end.get()).pid == -1);
  CHECK_FALSE(same_user(read_end.get()));
}

TEST_CASE("an abstract name is listened on once, and the next listener is told it is taken") {
  const std::string name = "@" + unique_name("abstract");
  const Fd listener = listen_unix(name);
  REQUIRE(listener.valid());
  const Fd again = listen_unix(name);
  CHECK_FALSE(again.valid());
  CHECK(errno == EADDRINUSE);
  const Fd client = connect_unix(name);
  REQUIRE(client.valid());
  const Fd accepted(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
  REQUIRE(accepted.valid());
  CHECK(same_user(accepted.get()));
  CHECK(peer_credentials(accepted.get()).pid == ::getpid());
}

TEST_CASE("a socket at a path is reached at that path and leaves a file") {
  const auto directory = std::filesystem::temp_directory_path() / ("popdist-io-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);
  const std::string path = (directory / "test.sock").string();
  {
    const Fd listener = listen_unix(path, 8);
    REQUIRE(listener.valid());
    CHECK(std::filesystem::exists(path));
    CHECK(connect_unix(path).valid());
  }
  CHECK_FALSE(connect_unix(path).valid());  // the file is left, nobody listens
  CHECK(errno == ECONNREFUSED);
  std::filesystem::remove_all(directory);
  CHECK_FALSE(connect_unix(path).valid());
  CHECK(errno == ENOENT);
}

TEST_CASE("a name too long for a socket address is refused before any socket is made") {
  const std::string longest_path(sizeof(sockaddr_un::sun_path) - 1, 'p');
  CHECK_FALSE(listen_unix("/" + longest_path).valid());
  CHECK(errno == ENAMETOOLONG);
  CHECK_FALSE(connect_unix("/" + longest_path).valid());
  CHECK(errno == ENAMETOOLONG);
  const std::string name = "@" + unique_name("longest");
  const Fd longest_abstract = listen_unix(name + std::string(sizeof(sockaddr_un::sun_path) - name.size(), 'a'));
  CHECK(longest_abstract.valid());  // an abstract name has no terminating NUL: one byte more fits
  CHECK_FALSE(listen_unix(name + std::string(sizeof(sockaddr_un::sun_path) - name.size() + 1, 'a')).valid());
  CHECK(errno == ENAMETOOLONG);
}
