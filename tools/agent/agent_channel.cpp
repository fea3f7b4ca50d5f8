#include "agent/agent_channel.hpp"

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "channel/client.hpp"
#include "job/instance_status.hpp"
#include "job/torch_error_file.hpp"
#include "stacks/stack_report.hpp"

namespace popdist::cli {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kActivityInterval = std::chrono::seconds(1);

std::string file_text(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace

class AgentChannel::Impl {
 public:
  Impl(int instance, std::string job_dir) : instance_(instance), job_dir_(std::move(job_dir)) {
    if (std::getenv(channel::kSecretVariable) == nullptr) return;  // not under a popdist run with a channel
    try {
      options_ = channel::client_options_from_environment(channel::process_environment(), instance);
    } catch (const std::invalid_argument& e) {
      warn(e.what());
    }
    ::unsetenv(channel::kSecretVariable);
    ::unsetenv(channel::kAddressVariable);
    if (options_.secret.empty()) return;
    connecting_ = std::thread([this] { connect(); });
    dumping_ = std::thread([this] { serve_requests(); });
  }

  ~Impl() {
    if (connecting_.joinable()) connecting_.join();
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    requested_.notify_all();
    if (dumping_.joinable()) dumping_.join();
    if (client_) client_->close();
  }

  void started(pid_t pid) {
    std::lock_guard lock(mutex_);
    pid_ = pid;
    if (client_) client_->send_started(pid);
  }

  void wrote() {
    const auto now = Clock::now();
    if (now - last_activity_ < kActivityInterval) return;
    last_activity_ = now;
    std::lock_guard lock(mutex_);
    if (client_) client_->send_activity(now);
  }

  void ended(int status, Clock::time_point ended_at, const std::string& stderr_tail) {
    if (connecting_.joinable()) connecting_.join();  // the end must not be lost to a slow start
    std::lock_guard lock(mutex_);
    if (!client_) return;
    const auto traceback =
        job_dir_.empty() ? std::string() : torch_error_text(file_text(instance_file(job_dir_, instance_, ".error.json")));
    if (traceback.empty()) {
      client_->send_ended(status, ended_at, stderr_tail, channel::ErrorSource::kStderr);
    } else {
      client_->send_ended(status, ended_at, traceback, channel::ErrorSource::kTorchErrorFile);
    }
    // mpirun learns of a failure only when this agent exits: a relay must not linger then (the
    // teardown follows at once, and the host's other agents elect another relay). On success
    // the others end about now too, and lingering keeps their last frames.
    if (status != 0) client_->close(std::chrono::milliseconds(0));
  }

 private:
  void warn(const std::string& why) {
    std::fprintf(stderr, "popdist run: instance %d: no channel to popdist run (%s): the program runs, but its end, "
                 "output and stacks are not reported\n", instance_, why.c_str());
  }

  void connect() {
    std::unique_ptr<channel::Client> client;
    try {
      client = std::make_unique<channel::Client>(options_);
    } catch (const std::exception& e) {
      warn(e.what());
      return;
    }
    client->on_request([this](const channel::Request& request) {
      std::lock_guard lock(mutex_);
      requests_.push_back(request);
      requested_.notify_all();
    });
    std::lock_guard lock(mutex_);
    client_ = std::move(client);
    if (pid_ > 0) client_->send_started(pid_);
  }

  // Requests arrive on the channel's thread (or the relay's, which serves the whole host): the
  // dump, which waits for the program, is made here.
  void serve_requests() {
    std::unique_lock lock(mutex_);
    for (;;) {
      requested_.wait(lock, [this] { return stopping_ || !requests_.empty(); });
      if (stopping_) return;
      const auto wait = std::chrono::milliseconds(requests_.front().wait_ms);
      requests_.clear();
      lock.unlock();
      const auto dump = job_dir_.empty() ? OwnDump{} : dump_own_stacks(job_dir_, instance_, wait);
      lock.lock();
      if (!client_) continue;
      if (dump.marker) {
        client_->send_stack_dump(dump.text, dump.marker->pid, dump.marker->main_thread);
      } else {
        client_->send_stack_dump("", 0, 0);
      }
    }
  }

  int instance_;
  std::string job_dir_;
  channel::ClientOptions options_;
  std::mutex mutex_;  // client_, pid_, requests_, stopping_
  std::condition_variable requested_;
  std::unique_ptr<channel::Client> client_;
  pid_t pid_ = 0;
  std::deque<channel::Request> requests_;
  bool stopping_ = false;
  Clock::time_point last_activity_{};
  std::thread connecting_;
  std::thread dumping_;
};

AgentChannel::AgentChannel(int instance, std::string job_dir)
    : impl_(std::make_unique<Impl>(instance, std::move(job_dir))) {}
AgentChannel::~AgentChannel() = default;
void AgentChannel::started(pid_t pid) { impl_->started(pid); }
void AgentChannel::wrote() { impl_->wrote(); }
void AgentChannel::ended(int status, std::chrono::steady_clock::time_point ended_at, const std::string& stderr_tail) {
  impl_->ended(status, ended_at, stderr_tail);
}

}  // namespace popdist::cli
