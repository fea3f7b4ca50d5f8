// Measures the channel at a size: `scale_probe <agents> <hosts>` connects that many agents
// (threads, each a Client) spread over fake hosts to one server, sends a Started and an Ended
// from each, and prints the connections into the server, the bytes per agent, and the time to
// deliver every Ended. Exits 1 when a message is missing or a host has more than one connection.
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

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return std::fprintf(stderr, "usage: scale_probe <agents> <hosts>\n"), 2;
  const int agents = argument(argv[1], "agents"), hosts = argument(argv[2], "hosts");
  // As the launcher would: room for every host's relay to connect at once.
  TestServer test(2000ms, std::max<std::size_t>(256, static_cast<std::size_t>(hosts)));
  std::vector<std::unique_ptr<Client>> clients(static_cast<std::size_t>(agents));
  const auto connect_start = Clock::now();
  run_parallel(agents, [&](int i) {
    ClientOptions options;
    options.secret = test.secret, options.server_address = "127.0.0.1", options.server_port = test.server.port();
    options.host = "host" + std::to_string(i % hosts) + "-" + job_tag(test.secret);
    options.instance = i, options.beat_interval = std::chrono::hours(1);
    options.connect_timeout = std::chrono::seconds(60);
    clients[static_cast<std::size_t>(i)] = std::make_unique<Client>(options);
  });
  const bool hellos = test.collector.wait_until([&] { return test.collector.count_locked<Hello>() == static_cast<std::size_t>(agents); }, 60s);
  const double connect_ms = ms_since(connect_start);
  const std::uint64_t hello_bytes = test.server.stats().bytes_received;
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
  std::printf("bytes into the server per agent: its Hello %.1f, its Started+Ended %.1f\n",
              static_cast<double>(hello_bytes) / agents, static_cast<double>(stats.bytes_received - hello_bytes) / agents);
  std::printf("time: every agent connected %.1f ms; every Ended delivered %.1f ms after the sends began (one thread spawned per agent)\n", connect_ms, ended_ms);
  for (auto& client : clients)
    if (!client->is_relay()) client.reset();
  clients.clear();
  const bool complete = hellos && started && ended && stats.accepted == static_cast<std::uint64_t>(hosts);
  if (!complete) std::fprintf(stderr, "scale_probe: messages missing or more connections than hosts\n");
  return complete ? 0 : 1;
}
