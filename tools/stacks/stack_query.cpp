#include "stacks/stack_query.hpp"

#include <fmt/format.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <thread>

namespace popdist::cli {
namespace {

constexpr std::size_t kMaxQuestion = 32;
constexpr auto kQuestionDeadline = std::chrono::seconds(2);
constexpr auto kLongestWait = std::chrono::minutes(10);
// popdist run gathers for the wait and a little more (the agents' dumps in flight) before it answers.
constexpr auto kAnswerMargin = std::chrono::seconds(30);

/// A Unix stream socket's address at `path`; false when the path does not fit.
bool unix_address(const std::string& path, sockaddr_un& address) {
  address = {};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) return false;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  return true;
}

bool send_all(int fd, const std::string& text) {
  for (std::size_t sent = 0; sent < text.size();) {
    const ssize_t n = ::send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

/// The question's wait in ms; nullopt for anything else than a line of digits in time.
std::optional<std::chrono::milliseconds> read_question(int fd) {
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + kQuestionDeadline;
  while (line.size() <= kMaxQuestion && line.find('\n') == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd readable{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&readable, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
    char buffer[kMaxQuestion];
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return std::nullopt;
    line.append(buffer, static_cast<std::size_t>(n));
  }
  const auto end = line.find('\n');
  if (end == std::string::npos || end == 0 || end > 9) return std::nullopt;
  for (std::size_t i = 0; i < end; ++i) {
    if (line[i] < '0' || line[i] > '9') return std::nullopt;
  }
  return std::min<std::chrono::milliseconds>(std::chrono::milliseconds(std::stoll(line.substr(0, end))), kLongestWait);
}

/// What popdist run answers, until it closes or `deadline`; empty when the question was not sent.
std::string read_answer(int fd, std::chrono::steady_clock::time_point deadline, bool asked) {
  std::string answer;
  char buffer[65536];
  while (asked) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd readable{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&readable, 1, static_cast<int>(left.count())) == 0) break;
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    answer.append(buffer, static_cast<std::size_t>(n));
  }
  return answer;
}

bool same_user(int fd) {
  ucred peer{};
  socklen_t size = sizeof peer;
  return ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) == 0 && peer.uid == ::geteuid();
}

}  // namespace

std::string stack_query_socket(const std::string& job_dir) { return job_dir + "/stacks.sock"; }

class StackQueryService::Loop {
 public:
  Loop(const std::string& job_dir, Answer answer) : path_(stack_query_socket(job_dir)), answer_(std::move(answer)) {
    sockaddr_un address{};
    if (!unix_address(path_, address)) {
      fmt::print(stderr, "popdist run: the job directory's path is too long for a Unix socket ({}): popdist stacks "
                         "cannot ask this job\n", path_);
      return;
    }
    listener_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener_ < 0 || ::pipe2(stop_, O_CLOEXEC) != 0 ||
        ::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(listener_, 8) != 0) {
      fmt::print(stderr, "popdist run: cannot listen at {}: {}: popdist stacks cannot ask this job\n", path_,
                 std::strerror(errno));
      return;
    }
    thread_ = std::thread([this] { serve(); });
  }
  ~Loop() {
    if (thread_.joinable()) {
      [[maybe_unused]] const auto written = ::write(stop_[1], "x", 1);
      thread_.join();
    }
    for (const int fd : {listener_, stop_[0], stop_[1]}) {
      if (fd >= 0) ::close(fd);
    }
    ::unlink(path_.c_str());
  }
  Loop(const Loop&) = delete;
  Loop& operator=(const Loop&) = delete;

 private:
  void serve() {
    for (;;) {
      pollfd fds[2] = {{listener_, POLLIN, 0}, {stop_[0], POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
      if (fds[1].revents != 0) return;
      if ((fds[0].revents & POLLIN) == 0) continue;
      const int peer = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (peer < 0) continue;
      const auto wait = same_user(peer) ? read_question(peer) : std::nullopt;
      send_all(peer, wait ? answer_(*wait) : std::string("popdist run: expected one line: the wait in ms\n"));
      ::close(peer);
    }
  }

  std::string path_;
  Answer answer_;
  int listener_ = -1;
  int stop_[2] = {-1, -1};
  std::thread thread_;
};

StackQueryService::StackQueryService(const std::string& job_dir, Answer answer)
    : loop_(std::make_unique<Loop>(job_dir, std::move(answer))) {}
StackQueryService::~StackQueryService() = default;

std::string ask_for_stacks(const std::string& job_dir, std::chrono::milliseconds wait) {
  const auto path = stack_query_socket(job_dir);
  sockaddr_un address{};
  if (!unix_address(path, address)) throw std::runtime_error(fmt::format("{}: too long for a Unix socket", path));
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    throw std::runtime_error(fmt::format("cannot reach popdist run at {}: {}", path, why));
  }
  // Bounded: a popdist run that is stopped (Ctrl-Z) or stuck must not hold `popdist stacks` forever.
  const auto answer = read_answer(fd, std::chrono::steady_clock::now() + wait + kAnswerMargin,
                                  send_all(fd, fmt::format("{}\n", wait.count())));
  ::close(fd);
  if (answer.empty()) {
    throw std::runtime_error(fmt::format("popdist run at {} gave no answer within {} s", path,
                                         std::chrono::duration_cast<std::chrono::seconds>(wait + kAnswerMargin).count()));
  }
  return answer;
}

}  // namespace popdist::cli
