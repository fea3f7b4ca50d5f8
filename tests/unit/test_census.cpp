// The census of a registration without a deadline (protocols/registration/census.hpp), without MPI:
// members in a model of time (steps of 5 ms, a message takes one), some absent. Checked: every
// absent member is told once per census, by one present member, exactly which members took
// part; the present members' messages stay within the roll call's bounds (roll_call.hpp) plus
// the notices; censuses repeat, less and less often; a member whose census is over answers an
// older census once (Stale), and the member that ran it stops instead of asking everyone.

#include <catch2/catch.hpp>

#include <cstddef>
#include <deque>
#include <memory>
#include <vector>

#include "../step_bounds.hpp"
#include "protocols/registration/census.hpp"

namespace popdist::testing {
namespace {

using detail::Census;
using detail::RollCall;

constexpr double kStep = 0.005;  ///< seconds
constexpr double kAfter = 1.0;   ///< the first census, seconds after the start

using popdist_test::ceil_log2;

struct Flight {
  double at;
  std::size_t from;
  std::size_t to;
  int epoch;
  int kind;
  int level;
  RollCall::Bitmap present;
};

struct Notice {
  std::size_t from;
  double at;
  RollCall::Bitmap present;
};

/// `k` members waiting in one set from time 0, those in `absent` (a bit mask) never; runs until `until`.
struct Model {
  Model(std::size_t k, unsigned absent) : k(k), absent(absent), sent(k, 0), notices(k) {
    for (std::size_t i = 0; i < k; ++i) {
      members.emplace_back();
      if (is_absent(i)) continue;
      members[i] = std::make_unique<Census>(
          k, i, kAfter, 0.0,
          [this, i](std::size_t to, int epoch, int kind, int level, const RollCall::Bitmap& present) {
            ++sent[i];
            flights.push_back({now + kStep, i, to, epoch, kind, level, present});
          },
          [this, i](std::size_t to, const RollCall::Bitmap& present) {
            ++sent[i];
            notices[to].push_back({i, now, present});
          });
    }
  }
  [[nodiscard]] bool is_absent(std::size_t i) const { return (absent >> i & 1U) != 0; }

  void run(double until) {
    for (; now < until; now += kStep) {
      while (!flights.empty() && flights.front().at <= now + kStep / 2) {
        const auto flight = flights.front();
        flights.pop_front();
        if (members[flight.to]) {
          members[flight.to]->receive(flight.from, flight.epoch, flight.kind, flight.level, flight.present, now);
        }
      }
      for (auto& member : members) {
        if (member) member->poll(now);
      }
    }
  }

  std::size_t k;
  unsigned absent;
  double now = 0;
  std::vector<std::unique_ptr<Census>> members;
  std::deque<Flight> flights;
  std::vector<std::size_t> sent;
  std::vector<std::vector<Notice>> notices;  ///< by receiver
};

}  // namespace

TEST_CASE("census: every absent member is told once per census which members took part", "[census]") {
  for (std::size_t k = 2; k <= 9; ++k) {
    for (unsigned absent = 1; absent < (1U << k) - 1; ++absent) {
      Model model(k, absent);
      model.run(kAfter + 2.5);  // one census (the next is due 2 x kAfter after it ends)
      std::size_t absent_count = 0;
      for (std::size_t i = 0; i < k; ++i) {
        INFO("k=" << k << " absent mask=" << absent << " member " << i);
        if (!model.is_absent(i)) {
          CHECK(model.notices[i].empty());
          CHECK(model.members[i]->epoch() == 1);
          continue;
        }
        ++absent_count;
        REQUIRE(model.notices[i].size() == 1);
        const auto& notice = model.notices[i].front();
        CHECK_FALSE(model.is_absent(notice.from));
        // One absent member hears from the present member just before it (cyclically).
        if (__builtin_popcount(absent) == 1) CHECK(notice.from == (i + k - 1) % k);
        for (std::size_t j = 0; j < k; ++j) CHECK(RollCall::bit(notice.present, j) == !model.is_absent(j));
      }
      // The roll call's bound with absent members (roll_call.hpp: ceil(log2 k) + 2 + 2 per absent
      // member), a Stale answer at most per absent member, and this member's notices.
      for (std::size_t i = 0; i < k; ++i) {
        if (model.is_absent(i)) continue;
        std::size_t told = 0;
        for (const auto& notices : model.notices) {
          for (const auto& notice : notices) told += notice.from == i ? 1 : 0;
        }
        INFO("k=" << k << " absent mask=" << absent << " member " << i << " notices " << told);
        // The missing are dealt out over the present: none tells more than its share.
        CHECK(told <= (absent_count + (k - absent_count) - 1) / (k - absent_count));
        CHECK(model.sent[i] <= 2 * k + ceil_log2(k) + 2 + told);
        if (absent_count == 1) CHECK(model.sent[i] <= ceil_log2(k) + 3 + told);
      }
    }
  }
}

TEST_CASE("census: censuses repeat while members are missing, less and less often", "[census]") {
  Model model(6, 1U << 4);
  // Starts at 1, then about 2, 4 and 8 x kAfter after each one ends (each lasts the roll call's
  // length, about 1.5 s at 6 members).
  model.run(kAfter + 0.1);
  CHECK(model.members[0]->epoch() == 1);
  model.run(kAfter + 3.0);
  CHECK(model.notices[4].size() == 1);
  model.run(kAfter + 1.0 + 2 * kAfter + 2.0);
  CHECK(model.members[0]->epoch() == 2);
  model.run(27.0);
  CHECK(model.members[0]->epoch() == 4);
  CHECK(model.notices[4].size() == 4);
  for (std::size_t i = 0; i < 6; ++i) {
    if (i != 4) CHECK(model.members[i]->epoch() == 4);
  }
}

TEST_CASE("census: a member that missed censuses is told their number and does not run one alone", "[census]") {
  std::vector<std::size_t> sent(2, 0);
  std::deque<Flight> flights;
  const auto sender = [&](std::size_t me) {
    return [&, me](std::size_t to, int epoch, int kind, int level, const RollCall::Bitmap& present) {
      ++sent[me];
      flights.push_back({0, me, to, epoch, kind, level, present});
    };
  };
  const auto no_notices = [](std::size_t, const RollCall::Bitmap&) { FAIL("no member is missing"); };
  Census current(2, 0, kAfter, 0.0, sender(0), no_notices);
  Census late(2, 1, kAfter, 0.0, sender(1), no_notices);
  // Member 0 has been through three censuses; member 1 came late and met none of them.
  current.noted_on_arrival(3, 0.0);
  late.poll(kAfter);  // its own first census: a Request to member 0
  REQUIRE(late.running());
  REQUIRE(flights.size() == 1);
  CHECK(flights.front().epoch == 1);
  const auto request = flights.front();
  flights.pop_front();
  current.receive(request.from, request.epoch, request.kind, request.level, request.present, kAfter);
  // Member 0 answers once: census 3.
  REQUIRE(flights.size() == 1);
  CHECK(flights.front().kind == Census::kStale);
  CHECK(flights.front().epoch == 3);
  current.receive(request.from, request.epoch, request.kind, request.level, request.present, kAfter);
  CHECK(flights.size() == 1);  // once per member and census
  const auto stale = flights.front();
  flights.pop_front();
  late.receive(stale.from, stale.epoch, stale.kind, stale.level, stale.present, kAfter);
  CHECK_FALSE(late.running());
  CHECK(late.epoch() == 3);
  // It asks nobody else, and its next census is census 4, due 8 x kAfter later.
  late.poll(kAfter + 7.9 * kAfter);
  CHECK_FALSE(late.running());
  CHECK(sent[1] == 1);
  late.poll(kAfter + 8.1 * kAfter);
  CHECK(late.running());
  CHECK(late.epoch() == 4);
}

TEST_CASE("census: messages of an older census are answered; a newer one is joined", "[census]") {
  std::vector<Flight> out;
  Census member(4, 2, kAfter, 0.0,
                [&](std::size_t to, int epoch, int kind, int level, const RollCall::Bitmap& present) {
                  out.push_back({0, 2, to, epoch, kind, level, present});
                },
                [](std::size_t, const RollCall::Bitmap&) {});
  member.noted_on_arrival(2, 0.1);
  CHECK(member.epoch() == 2);
  CHECK_FALSE(member.running());
  // A Request of census 2, which went on without this member: answered with its number.
  member.receive(0, 2, static_cast<int>(RollCall::Kind::Request), 1, RollCall::Bitmap(1, 0), 0.2);
  REQUIRE(out.size() == 1);
  CHECK(out.back().kind == Census::kStale);
  CHECK(out.back().epoch == 2);
  // An answer of census 2 asks nothing: no reply.
  member.receive(0, 2, static_cast<int>(RollCall::Kind::Answer), 1, RollCall::Bitmap(1, 0), 0.2);
  CHECK(out.size() == 1);
  // Census 3 reaches it: it takes part.
  member.receive(3, 3, static_cast<int>(RollCall::Kind::Request), 0, RollCall::Bitmap(1, 0), 0.3);
  CHECK(member.running());
  CHECK(member.epoch() == 3);
  CHECK(out.size() > 1);
  for (std::size_t i = 1; i < out.size(); ++i) CHECK(out[i].epoch == 3);
}

}  // namespace popdist::testing
