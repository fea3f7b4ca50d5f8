#pragma once
// What the timed synchronize's protocols share (timed_barrier.cpp over the members' positions,
// timed_hosts.cpp across hosts): how they poll, the GAVE_UP receive that stays posted for a set,
// and the failure path -- the roll call that names the missing (roll_call.hpp) and the errors.

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "mpi/late_look.hpp"
#include "protocols/protocol_set.hpp"
#include "protocols/timed/roll_call.hpp"
#include "protocols/timed/timed_rounds.hpp"
#include "protocols/timed/waited_in.hpp"

namespace popdist::detail {

/// Polling back-off (docs/guide/protocols.md, "The timed barrier": why it is shaped for speed): spin on
/// MPI_Test for this long, then yield between polls until kYieldFor, then sleep kSleepBetweenPolls
/// between polls.
inline constexpr auto kSpinFor = std::chrono::microseconds(50);
inline constexpr auto kYieldFor = std::chrono::milliseconds(10);
inline constexpr auto kSleepBetweenPolls = std::chrono::microseconds(50);
/// How many MPI progress passes (at most kLateNoticeGrace) the late look makes for a GAVE_UP
/// when this instance may be the late one: a notice sent before we arrived is in this process's
/// queues already and needs passes, not time (measured: one that step 2's pass missed was always
/// found by the next pass). Few, since every first timed round over a set pays for them.
inline constexpr int kLateNoticePasses = late_look_passes(8);  // 1 under SMPI (mpi/late_look.hpp)
inline constexpr auto kLateNoticeGrace = std::chrono::milliseconds(1);
/// How long a timed host-barrier failure listens for the missing members' sets (waited_in.hpp).
inline constexpr double kHostAnswerGrace = 0.25;  ///< seconds

/// A message of the GAVE_UP tag, read: who sent it, its head, the members it knows present.
struct Heard {
  int source = 0;
  Notice notice;
  RollCall::Bitmap present;
};

/// Marks the set abandoned (once), with the reason later calls give.
void abandon(ProtocolSet& entry, std::string reason);

/// The set's TimedRounds, made (and its GAVE_UP receive posted) on its first timed round.
TimedRounds& rounds_of(ProtocolSet& entry, int me, MPI_Comm control);

/// Whether a GAVE_UP has come (MPI_Test: one progress pass when it has not): the messages, or
/// empty.
std::vector<Heard> test_gave_up(const ProtocolSet& entry, TimedRounds& rounds, MPI_Comm control);

/// The members that gave up, from their messages: the senders, and the members their bitmaps
/// name present (all of them in the roll call too), but this instance, sorted.
std::vector<int> givers_of(const ProtocolSet& entry, const std::vector<Heard>& heard, int me);

/// Whether `heard` (messages that came while this instance waited in round `sequence`) say the
/// roll call is over without it: a notice of an earlier round, or a Final (the others gave up on
/// this instance before it arrived).
[[nodiscard]] bool roll_call_is_over(const std::vector<Heard>& heard, std::uint64_t sequence);

/// The late look after a round met (timed_barrier.cpp, step 5): a few progress passes, until
/// kLateNoticeGrace or `deadline`, for a GAVE_UP sent before this instance arrived; throws
/// throw_others_gave_up's error when one is there.
void look_for_late_notices(ProtocolSet& entry, TimedRounds& rounds, MPI_Comm control, MpiClock::time_point deadline,
                           double seconds, int me);

/// On every way out of a round (exceptions included): cancels the ARRIVED receives still
/// posted, so that none of them takes the next round's message, and hands the sends still in
/// flight (to a member that never came, or simply not yet done) to PendingSends, with a
/// reference to their buffers.
class RoundCleanup {
 public:
  explicit RoundCleanup(TimedRounds& rounds) : rounds_(rounds) {}
  RoundCleanup(const RoundCleanup&) = delete;
  RoundCleanup& operator=(const RoundCleanup&) = delete;
  ~RoundCleanup();

 private:
  TimedRounds& rounds_;
};

/// For a member that arrives after `givers` gave up on it: abandons the set, throws TimeoutError.
[[noreturn]] void throw_others_gave_up(ProtocolSet& entry, const std::vector<int>& givers, double seconds, int me);

/// A member that waits over the same members in another popdist operation (synchronize against
/// one of popdist's collectives: waited_in.hpp) can never meet this one: tells every member which
/// operation this one was in, abandons the set, throws UsageError naming both operations.
[[noreturn]] void throw_other_operation(ProtocolSet& entry, WaitedIn& waited, int other, const std::string& what,
                                        int me);

/// Abandons the set and throws TimeoutError naming `missing`, the members that did not arrive;
/// `givers`: the members that gave up first (empty when this instance's own deadline ended it).
[[noreturn]] void throw_missing(ProtocolSet& entry, const std::vector<int>& givers, const std::vector<int>& missing,
                                double seconds, const std::string& explanation = {});

/// After telling `missing` which set this instance waited in (waited_in.hpp): takes their answers,
/// and answers the notices of members that miss this instance, for `seconds`. Not less once
/// `missing` have all answered: when members name a cycle of sets (0 over {0, 1}, 1 over {1, 2},
/// 2 over {0, 2}), the member that misses this one tells it at the end of its own roll call, about
/// when this one's missing answer, and it learns this one's set only from the answer.
void listen_for_sets(WaitedIn& waited, const std::vector<int>& missing, double seconds);

/// The failure path: the roll call (roll_call.hpp) with the members still in the round, for
/// roll_call_length, then TimeoutError naming the members that did not take part. `heard`: the
/// messages that came while this instance still waited (it joins the roll call they started).
[[noreturn]] void roll_call_and_fail(ProtocolSet& entry, TimedRounds& rounds, const Round& mine, std::vector<Heard> heard,
                                     double seconds, MPI_Comm control);

}  // namespace popdist::detail
