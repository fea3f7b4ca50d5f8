// Whole writes and reads with a deadline (io/read_write.hpp): a write larger than a socket's
// buffer arrives whole, a reader that went away is a false (never a SIGPIPE on a socket), and a
// read never waits past its deadline.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

#include "io/fd.hpp"
#include "io/read_write.hpp"

using namespace popdist::cli::io;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

struct SocketPair {
  SocketPair() {
    int ends[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) == 0);
    ours = Fd(ends[0]), theirs = Fd(ends[1]);
  }
  Fd ours;
  Fd theirs;
};

/// Everything from `fd` until its writer closes, read in small pieces with pauses (a slow reader).
std::string read_slowly(int fd) {
  std::string all;
  char chunk[4096];
  for (;;) {
    const long got = read_by(fd, chunk, sizeof chunk, Clock::now() + 10s);
    if (got <= 0) return all;
    all.append(chunk, static_cast<std::size_t>(got));
    if (all.size() % 64 == 0) std::this_thread::sleep_for(1ms);
  }
}

}  // namespace

TEST_CASE("write_all delivers a buffer many times a socket's capacity, whole, while the reader lags") {
  SocketPair pair;
  int small = 4096;
  ::setsockopt(pair.ours.get(), SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
  std::string payload(1 << 20, '\0');
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(i * 7 + i / 4096);
  std::string received;
  std::thread reader([&] { received = read_slowly(pair.theirs.get()); });
  CHECK(write_all(pair.ours.get(), payload));
  pair.ours.reset();
  reader.join();
  CHECK(received.size() == payload.size());
  CHECK(received == payload);
}

TEST_CASE("write_all to a socket whose reader went away is false, not a SIGPIPE") {
  SocketPair pair;
  pair.theirs.reset();
  CHECK_FALSE(write_all(pair.ours.get(), std::string(1 << 16, 'x')));
  CHECK(errno == EPIPE);
}

TEST_CASE("write_all writes to a pipe too, and an empty buffer is written at once") {
  int ends[2];
  REQUIRE(::pipe(ends) == 0);
  Fd read_end(ends[0]);
  Fd write_end(ends[1]);
  CHECK(write_all(write_end.get(), "line one\nline two\n"));
  CHECK(write_all(write_end.get(), ""));
  write_end.reset();
  char buffer[64];
  const long got = read_by(read_end.get(), buffer, sizeof buffer, Clock::now() + 1s);
  CHECK(std::string(buffer, static_cast<std::size_t>(got > 0 ? got : 0)) == "line one\nline two\n");
  CHECK(read_by(read_end.get(), buffer, sizeof buffer, Clock::now() + 1s) == 0);  // the writer closed
}

TEST_CASE("read_by waits for data until its deadline, and no longer") {
  SocketPair pair;
  char buffer[16];
  const auto start = Clock::now();
  CHECK(read_by(pair.ours.get(), buffer, sizeof buffer, start + 200ms) == -1);
  CHECK(errno == ETIMEDOUT);
  CHECK(Clock::now() - start >= 200ms);
  CHECK(Clock::now() - start < 2s);
  CHECK(read_by(pair.ours.get(), buffer, sizeof buffer, start - 1s) == -1);  // past already: no wait
  CHECK(errno == ETIMEDOUT);
  std::thread writer([&] {
    std::this_thread::sleep_for(50ms);
    (void)write_all(pair.theirs.get(), "late");
  });
  CHECK(read_by(pair.ours.get(), buffer, sizeof buffer, Clock::now() + 5s) == 4);
  writer.join();
  CHECK(std::string(buffer, 4) == "late");
}
