// The table of what the agents said over the channel (run/supervise/job_records.hpp): activity,
// stack dumps, ages placed on popdist run's clock.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "run/supervise/job_records.hpp"

using popdist::cli::JobRecords;
namespace channel = popdist::cli::channel;

TEST_CASE("records: start, output and the newest output on popdist run's clock", "[status]") {
  JobRecords records(2);
  CHECK_FALSE(records.last_output().has_value());
  const auto now = std::chrono::steady_clock::now();
  records.on_delivery({"hostB", now, channel::Started{1, 4242}});
  records.on_delivery({"hostB", now + std::chrono::seconds(2), channel::Activity{1, 1'500'000'000}});
  records.on_delivery({"hostA", now, channel::Activity{0, 3'000'000'000}});
  const auto all = records.snapshot();
  CHECK(all[1].started);
  CHECK(all[1].pid == 4242);
  CHECK(all[1].host == "hostB");
  CHECK_FALSE(all[0].started);
  REQUIRE(records.last_output().has_value());
  CHECK(*records.last_output() == now + std::chrono::milliseconds(500));  // arrival 2 s - age 1.5 s
  // a hostile age longer than the clock's life is clamped, never wrapped into the future
  records.on_delivery({"hostA", now, channel::Activity{0, ~0ull}});
  CHECK(*records.last_output() == now + std::chrono::milliseconds(500));
}

TEST_CASE("records: a stack round waits for every started instance that has not ended", "[status]") {
  JobRecords records(3);
  const auto now = std::chrono::steady_clock::now();
  records.on_delivery({"A", now, channel::Started{0, 10}});
  records.on_delivery({"A", now, channel::Started{1, 11}});
  records.on_delivery({"A", now, channel::Ended{1, 0, 0, "", channel::ErrorSource::kStderr}});
  records.forget_stack_dumps();
  std::thread answer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    records.on_delivery({"A", std::chrono::steady_clock::now(), channel::StackDump{0, "Stack (most recent call first):\n", 10, 7}});
  });
  const auto start = std::chrono::steady_clock::now();
  records.wait_for_stack_dumps(start + std::chrono::seconds(10));
  answer.join();
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  REQUIRE(records.snapshot()[0].stack_dump.has_value());
  CHECK(records.snapshot()[0].stack_dump->main_thread == 7u);
  records.forget_stack_dumps();
  CHECK_FALSE(records.snapshot()[0].stack_dump.has_value());
}

TEST_CASE("records: the first Ended is the instance's end, a resent or forged one changes nothing", "[status]") {
  JobRecords records(2);
  const auto now = std::chrono::steady_clock::now();
  records.on_delivery({"A", now, channel::Started{1, 11}});
  records.on_delivery({"A", now, channel::Ended{1, 139, 2'000'000'000, "Segmentation fault", channel::ErrorSource::kStderr}});
  // The same end again through the host's next relay, its age counted anew; then a lie from elsewhere.
  records.on_delivery({"A", now + std::chrono::seconds(1), channel::Ended{1, 139, 5'000, "Segmentation fault",
                                                                         channel::ErrorSource::kStderr}});
  records.on_delivery({"B", now + std::chrono::seconds(2), channel::Ended{1, 1, 0, "forged", channel::ErrorSource::kTorchErrorFile}});
  const auto record = records.snapshot()[1];
  CHECK(record.status == 139);
  CHECK(record.error_text == "Segmentation fault");
  CHECK_FALSE(record.error_from_torch_file);
  CHECK(record.host == "A");
  CHECK(record.ended_at == now - std::chrono::seconds(2));
}
