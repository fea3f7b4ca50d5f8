#include "stacks/stack_query.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "common/say.hpp"
#include "io/fd.hpp"
#include "io/read_write.hpp"
#include "io/unix_socket.hpp"
#include "io/wake_up.hpp"

namespace popdist::cli {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kMaxQuestion = 32;
constexpr auto kQuestionDeadline = std::chrono::seconds(2);
constexpr auto kLongestWait = std::chrono::minutes(10);
// popdist run gathers for the wait and a little more (the agents' dumps in flight) before it answers.
constexpr auto kAnswerMargin = std::chrono::seconds(30);

/// The question's wait in ms; nullopt for anything else than a line of digits in time.
std::optional<std::chrono::milliseconds> read_question(int fd) {
  std::string line;
  const auto deadline = Clock::now() + kQuestionDeadline;
  while (line.size() <= kMaxQuestion && line.find('\n') == std::string::npos) {
    char buffer[kMaxQuestion];
    const long n = io::read_by(fd, buffer, sizeof buffer, deadline);
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

/// What popdist run answers, until it closes or `deadline`.
std::string read_answer(int fd, Clock::time_point deadline) {
  std::string answer;
  char buffer[65536];
  for (;;) {
    const long n = io::read_by(fd, buffer, sizeof buffer, deadline);
    if (n <= 0) return answer;
    answer.append(buffer, static_cast<std::size_t>(n));
  }
}

}  // namespace

std::string stack_query_socket(const std::string& job_dir) { return job_dir + "/stacks.sock"; }

class StackQueryService::Loop {
 public:
  Loop(const std::string& job_dir, Answer answer) : path_(stack_query_socket(job_dir)), answer_(std::move(answer)) {
    listener_ = io::listen_unix(path_, 8);
    if (!listener_.valid()) {
      say(errno == ENAMETOOLONG ? fmt::format("the job directory's path is too long for a Unix socket ({}): popdist "
                                              "stacks cannot ask this job", path_)
                                : fmt::format("cannot listen at {}: {}: popdist stacks cannot ask this job", path_,
                                              std::strerror(errno)));
      return;
    }
    try {
      stop_.emplace();
    } catch (const std::system_error& e) {
      say(fmt::format("cannot serve {} ({}): popdist stacks cannot ask this job", path_, e.what()));
      return;
    }
    thread_ = std::thread([this] { serve(); });
  }
  ~Loop() {
    if (thread_.joinable()) {
      stop_->signal();
      thread_.join();
    }
    if (listener_.valid()) ::unlink(path_.c_str());  // ours only: a file that was there stays
  }
  Loop(const Loop&) = delete;
  Loop& operator=(const Loop&) = delete;

 private:
  void serve() {
    for (;;) {
      pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {stop_->fd(), POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
      if (fds[1].revents != 0) return;
      if ((fds[0].revents & POLLIN) == 0) continue;
      const io::Fd peer(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!peer.valid()) continue;
      const auto wait = io::same_user(peer.get()) ? read_question(peer.get()) : std::nullopt;
      (void)io::write_all(peer.get(), wait ? answer_(*wait) : std::string("popdist run: expected one line: the wait in ms\n"));
    }
  }

  std::string path_;
  Answer answer_;
  io::Fd listener_;
  std::optional<io::WakeUp> stop_;
  std::thread thread_;
};

StackQueryService::StackQueryService(const std::string& job_dir, Answer answer)
    : loop_(std::make_unique<Loop>(job_dir, std::move(answer))) {}
StackQueryService::~StackQueryService() = default;

std::string ask_for_stacks(const std::string& job_dir, std::chrono::milliseconds wait) {
  const auto path = stack_query_socket(job_dir);
  const io::Fd fd = io::connect_unix(path);
  if (!fd.valid()) {
    if (errno == ENAMETOOLONG) throw std::runtime_error(fmt::format("{}: too long for a Unix socket", path));
    throw std::runtime_error(fmt::format("cannot reach popdist run at {}: {}", path, std::strerror(errno)));
  }
  // Bounded: a popdist run that is stopped (Ctrl-Z) or stuck must not hold `popdist stacks` forever.
  const bool asked = io::write_all(fd.get(), fmt::format("{}\n", wait.count()));
  const auto answer = asked ? read_answer(fd.get(), Clock::now() + wait + kAnswerMargin) : std::string();
  if (answer.empty()) {
    throw std::runtime_error(fmt::format("popdist run at {} gave no answer within {} s", path,
                                         std::chrono::duration_cast<std::chrono::seconds>(wait + kAnswerMargin).count()));
  }
  return answer;
}

}  // namespace popdist::cli
