// The roll call of a failed timed synchronize (protocols/timed/roll_call.hpp), without MPI:
// every subset of absent members for k = 1..10, in a model of time in ticks (a window is 4 ticks,
// a message takes 1), with every present member starting at once and with some joining only when
// a first message reaches them (as members still polling in the barrier do). Checked: every
// present member names exactly the absent ones, an absent member is sent a notice, the roll call
// ends within a bound of windows, and the messages per member stay within
//   ceil(log2 k) + 1 with nobody absent (ceil(log2 k) levels, and a fold's message),
//   ceil(log2 k) + 2 with one member absent (+ 3 with staggered starts), and
//   ceil(log2 k) + 2 + 2 per absent member in general;
// and again with the roll call settling after levels + 5 windows, as the MPI side makes it (the
// names stay exact; at most 2k + ceil(log2 k) + 2 messages per member then).

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "../step_bounds.hpp"
#include "protocols/timed/roll_call.hpp"

namespace popdist::testing {
namespace {

using detail::RollCall;

constexpr double kWindow = 4;
constexpr int kLatency = 1;
constexpr int kHorizon = 400;  ///< ticks

using popdist_test::ceil_log2;

struct Flight {
  int at;
  std::size_t from;
  std::size_t to;
  RollCall::Kind kind;
  int level;
  RollCall::Bitmap present;
};

struct Outcome {
  std::vector<std::size_t> sent;        ///< by member
  std::vector<std::vector<std::size_t>> missing;
  std::vector<char> notified;           ///< by member: an absent one was sent something
  int last_done = 0;                    ///< tick at which the last present member was done
};

/// Runs the roll call over `k` members, `absent` (a bit mask) never taking part; `staggered`:
/// odd members start only when a first message reaches them (or at tick 6).
Outcome run(std::size_t k, unsigned absent, bool staggered, int settle_at = -1) {
  std::vector<std::unique_ptr<RollCall>> calls(k);
  std::deque<Flight> flights;
  Outcome out;
  out.notified.assign(k, 0);
  int now = 0;
  for (std::size_t m = 0; m < k; ++m) {
    calls[m] = std::make_unique<RollCall>(k, m, kWindow, [&, m](std::size_t to, RollCall::Kind kind, int level,
                                                               const RollCall::Bitmap& present) {
      REQUIRE(to < k);
      REQUIRE(to != m);
      flights.push_back({now + kLatency, m, to, kind, level, present});
    });
  }
  std::vector<char> started(k, 0);
  const auto present = [&](std::size_t m) { return ((absent >> m) & 1U) == 0; };
  out.last_done = -1;
  for (now = 0; now < kHorizon; ++now) {
    for (std::size_t m = 0; m < k; ++m) {
      if (present(m) && started[m] == 0 && (!staggered || m % 2 == 0 || now >= 6)) {
        started[m] = 1;
        calls[m]->start(now);
      }
    }
    // Deliver what is due (sends made while delivering are due later).
    const auto due = flights.size();
    for (std::size_t i = 0; i < due; ++i) {
      auto flight = flights.front();
      flights.pop_front();
      if (flight.at > now) {
        flights.push_back(flight);
        continue;
      }
      if (!present(flight.to)) {
        out.notified[flight.to] = 1;
        continue;
      }
      if (started[flight.to] == 0) {
        started[flight.to] = 1;
        calls[flight.to]->start(now);
      }
      calls[flight.to]->receive(flight.from, flight.kind, flight.level, flight.present, now);
    }
    bool all_done = true;
    for (std::size_t m = 0; m < k; ++m) {
      if (!present(m)) continue;
      if (started[m] != 0 && now == settle_at) calls[m]->settle(now);
      if (started[m] != 0) calls[m]->poll(now);
      all_done = all_done && calls[m]->done();
    }
    if (all_done && out.last_done < 0) out.last_done = now;
  }
  for (std::size_t m = 0; m < k; ++m) {
    out.sent.push_back(calls[m]->sent());
    out.missing.push_back(present(m) ? calls[m]->missing() : std::vector<std::size_t>{});
  }
  return out;
}

std::size_t levels_of(std::size_t k) {
  std::size_t levels = 0;
  while ((std::size_t{2} << levels) <= k) ++levels;
  return levels;
}

std::string describe(std::size_t k, unsigned absent, bool staggered) {
  std::string text = "k = " + std::to_string(k) + ", absent {";
  for (std::size_t m = 0; m < k; ++m) {
    if (((absent >> m) & 1U) != 0) text += " " + std::to_string(m);
  }
  return text + " }" + (staggered ? ", staggered starts" : "");
}

TEST_CASE("roll call: every subset of absent members for k = 1..10", "[roll_call]") {
  long worst_one_missing = 0;
  long worst_nobody_missing = 0;
  for (std::size_t k = 1; k <= 10; ++k) {
    const auto log = ceil_log2(k);
    for (unsigned absent = 0; absent < (1U << k); ++absent) {
      const auto absentees = static_cast<std::size_t>(__builtin_popcount(absent));
      if (absentees == k) continue;  // nobody to hold a roll call
      for (const bool staggered : {false, true}) {
        const auto what = describe(k, absent, staggered);
        INFO(what);
        const auto out = run(k, absent, staggered);
        std::vector<std::size_t> expected;
        for (std::size_t m = 0; m < k; ++m) {
          if (((absent >> m) & 1U) != 0) expected.push_back(m);
        }
        REQUIRE(out.last_done >= 0);
        // Windows: one per absent member asked on the critical path, a few per level at most.
        CHECK(out.last_done <= static_cast<int>(kWindow) * static_cast<int>(2 * log + 2 * absentees + 2) + 12);
        for (std::size_t m = 0; m < k; ++m) {
          if (((absent >> m) & 1U) != 0) {
            CHECK(out.notified[m] != 0);
            continue;
          }
          INFO("member " << m << " sent " << out.sent[m]);
          CHECK(out.missing[m] == expected);
          CHECK(out.sent[m] <= log + 2 + 2 * absentees);
          // One absent member: ceil(log2 k) + 2; + 3 when members join only as a first message
          // reaches them (one may have to tell a requester to wait: RollCall's Hold).
          if (absentees == 1) CHECK(out.sent[m] <= log + (staggered ? 3 : 2));
          if (absentees == 0) CHECK(out.sent[m] <= log + 1);  // the fold's one more
          const auto over = static_cast<long>(out.sent[m]) - static_cast<long>(log);
          if (absentees == 1 && !staggered) worst_one_missing = std::max(worst_one_missing, over);
          if (absentees == 0) worst_nobody_missing = std::max(worst_nobody_missing, over);
        }
      }
    }
  }
  INFO("worst over ceil(log2 k): one missing +" << worst_one_missing << ", none +" << worst_nobody_missing);
  CHECK(worst_one_missing == 2);
  CHECK(worst_nobody_missing == 1);
}

// The way out that the MPI side takes when its roll call has lasted long (timed_barrier.cpp,
// roll_call_settle): at levels + 5 windows every member not done yet asks the members still
// unknown to it directly. Even when whole blocks are absent and the levels would take longer,
// every present member names exactly the absent ones.
TEST_CASE("roll call: settling after levels + 5 windows names exactly the absent", "[roll_call]") {
  for (std::size_t k = 2; k <= 10; ++k) {
    const auto settle_at = static_cast<int>(kWindow) * static_cast<int>(levels_of(k) + 5);
    for (unsigned absent = 0; absent < (1U << k); ++absent) {
      if (static_cast<std::size_t>(__builtin_popcount(absent)) == k) continue;
      for (const bool staggered : {false, true}) {
        INFO(describe(k, absent, staggered));
        const auto out = run(k, absent, staggered, settle_at);
        std::vector<std::size_t> expected;
        for (std::size_t m = 0; m < k; ++m) {
          if (((absent >> m) & 1U) != 0) expected.push_back(m);
        }
        REQUIRE(out.last_done >= 0);
        CHECK(out.last_done <= settle_at + static_cast<int>(kWindow) + 2);
        for (std::size_t m = 0; m < k; ++m) {
          if (((absent >> m) & 1U) != 0) {
            CHECK(out.notified[m] != 0);
          } else {
            CHECK(out.missing[m] == expected);
            // The bad case: at worst a probe to each member and an answer to each member's probe.
            CHECK(out.sent[m] <= 2 * k + ceil_log2(k) + 2);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace popdist::testing
