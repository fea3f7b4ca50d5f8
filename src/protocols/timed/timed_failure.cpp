// The timed synchronize's GAVE_UP tag and failure path, shared by its protocols (timed_barrier.cpp
// over the members' positions, timed_hosts.cpp across hosts): the receive that stays posted for a
// set, the roll call that names the missing (roll_call.hpp), and the errors.
#include "protocols/timed/timed_failure.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <set>

#include "mpi/matched_receive.hpp"
#include "mpi/mpi_call.hpp"
#include "mpi/pending_sends.hpp"
#include "popdist/error.hpp"
#include "protocols/instance_sets.hpp"
#include "protocols/timed/roll_call_driver.hpp"
#include "runtime/runtime_state.hpp"

namespace popdist::detail {
namespace {

using Clock = MpiClock;  // MPI's clock: simulated time under SMPI (mpi/clock.hpp)

/// `bytes` as this set's GAVE_UP message, or nothing (too short, or another set's whose tag
/// collides with ours: its hash differs).
std::optional<Heard> read_notice(const ProtocolSet& entry, const char* bytes, std::size_t size, int source) {
  Heard heard;
  if (size < sizeof heard.notice) return std::nullopt;
  std::memcpy(&heard.notice, bytes, sizeof heard.notice);
  if (heard.notice.hash != entry.hash) return std::nullopt;
  heard.source = source;
  heard.present.assign(bytes + sizeof heard.notice, bytes + size);
  return heard;
}

/// The GAVE_UP receive from any member that stays posted for the set (re-posted after it takes
/// a notice that turns out to be another set's).
void post_gave_up_receive(const ProtocolSet& entry, TimedRounds& rounds, MPI_Comm control) {
  MpiLock lock;
  check_mpi(MPI_Irecv(rounds.gave_up_notice.data(), static_cast<int>(rounds.gave_up_notice.size()), MPI_BYTE,
                      MPI_ANY_SOURCE, entry.gave_up_tag, control, &rounds.gave_up_request()),
            "MPI_Irecv");
}

/// Receives the GAVE_UP messages already queued for this set that no posted receive took (the
/// failure path only, so probing is fine here), adding them to `heard`.
void drain_gave_up(const ProtocolSet& entry, MPI_Comm control, std::vector<Heard>& heard) {
  for (;;) {
    MPI_Status status;
    std::vector<char> bytes;
    if (!take_message(entry.gave_up_tag, control, bytes, status)) break;
    // Another set's message whose tag collides with ours is dropped (its hash differs).
    if (auto one = read_notice(entry, bytes.data(), bytes.size(), status.MPI_SOURCE)) heard.push_back(std::move(*one));
  }
}

/// The posted GAVE_UP receive's message after it completed with `status`, or nothing when it

/// was another set's.
std::optional<Heard> posted_notice(const ProtocolSet& entry, TimedRounds& rounds, const MPI_Status& status) {
  int size = 0;
  MPI_Get_count(&status, MPI_BYTE, &size);
  return read_notice(entry, rounds.gave_up_notice.data(), static_cast<std::size_t>(std::max(size, 0)),
                     status.MPI_SOURCE);
}

/// After the GAVE_UP receive completed with `status`: the messages of members that gave up (on
/// this round or an earlier one: either way the set is abandoned on their side); the receive is
/// then not posted again, as the set is about to be abandoned here too. Empty for another set's
/// message whose tag collides with ours: the receive is posted again.
std::vector<Heard> take_gave_up(const ProtocolSet& entry, TimedRounds& rounds, const MPI_Status& status, MPI_Comm control) {
  auto first = posted_notice(entry, rounds, status);
  if (!first) {
    post_gave_up_receive(entry, rounds, control);
    return {};
  }
  std::vector<Heard> heard{std::move(*first)};
  drain_gave_up(entry, control, heard);
  return heard;
}

/// The senders of `heard`, sorted.
std::vector<int> senders_of(const std::vector<Heard>& heard) {
  std::set<int> senders;
  for (const auto& one : heard) senders.insert(one.source);
  return {senders.begin(), senders.end()};
}

}  // namespace

void abandon(ProtocolSet& entry, std::string reason) {
  if (!entry.abandoned.load(std::memory_order_acquire)) {
    entry.abandoned_reason = std::move(reason);
    entry.abandoned.store(true, std::memory_order_release);
    entry.on_abandoned();
  }
}

TimedRounds& rounds_of(ProtocolSet& entry, int me, MPI_Comm control) {
  if (!entry.timed) {
    entry.timed =
        std::make_unique<TimedRounds>(entry.members, me, static_cast<std::size_t>(runtime_state().size));
    post_gave_up_receive(entry, *entry.timed, control);
  }
  return *entry.timed;
}

std::vector<Heard> test_gave_up(const ProtocolSet& entry, TimedRounds& rounds, MPI_Comm control) {
  if (rounds.gave_up_request() == MPI_REQUEST_NULL) return {};
  int flag = 0;
  MPI_Status status;
  {
    MpiLock lock;
    check_mpi(MPI_Test(&rounds.gave_up_request(), &flag, &status), "MPI_Test");
  }
  return flag != 0 ? take_gave_up(entry, rounds, status, control) : std::vector<Heard>();
}

std::vector<int> givers_of(const ProtocolSet& entry, const std::vector<Heard>& heard, int me) {
  std::set<int> givers;
  for (const auto& one : heard) RollCall::add_takers(givers, one.source, one.present, entry.members);
  givers.erase(me);
  return {givers.begin(), givers.end()};
}

bool roll_call_is_over(const std::vector<Heard>& heard, std::uint64_t sequence) {
  return std::any_of(heard.begin(), heard.end(), [sequence](const Heard& one) {
    return one.notice.sequence < sequence || one.notice.kind == static_cast<std::int32_t>(RollCall::Kind::Final);
  });
}

void look_for_late_notices(ProtocolSet& entry, TimedRounds& rounds, MPI_Comm control, Clock::time_point deadline,
                           double seconds, int me) {
  const auto until = std::min(deadline, Clock::now() + kLateNoticeGrace);
  for (int pass = 0; pass < kLateNoticePasses && (pass == 0 || Clock::now() < until); ++pass) {
    if (const auto heard = test_gave_up(entry, rounds, control); !heard.empty()) {
      throw_others_gave_up(entry, givers_of(entry, heard, me), seconds, me);
    }
  }
}

RoundCleanup::~RoundCleanup() {
  for (std::size_t step = 0; step < rounds_.steps; ++step) {
    auto& receive = rounds_.requests[step];
    if (receive != MPI_REQUEST_NULL) {
      MpiLock lock;
      MPI_Cancel(&receive);
      MPI_Wait(&receive, MPI_STATUS_IGNORE);
      receive = MPI_REQUEST_NULL;
    }
    auto& send = rounds_.requests[rounds_.send_index(step)];
    if (send != MPI_REQUEST_NULL) {
      int flag = 0;
      {
        MpiLock lock;
        MPI_Test(&send, &flag, MPI_STATUS_IGNORE);  // a small send has completed: nothing to keep
      }
      if (flag != 0) continue;
      pending_sends().adopt(send, rounds_.outgoing);
      send = MPI_REQUEST_NULL;
    }
  }
}

/// The call a timed wait on `entry` serves, for its errors: synchronize, or the meeting before
/// one of popdist's own collectives (collective_meeting.hpp).
std::string call_of(const ProtocolSet& entry) {
  return entry.operation.empty() ? std::string("synchronize") : "the meeting before " + entry.operation;
}

[[noreturn]] void throw_others_gave_up(ProtocolSet& entry, const std::vector<int>& givers, double seconds, int me) {
  const auto text = fmt::format(
      "{} over {} ('{}'): instance{} {} gave up waiting for this instance (instance {}) before it arrived "
      "(this call's timeout: {} s); the set is now abandoned",
      call_of(entry), format_set(entry.members), entry.name, givers.size() == 1 ? "" : "s", fmt::join(givers, ", "), me, seconds);
  abandon(entry, fmt::format("instances {} gave up", fmt::join(givers, ", ")));
  throw TimeoutError(text, {me});
}

[[noreturn]] void throw_other_operation(ProtocolSet& entry, WaitedIn& waited, int other, const std::string& what, int me) {
  // Every member learns what this one was in, also those whose notices had not come yet: they
  // find it queued when they fail in turn (a failure path: one short message per member).
  std::vector<int> others;
  for (const auto member : entry.members) {
    if (member != me) others.push_back(member);
  }
  waited.tell(others);
  abandon(entry, fmt::format("instance {} was in {}", other, what));
  throw UsageError(fmt::format("instance {} is in {} while this instance is in {}; every instance must make the same "
                               "popdist calls in the same order",
                               other, what, waited.mine()));
}

void listen_for_sets(WaitedIn& waited, const std::vector<int>& missing, double seconds) {
  if (missing.empty()) return;  // every member of this set arrived (a timeout ran out late): nothing to ask
  // The roll call's wait (pause_between_polls, mpi/clock.hpp): the window is on MPI's clock, so
  // the pause must be in that clock too. Under SMPI a sleep of the OS thread stops every
  // simulated rank in real time while this rank's simulated clock moves only by each poll's cost,
  // so the window would last as many polls as it holds microseconds.
  const auto start = Clock::now();
  const auto until = start + seconds_on_mpi_clock(seconds);
  while (Clock::now() < until) {
    waited.take();
    pause_between_polls(Clock::now() - start, {}, {}, kRollCallPoll);
  }
}

[[noreturn]] void roll_call_and_fail(ProtocolSet& entry, TimedRounds& rounds, const Round& mine, std::vector<Heard> heard,
                                     double seconds, MPI_Comm control) {
  const auto& members = entry.members;
  const auto me = runtime_state().rank;
  const auto givers = senders_of(heard);
  RollCall call(members.size(), position_of(members, me), roll_call_window(seconds),
                [&](std::size_t to, RollCall::Kind kind, int level, const RollCall::Bitmap& present) {
                  const Notice notice{mine.hash, mine.sequence, seconds, static_cast<std::int32_t>(kind), level};
                  std::vector<char> bytes(sizeof notice + present.size());
                  std::memcpy(bytes.data(), &notice, sizeof notice);
                  std::copy(present.begin(), present.end(), bytes.begin() + sizeof notice);
                  pending_sends().send(std::move(bytes), members[to], entry.gave_up_tag, control);
                });
  // Which set each missing member waited in (waited_in.hpp): asked of the missing only, once the
  // roll call has named them, so that the failure path sends one more message per missing member
  // rather than one more per member. Notices from members that gave up on another set are
  // answered during the roll call too.
  WaitedIn waited(entry, control);

  // A message of an earlier round was answered by that round's failure; only this round's count.
  const auto deliver = [&](std::vector<Heard>& messages, double elapsed) {
    for (const auto& one : messages) {
      const auto from = position_of(members, one.source);  // the member count for a non-member
      if (one.notice.sequence != mine.sequence || from >= members.size()) continue;
      call.receive(from, static_cast<RollCall::Kind>(one.notice.kind), one.notice.level, one.present, elapsed);
    }
    messages.clear();
  };
  const auto start = Clock::now();
  call.start(0);
  deliver(heard, 0);
  drive_roll_call(call, start, seconds, members.size(), [&](double elapsed) {
    // The posted receive takes the first message that comes; the others wait in MPI's queue for
    // the probe. Once the posted one has completed, it is not posted again.
    if (rounds.gave_up_request() != MPI_REQUEST_NULL) {
      int flag = 0;
      MPI_Status status;
      {
        MpiLock lock;
        check_mpi(MPI_Test(&rounds.gave_up_request(), &flag, &status), "MPI_Test");
      }
      if (flag != 0) {
        if (auto one = posted_notice(entry, rounds, status)) heard.push_back(std::move(*one));
      }
    }
    drain_gave_up(entry, control, heard);
    deliver(heard, elapsed);
    waited.take();
  });
  std::vector<int> missing;
  for (const auto position : call.missing()) missing.push_back(members[position]);
  // A missing member that waits in another timed synchronize answers within its polling interval
  // (InterruptPoll::kEvery); one in an untimed wait, or dead, never does: a quarter second at most.
  waited.tell(missing);
  listen_for_sets(waited, missing, std::min(roll_call_grace(seconds), kHostAnswerGrace));
  throw_missing(entry, givers, missing, seconds, waited.explain(missing));
}

[[noreturn]] void throw_missing(ProtocolSet& entry, const std::vector<int>& givers, const std::vector<int>& missing,
                                double seconds, const std::string& explanation) {
  const auto how = givers.empty()
                       ? fmt::format("timed out after {} s", seconds)
                       : fmt::format("failed (instance{} {} gave up waiting first; this call's timeout: {} s)",
                                     givers.size() == 1 ? "" : "s", fmt::join(givers, ", "), seconds);
  const auto what = missing.empty()
                        ? std::string("every member arrived, but not before a member's timeout ran out")
                        : fmt::format("instance{} {} did not arrive{}", missing.size() == 1 ? "" : "s",
                                      fmt::join(missing, ", "), explanation);
  const auto text = fmt::format("{} over {} ('{}') {}: {}; the set is now abandoned", call_of(entry),
                                format_set(entry.members), entry.name, how, what);
  abandon(entry, missing.empty() ? fmt::format("a member's timeout ran out")
                                 : fmt::format("instances {} did not arrive within {} s", fmt::join(missing, ", "),
                                               seconds));
  throw TimeoutError(text, missing);
}

}  // namespace popdist::detail
