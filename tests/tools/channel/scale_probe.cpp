// Measures the channel at a size: `scale_probe <agents> <hosts> [<beat seconds>]` connects that
// many agents (threads, each a Client) spread over fake hosts to one server, sends a Started and
// an Ended from each, and prints the connections into the server, the bytes per agent, and the
// time to deliver every Ended. With a third argument, the agents beat every second (as in a job)
// and the frames and bytes that reach the server while nothing else is sent are counted over that
// many seconds first. Exits 1 when a message is missing or a host has more than one connection.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <thread>

#include "channel_support.hpp"
#include "channel/client.hpp"

using namespace channel_support;
using Clock = std::chrono::steady_clock;

namespace {

int argument(const char* text, const char* name) {
  int value = 0;
  const std::string_view view(text);
  const auto [end, error] = std::from_chars(view.data(), view.data() + view.size(), value);
  if (error != std::errc() || end != view.data() + view.size() || value < 1) {
    std::fprintf(stderr, "scale_probe: %s '%s', expected a positive count\n", name, text);
    std::exit(2);
  }
  return value;
}

double ms_since(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

void run_parallel(int count, const std::function<void(int)>& work) {
  std::vector<std::thread> threads;
  for (int i = 0; i < count; ++i) threads.emplace_back(work, i);
  for (auto& thread : threads) thread.join();
}

struct Size {
  int agents = 0;
  int hosts = 0;
  int beat_seconds = 0;  ///< 0: no beat (an hour), no beat measurement
};

std::vector<std::unique_ptr<Client>> connect_agents(const TestServer& test, const Size& size) {
  std::vector<std::unique_ptr<Client>> clients(static_cast<std::size_t>(size.agents));
  run_parallel(size.agents, [&](int i) {
    ClientOptions options;
    options.secret = test.secret, options.tag = test.tag, options.server_address = "127.0.0.1", options.server_port = test.server.port();
    options.host = "host" + std::to_string(i % size.hosts) + "-" + test.tag;
    options.instance = i;
    options.beat_interval = size.beat_seconds > 0 ? std::chrono::milliseconds(1000) : std::chrono::hours(1);
    options.connect_timeout = std::chrono::seconds(60);
    clients[static_cast<std::size_t>(i)] = std::make_unique<Client>(options);
  });
  return clients;
}

// What reaches the server while the agents only beat, per second of the window.
void measure_beats(TestServer& test, const Size& size) {
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // every beat timer running
  const std::size_t frames_before = test.collector.delivered();
  const std::uint64_t bytes_before = test.server.stats().bytes_received;
  const auto start = Clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(size.beat_seconds));
  const double seconds = ms_since(start) / 1000.0;
  const auto frames = static_cast<double>(test.collector.delivered() - frames_before);
  const auto bytes = static_cast<double>(test.server.stats().bytes_received - bytes_before);
  std::printf("beats over %.1f s: %.0f frames/s, %.0f bytes/s into the server (%.2f frames/s per host, %.3f per agent)\n",
              seconds, frames / seconds, bytes / seconds, frames / seconds / size.hosts, frames / seconds / size.agents);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) return std::fprintf(stderr, "usage: scale_probe <agents> <hosts> [<beat seconds>]\n"), 2;
  const Size size{argument(argv[1], "agents"), argument(argv[2], "hosts"), argc == 4 ? argument(argv[3], "beat seconds") : 0};
  const int agents = size.agents, hosts = size.hosts;
  // As the launcher would: room for every host's relay to connect at once.
  TestServer test(2000ms, std::max<std::size_t>(256, static_cast<std::size_t>(hosts)));
  const auto connect_start = Clock::now();
  auto clients = connect_agents(test, size);
  const bool hellos = test.collector.wait_until([&] { return test.collector.count_locked<Hello>() == static_cast<std::size_t>(agents); }, 60s);
  const double connect_ms = ms_since(connect_start);
  const std::uint64_t hello_bytes = test.server.stats().bytes_received;
  if (size.beat_seconds > 0) measure_beats(test, size);
  const std::uint64_t before_sends = test.server.stats().bytes_received;
  run_parallel(agents, [&](int i) { clients[static_cast<std::size_t>(i)]->send_started(1000 + i); });
  const bool started = test.collector.wait_until([&] { return test.collector.count_locked<Started>() == static_cast<std::size_t>(agents); }, 60s);
  const auto end_start = Clock::now();
  run_parallel(agents, [&](int i) {
    clients[static_cast<std::size_t>(i)]->send_ended(1, Clock::now(), "RuntimeError: instance " + std::to_string(i) + " failed");
  });
  const bool ended = test.collector.wait_until([&] { return test.collector.count_locked<Ended>() == static_cast<std::size_t>(agents); }, 60s);
  const double ended_ms = ms_since(end_start);
  const PeerStats stats = test.server.stats();
  std::printf("agents %d on %d hosts: %llu connections into the server (%llu open)\n", agents, hosts,
              static_cast<unsigned long long>(stats.accepted), static_cast<unsigned long long>(stats.open_authenticated));
  std::printf("bytes into the server per agent: its Hello %.1f, its Started+Ended %.1f%s\n",
              static_cast<double>(hello_bytes) / agents, static_cast<double>(stats.bytes_received - before_sends) / agents,
              size.beat_seconds > 0 ? " (and the beats meanwhile)" : "");
  std::printf("time: every agent connected %.1f ms; every Ended delivered %.1f ms after the sends began (one thread spawned per agent)\n", connect_ms, ended_ms);
  for (auto& client : clients)
    if (!client->is_relay()) client.reset();
  clients.clear();
  const bool complete = hellos && started && ended && stats.accepted == static_cast<std::uint64_t>(hosts);
  if (!complete) std::fprintf(stderr, "scale_probe: messages missing or more connections than hosts\n");
  return complete ? 0 : 1;
}
