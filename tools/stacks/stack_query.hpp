#pragma once
// How `popdist stacks` asks a running `popdist run` for its stack report: a Unix socket,
// `stacks.sock`, in the job directory on the launching machine. popdist run makes the directory
// 0700 (mkdtemp), so only its user can reach the socket, and it checks the peer's uid too
// (SO_PEERCRED). The question is one line, the wait in milliseconds; the answer is the report,
// then the socket closes. popdist run gathers it from every host over the job's channel.

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace popdist::cli {

/// `<job_dir>/stacks.sock`.
[[nodiscard]] std::string stack_query_socket(const std::string& job_dir);

/// popdist run's side: answers each question on its own thread, one at a time, until destroyed.
class StackQueryService {
 public:
  using Answer = std::function<std::string(std::chrono::milliseconds wait)>;
  /// Listens at stack_query_socket(job_dir); when it cannot (a path too long for a Unix socket),
  /// says so on stderr once and answers nobody.
  StackQueryService(const std::string& job_dir, Answer answer);
  ~StackQueryService();
  StackQueryService(const StackQueryService&) = delete;
  StackQueryService& operator=(const StackQueryService&) = delete;

  class Loop;

 private:
  std::unique_ptr<Loop> loop_;
};

/// `popdist stacks`'s side: the report of the job in `job_dir`; throws std::runtime_error naming
/// the socket when popdist run cannot be asked.
[[nodiscard]] std::string ask_for_stacks(const std::string& job_dir, std::chrono::milliseconds wait);

}  // namespace popdist::cli
