#include "agent/host_fence.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "common/say.hpp"
#include "io/read_write.hpp"

namespace popdist::cli {
namespace {

// How often the watch looks. A wake-up much later than this means the agent itself was stopped
// (SIGSTOP, a suspended machine, a host swapping hard): it then counts anew from its resumption.
constexpr auto kTick = std::chrono::milliseconds(200);
constexpr auto kStoppedItself = std::chrono::seconds(1);

double seconds(std::chrono::milliseconds ms) { return std::chrono::duration<double>(ms).count(); }

}  // namespace

std::optional<std::chrono::milliseconds> fence_due(const FenceSettings& settings,
                                                   std::optional<SteadyClock::time_point> last_heard,
                                                   SteadyClock::time_point counting_from, SteadyClock::time_point now) {
  if (!settings.on() || !last_heard) return std::nullopt;
  if (now - std::max(*last_heard, counting_from) < settings.host_timeout) return std::nullopt;
  return std::chrono::duration_cast<std::chrono::milliseconds>(now - *last_heard);
}

std::string fence_message(int instance, const std::string& host, std::chrono::milliseconds silent,
                          const FenceSettings& settings) {
  char numbers[96];
  std::snprintf(numbers, sizeof numbers, "%.1f s (--host-timeout %g s)", seconds(silent),
                seconds(settings.host_timeout));
  return "instance " + std::to_string(instance) + " on host " + host + ": nothing heard from popdist run for " +
         numbers + ": this host is cut off from the job, which has lost it; ending the program as a teardown " +
         "would (SIGTERM, then SIGKILL after the " + std::to_string(settings.grace.count()) + " s grace period)";
}

std::string fence_host_name() {
  if (const char* fake = std::getenv("POPDIST_CHANNEL_HOST"); fake != nullptr && *fake != '\0') return fake;
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? name : "unknown-host";
}

HostFence::HostFence(FenceSettings settings, int instance, std::string host, Heard heard, std::function<void()> fencing)
    : settings_(settings), instance_(instance), host_(std::move(host)), heard_(std::move(heard)),
      fencing_(std::move(fencing)) {}

HostFence::~HostFence() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void HostFence::watch(pid_t program, int log_fd) {
  if (!settings_.on() || !heard_) return;
  program_ = program;
  log_fd_ = log_fd;
  thread_ = std::thread([this] { run(); });
}

void HostFence::program_ended() {
  {
    std::lock_guard lock(mutex_);
    ended_ = true;
  }
  changed_.notify_all();
}

bool HostFence::fenced() const {
  std::lock_guard lock(mutex_);
  return fenced_;
}

void HostFence::run() {
  auto counting_from = SteadyClock::now();
  auto last_look = counting_from;
  std::unique_lock lock(mutex_);
  while (!changed_.wait_for(lock, kTick, [this] { return stopping_ || ended_; })) {
    const auto now = SteadyClock::now();
    if (now - last_look > kTick + kStoppedItself) counting_from = now;
    last_look = now;
    lock.unlock();
    const auto silent = fence_due(settings_, heard_(), counting_from, now);
    lock.lock();
    if (silent && !ended_ && !stopping_) return fence(*silent);
  }
}

// Called with mutex_ held; returns with it held. The line goes to the instance's --log-dir
// stderr.log (what a cut-off host keeps) and where its output goes (the terminal, through the
// launcher, when it still can).
void HostFence::fence(std::chrono::milliseconds silent) {
  fenced_ = true;
  if (fencing_) fencing_();
  tell(fence_message(instance_, host_, silent, settings_));
  signal_program(SIGTERM);
  std::unique_lock lock(mutex_, std::adopt_lock);
  const bool ended = changed_.wait_for(lock, settings_.grace, [this] { return ended_ || stopping_; });
  lock.release();
  if (ended) return;
  tell("instance " + std::to_string(instance_) + ": still running after the " + std::to_string(settings_.grace.count()) +
       " s grace period: SIGKILL");
  signal_program(SIGKILL);
}

// The log first: the job's teardown may end this agent at any moment once a sibling instance has
// ended. The terminal's line from a thread of its own: on a cut-off host the pipe to Open MPI's
// daemon may be full, and the fence must not wait on it (nor hold its lock).
void HostFence::tell(const std::string& message) const {
  if (log_fd_ >= 0) (void)io::write_all(log_fd_, "popdist run: " + message + "\n");  // one write: a whole line
  std::thread([message] { say(message); }).detach();
}

// As a teardown does (Open MPI's daemon signals the agent's whole process group): the program and
// what it started. The agent passes on no signal of its own (agent/signal_relay.hpp), and a
// SIGKILL ends it too, as the teardown's would. When the agent leads no group of its own (another
// launcher), the program alone. Called with mutex_ held and the program not yet reaped.
void HostFence::signal_program(int signal_number) {
  if (ended_) return;
  const pid_t group = ::getpgrp();
  if (group == ::getpid() && ::getpgid(program_) == group) ::kill(-group, signal_number);
  else ::kill(program_, signal_number);
}

int wait_for_program(pid_t pid, HostFence& fence) {
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  fence.program_ended();
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace popdist::cli
