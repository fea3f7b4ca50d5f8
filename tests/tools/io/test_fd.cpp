// The owned descriptor and the poll loops' wake-up (io/fd.hpp, io/wake_up.hpp).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "io/fd.hpp"
#include "io/wake_up.hpp"

using popdist::cli::io::Fd;
using popdist::cli::io::WakeUp;

namespace {

bool is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

bool readable_now(int fd) {
  pollfd entry{fd, POLLIN, 0};
  return ::poll(&entry, 1, 0) == 1;
}

}  // namespace

TEST_CASE("a descriptor is closed once, by whoever holds it last, and keeps errno") {
  int ends[2];
  REQUIRE(::pipe(ends) == 0);
  ::close(ends[1]);
  Fd first(ends[0]);
  Fd second(std::move(first));
  CHECK_FALSE(first.valid());
  CHECK(is_open(ends[0]));
  Fd third;
  third = std::move(second);
  CHECK(third.get() == ends[0]);
  errno = ENAMETOOLONG;
  third.reset();
  CHECK(errno == ENAMETOOLONG);  // a failure can be reported after its descriptor closed
  CHECK_FALSE(is_open(ends[0]));
  third.reset();  // idempotent
}

TEST_CASE("a wake-up from another thread makes the loop's descriptor readable until drained") {
  WakeUp wake;
  CHECK_FALSE(readable_now(wake.fd()));
  std::thread([&] { wake.signal(), wake.signal(); }).join();
  CHECK(readable_now(wake.fd()));
  wake.drain();  // one drain for any number of signals
  CHECK_FALSE(readable_now(wake.fd()));
}
