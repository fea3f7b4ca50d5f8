#include "agent/agent_channel.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <unistd.h>  // environ

#include "channel/client.hpp"
#include "channel/job_key.hpp"
#include "common/say.hpp"
#include "job/job_directory.hpp"
#include "job/torch_error_file.hpp"
#include "stacks/stack_report.hpp"

namespace popdist::cli {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kActivityInterval = std::chrono::seconds(1);
// How long the agent's end waits for its Ended to be handed to the channel: the connection had
// the program's whole run to be made, so only an unreachable channel (a client retries for its
// connect_timeout, 30 s) takes longer; then the end goes unreported, with one warning.
constexpr auto kLongestEndWait = std::chrono::milliseconds(1000);

/// The environment as it is now, for the channel's options once its variables are gone from it.
channel::EnvironmentLookup environment_snapshot() {
  std::map<std::string, std::string> copy;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text(*entry);
    const auto equals = text.find('=');
    if (equals != std::string::npos) copy.emplace(text.substr(0, equals), text.substr(equals + 1));
  }
  return [copy = std::move(copy)](const char* name) -> std::optional<std::string> {
    const auto found = copy.find(name);
    return found == copy.end() ? std::nullopt : std::optional<std::string>(found->second);
  };
}

std::string file_text(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace

// Shared with the channel's threads: when the channel cannot be reached, the agent's end leaves
// them behind (detached) rather than wait for `connect_timeout`, and they must not outlive it.
class AgentChannel::Impl : public std::enable_shared_from_this<AgentChannel::Impl> {
 public:
  Impl(int instance, std::string job_dir) : instance_(instance), job_dir_(std::move(job_dir)) {
    // Not under a popdist run with a channel: neither the job's nonce nor (an older one) its key.
    if (std::getenv(channel::kNonceVariable) == nullptr && std::getenv(channel::kSecretVariable) == nullptr) return;
    // The key file and the key's derivation wait for the connecting thread, after the program has
    // started (they take a few milliseconds: tests/bench/README.md, where the time goes).
    environment_ = environment_snapshot();
    // The program never sees the job's key or what leads to it (the key file's path may stay).
    for (const char* name : {channel::kSecretVariable, channel::kNonceVariable, channel::kKeyIdVariable,
                             channel::kTagVariable, channel::kAddressVariable})
      ::unsetenv(name);
  }

  void start() {
    if (!environment_) return;
    auto self = shared_from_this();
    connecting_ = std::thread([self] { self->connect(); });
    dumping_ = std::thread([self] { self->serve_requests(); });
  }

  /// Joins the threads, or leaves those behind that still wait for an unreachable channel.
  void shut_down() {
    if (connecting_.joinable()) abandoned_ ? connecting_.detach() : connecting_.join();
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    requested_.notify_all();
    if (dumping_.joinable()) dumping_.join();
    if (abandoned_) return;  // the channel's threads still hold the client, if it ever comes
    std::lock_guard lock(mutex_);
    if (client_) client_->close();
  }

  std::optional<Clock::time_point> last_heard() const {
    const channel::Client* client = client_ready_.load();
    return client != nullptr ? client->last_heard() : std::nullopt;
  }

  void started(pid_t pid) {
    std::lock_guard lock(mutex_);
    pid_ = pid;
    if (client_) client_->send_started(pid);
  }

  void fencing() { fenced_ = true; }

  void wrote() {
    if (fenced_) return;
    const auto now = Clock::now();
    if (now - last_activity_ < kActivityInterval) return;
    last_activity_ = now;
    std::lock_guard lock(mutex_);
    if (client_) client_->send_activity(now);
  }

  void ended(int status, Clock::time_point ended_at, const std::string& stderr_tail) {
    if (!environment_) return;
    auto self = shared_from_this();
    std::thread reporting([self, status, ended_at, stderr_tail] { self->report_end(status, ended_at, stderr_tail); });
    std::unique_lock lock(end_mutex_);
    // The end must not be lost to a slow start, nor held by a channel that cannot be reached.
    if (!end_handled_.wait_for(lock, kLongestEndWait, [this] { return end_reported_; })) {
      lock.unlock();
      abandoned_ = true;
      reporting.detach();
      warn("not reached within " + std::to_string(kLongestEndWait.count()) + " ms of the program's end");
      return;
    }
    lock.unlock();
    reporting.join();
    // mpirun learns of a failure only when this agent exits: a relay must not linger then (the
    // teardown follows at once, and the host's other agents elect another relay). On success
    // the others end about now too, and lingering keeps their last frames.
    std::lock_guard client_lock(mutex_);
    if (status != 0 && client_) client_->close(std::chrono::milliseconds(0));
  }

 private:
  void warn(const std::string& why) {
    if (warned_.exchange(true)) return;  // one warning per instance, whatever else fails
    say("instance " + std::to_string(instance_) + ": no channel to popdist run (" + why +
        "): the program runs, but its end, output and stacks are not reported");
  }

  void connect() {
    std::unique_ptr<channel::Client> client;
    try {
      client = std::make_unique<channel::Client>(channel::client_options_from_environment(environment_, instance_));
    } catch (const std::exception& e) {
      if (!abandoned_) warn(e.what());
      return connected(nullptr);
    }
    client->on_request([this](const channel::Request& request) {
      std::lock_guard lock(mutex_);
      requests_.push_back(request);
      requested_.notify_all();
    });
    connected(std::move(client));
  }

  void connected(std::unique_ptr<channel::Client> client) {
    {
      std::lock_guard lock(mutex_);
      client_ = std::move(client);
      client_ready_ = client_.get();
      if (client_ && pid_ > 0) client_->send_started(pid_);
      connect_done_ = true;
    }
    connect_finished_.notify_all();
  }

  // On a thread of its own, so that ended() can stop waiting for it.
  void report_end(int status, Clock::time_point ended_at, const std::string& stderr_tail) {
    channel::Client* client = nullptr;
    {
      std::unique_lock lock(mutex_);
      connect_finished_.wait(lock, [this] { return connect_done_; });
      client = client_.get();  // set once; closed only after this thread is joined (or never)
    }
    if (client != nullptr) {
      const auto traceback = job_dir_.empty()
                                 ? std::string()
                                 : torch_error_text(file_text(instance_file(job_dir_, instance_, ".error.json")));
      if (traceback.empty()) {
        client->send_ended(status, ended_at, stderr_tail, channel::ErrorSource::kStderr);
      } else {
        client->send_ended(status, ended_at, traceback, channel::ErrorSource::kTorchErrorFile);
      }
    }
    {
      std::lock_guard lock(end_mutex_);
      end_reported_ = true;
    }
    end_handled_.notify_all();
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
  channel::EnvironmentLookup environment_;  // as the agent started; empty: no channel
  std::mutex mutex_;  // client_, pid_, requests_, stopping_, connect_done_
  std::condition_variable requested_;
  std::condition_variable connect_finished_;
  std::unique_ptr<channel::Client> client_;
  std::atomic<const channel::Client*> client_ready_{nullptr};  // client_, for last_heard() without the lock
  pid_t pid_ = 0;
  std::deque<channel::Request> requests_;
  bool stopping_ = false;
  bool connect_done_ = false;
  std::mutex end_mutex_;  // end_reported_
  std::condition_variable end_handled_;
  bool end_reported_ = false;
  std::atomic<bool> abandoned_{false};
  std::atomic<bool> fenced_{false};
  std::atomic<bool> warned_{false};
  Clock::time_point last_activity_{};
  std::thread connecting_;
  std::thread dumping_;
};

AgentChannel::AgentChannel(int instance, std::string job_dir)
    : impl_(std::make_shared<Impl>(instance, std::move(job_dir))) {
  impl_->start();
}
AgentChannel::~AgentChannel() { impl_->shut_down(); }
void AgentChannel::started(pid_t pid) { impl_->started(pid); }
void AgentChannel::wrote() { impl_->wrote(); }
void AgentChannel::fencing() { impl_->fencing(); }
std::optional<std::chrono::steady_clock::time_point> AgentChannel::last_heard() const { return impl_->last_heard(); }
void AgentChannel::ended(int status, std::chrono::steady_clock::time_point ended_at, const std::string& stderr_tail) {
  impl_->ended(status, ended_at, stderr_tail);
}

}  // namespace popdist::cli
