// Why a handshake, and why this shape:
//
// MPI_Comm_create_group is collective over the new group's members only. If instance 0 creates
// {0,1} while instance 1 creates {0,1,2}, both block forever inside MPI. Before creating, the
// members of a set therefore make sure that all of them are creating the same set under the same
// id, and turn a disagreement into an error on every instance involved.
//
// The fast path is a recursive-doubling exchange over the positions of the sorted members, the
// timed synchronize's schedule (timed_rounds.hpp): at step s a member sends Hello(set, id) to the
// member at its position XOR 2^s and waits for that member's Hello, and sends step s+1 only once
// steps 0..s are in; a member beyond the largest power of two folds into one below it. A member
// relays only what matched its own set and id, so once its last step is in, every member is
// known to be creating this set under this id: at most ceil(log2 k) messages per member (an
// all-to-all exchange sent k - 1), O(log k) latency. (Not dissemination, position + 2^s: on a
// tree network its partners cross switches at every step near a block's end, which made it the
// slower one on the simulated fat tree, tests/bench/README.md.)
//
// A Hello names its set by a digest of fixed size, not by its members, so that its bytes do not
// grow with the set (handshake_message.hpp says why that matters). The list is needed only to
// name a set in an error: a member that gets the digest of another set from a member of its own
// asks that member for the list (ListRequest, answered by a SetList) and judges the list when it
// comes, as it judged the Hello; the wait costs one more round trip, and only when registration
// fails.
//
// All handshake messages use ONE tag and are received with MPI_ANY_SOURCE, and are interpreted
// by their content. A tag per set would not do: instance 0 would wait for a message tagged
// {0,1} that instance 1, busy with {0,1,2}, never sends -- the very hang we want to turn into an
// error. With content-based matching a message from a member of my set about a different set
// that contains me is a proof of inconsistency: that member is creating another set I belong to
// first, i.e. the two instances register sets they share in different orders, which MPI cannot
// resolve either. (It cannot be a leftover of a set we both created: a member finishes creating
// a set only together with all its members, inside MPI_Comm_create_group, and messages about sets
// created or failed here are dropped.) A message from a non-member of my set is legitimate (it is
// creating a set I will create later, e.g. disjoint sets registered in different orders) and is
// stashed until then.
//
// Escalation. An exchange of ceil(log2 k) steps does not connect every pair, so two members registering
// shared sets in different orders may never hear from each other: in {0,1,2,3}, instance 1 may
// be registering {1,3} while the others register {0,1,2,3}, and with 3's partners being 2 and
// 1's being 0 and 3 in the other set, nobody might receive the message that proves the conflict.
// A member still waiting escalates in two stages, both on MPI's clock (mpi/clock.hpp):
// - after kEscalateAfter (250 ms, or a quarter of its timeout when that is shorter) it sends
//   Presence(set, id) to the members it is waiting for and the members it sends to: O(log k)
//   messages. A member busy registering another set that contains the sender finds the conflict
//   from it. Members arriving seconds apart -- start-up alone spreads them so at scale -- stay at
//   O(log k) messages each.
// - without a deadline, after POPDIST_CENSUS_AFTER (30 s) it starts a census (census.hpp): the
//   members still waiting find out which members are missing with the timed path's roll call,
//   O(log k) messages each when few are missing, and each missing member is sent one Notice,
//   with the set's list and which of its members wait in it. A missing member busy registering
//   another set finds there a member of its own set that waits in this one, and with it the
//   conflict, even when the two are partners in neither set (only the census finds those). It
//   repeats, less and less often, while the wait lasts. With a deadline there is no census: the
//   deadline ends the wait, and its roll call (below) names the members that did not come, the
//   conflicting one among them, in O(log k) messages per member.
// A Presence is judged like any other message (a member of my set present in another set that
// contains me: inconsistent). Cycles of three or more sets registered in rotating orders are not
// found (no message of one set reaches a member of the same set busy elsewhere): the timeout ends
// those, naming the members that never came.
//
// On an inconsistency the instance that sees it sends a Mismatch (the two sets' digests and its
// error text) to every instance of both sets, so that members still waiting for a Hello that will
// never come raise the same error. Both sets are then poisoned locally: any later registration of
// them throws at once, and stale messages about them are dropped. That is k messages from the one
// member that found it, the one O(k) sender of a failed registration: a member that is not
// waiting in a handshake would not pass a relayed Mismatch on, and those behind it would wait
// forever. Its bytes do not grow with k (large sets are named shortly, instance_sets.hpp).
//
// With a deadline (POPDIST_SYNC_TIMEOUT or the caller's timeout), a member still waiting when it
// passes starts the timed synchronize's roll call (roll_call.hpp) over the set's positions, its
// messages (Roll) on the handshake's tag: the members still waiting take part as its first
// message reaches them, and each throws TimeoutError naming exactly the members that did not take
// part, for roll_call_length. It costs ceil(log2 k) + 2 messages per member when one member is
// missing, where telling every member (GaveUp, as it was) cost k - 1. Every missing member is sent
// at least one of its messages: one that arrives late finds it when it first looks (or later a
// Final, the roll call's last word) and fails naming the members that gave up; one busy with
// another set keeps it for when it gets to this one. Before MPI_Comm_create_group every member
// looks once more for a Roll or a Mismatch about its set, so that a late member does not enter
// the creation alone. (A late member whose last Hello arrives in the instant between that look
// and a peer's deadline can still enter it: any timeout has that race.)
#include "protocols/handshake.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <set>
#include <string_view>

#include "mpi/clock.hpp"
#include "mpi/interrupts.hpp"
#include "mpi/late_look.hpp"
#include "mpi/matched_receive.hpp"
#include "mpi/mpi_call.hpp"
#include "mpi/pending_sends.hpp"
#include "popdist/error.hpp"
#include "protocols/census.hpp"
#include "protocols/instance_sets.hpp"
#include "protocols/roll_call.hpp"
#include "protocols/roll_call_driver.hpp"
#include "protocols/timed_rounds.hpp"

namespace popdist::detail {
namespace {

constexpr int kHandshakeTag = static_cast<int>(ControlTag::Handshake);

std::string id_text(const std::string& id) { return id.empty() ? std::string("no id") : fmt::format("id '{}'", id); }

}  // namespace

namespace {
/// Posts `message` to every instance of `to` except `me` (nonblocking: a peer that never receives
/// it must not hold this instance up).
template <class Instances>
void send_to_others(const HandshakeMessage& message, const Instances& to, int me, MPI_Comm control) {
  const auto bytes = encode(message);
  for (const auto instance : to) {
    if (instance != me) pending_sends().send(bytes, instance, kHandshakeTag, control);
  }
}
}  // namespace

void Handshake::reset(double census_after) noexcept {
  census_after_ = census_after;
  stash_.clear();
  poisoned_.clear();
  completed_.clear();
  unfinished_.clear();
}

void Handshake::poison(const SetDigest& set, const std::string& text) { poisoned_.emplace(set, text); }

void Handshake::fail(const std::vector<int>& mine, const std::vector<int>& theirs, const std::string& text, int me,
                     MPI_Comm control) {
  const auto mine_digest = digest_of(mine);
  const auto theirs_digest = digest_of(theirs);
  poison(mine_digest, text);
  poison(theirs_digest, text);
  std::set<int> everyone(mine.begin(), mine.end());
  everyone.insert(theirs.begin(), theirs.end());
  send_to_others(HandshakeMessage{HandshakeMessage::Mismatch, mine_digest, {}, "", theirs_digest, text}, everyone, me,
                 control);
  throw UsageError(text);
}

void Handshake::give_up(const std::vector<int>& members, const std::vector<int>& missing, double seconds, int me,
                        const char* caller) {
  // Named after the call the user made: execute_on_instances and synchronize create their set's
  // communicator on first use, and "did not register it" would puzzle their callers.
  const bool registering = std::string_view(caller) == "register_communicator";
  const auto what = missing.empty()
                        ? std::string("every member came, but not before a member's timeout ran out")
                        : fmt::format("instance{} {} did not {} within {} s", missing.size() == 1 ? "" : "s",
                                      fmt::join(missing, ", "),
                                      registering ? "register it" : "come to create the set's communicator", seconds);
  const auto text = fmt::format("{} over {}: {} (instance {} gave up waiting; the set cannot be created in this job)",
                                caller, format_set(members), what, me);
  poison(digest_of(members), text);
  throw TimeoutError(text, missing);
}

void Handshake::fail_late(const std::vector<int>& members, const std::vector<int>& givers, double seconds, int me,
                          const char* caller) {
  const auto text = fmt::format("{} over {}: instance{} {} gave up waiting for this instance (instance {}) before it "
                                "came (their timeout: {} s); the set cannot be created in this job",
                                caller, format_set(members), givers.size() == 1 ? "" : "s", fmt::join(givers, ", "), me,
                                seconds);
  poison(digest_of(members), text);
  throw TimeoutError(text, {me});
}

namespace {

/// Before a member that still waits tells its partners that it is there (see the top).
constexpr auto kEscalateAfter = std::chrono::milliseconds(250);

/// One registration's handshake, in the order of its steps (see the top of this file).
class HandshakeRun {
 public:
  HandshakeRun(const std::vector<int>& members, const SetDigest& digest, const std::string& id, int me,
               MPI_Comm control, const Deadline& deadline)
      : members_(members), digest_(digest), id_(id), me_(me), control_(control) {
    const auto count = members.size();
    const auto position = position_of(members, me);
    // The timed synchronize's schedule (timed_rounds.hpp): recursive doubling, members beyond
    // the largest power of two folded in; a step without a receive is in from the start.
    for (const auto& step : recursive_doubling_steps(count, position)) {
      send_to_.push_back(step.sends ? members[step.send_to] : kNoPartner);
      receive_from_.push_back(step.receives ? members[step.receive_from] : kNoPartner);
      received_.push_back(step.receives ? 0 : 1);
    }
    escalate_after_ = std::chrono::duration_cast<MpiClock::duration>(kEscalateAfter);
    if (deadline.bounded()) escalate_after_ = std::min(escalate_after_, seconds_on_mpi_clock(deadline.seconds() / 4));
  }

  [[nodiscard]] bool done() const noexcept { return next_send_ == send_to_.size() && remaining() == 0; }
  [[nodiscard]] std::size_t remaining() const noexcept {
    return static_cast<std::size_t>(std::count(received_.begin(), received_.end(), 0));
  }
  [[nodiscard]] bool is_member(int instance) const {
    return std::binary_search(members_.begin(), members_.end(), instance);
  }
  /// The id this member stands for: its own, or the first one it learned from the Hellos it
  /// received when it has none. Relayed in its Hellos, so that two members with different ids
  /// meet through members without one (an exchange of ceil(log2 k) steps does not connect every pair).
  [[nodiscard]] const std::string& known_id() const noexcept { return known_id_; }
  [[nodiscard]] bool ids_clash(const HandshakeMessage& message) const {
    return !known_id_.empty() && !message.id.empty() && message.id != known_id_;
  }

  /// Takes a Hello or Presence about this set from `source`: a step that came in, a presence
  /// noted, or nothing new. Ids are checked by the caller.
  void take(int source, const HandshakeMessage& message) {
    if (known_id_.empty()) known_id_ = message.id;
    if (message.kind != HandshakeMessage::Hello) return;
    for (std::size_t step = 0; step < receive_from_.size(); ++step) {
      if (receive_from_[step] == source) received_[step] = 1;
    }
  }

  /// Sends every step whose predecessors are all in (step 0 at once).
  void send_ready_steps() {
    while (next_send_ < send_to_.size() && (next_send_ == 0 || received_[next_send_ - 1] != 0)) {
      if (send_to_[next_send_] != kNoPartner) {  // (a step that only receives sends nothing)
        const HandshakeMessage hello{HandshakeMessage::Hello, digest_, {}, known_id_, {}, ""};
        pending_sends().send(encode(hello), send_to_[next_send_], kHandshakeTag, control_);
      }
      ++next_send_;
    }
  }

  /// Once waiting has lasted long enough: a Presence to the partners this member waits for and
  /// sends to, once (see the top).
  void escalate_if_due(MpiClock::duration waited) {
    if (!told_partners_ && waited >= escalate_after_) {
      told_partners_ = true;
      std::vector<int> partners;
      for (const auto partner : send_to_) {
        if (partner != kNoPartner) partners.push_back(partner);
      }
      for (std::size_t step = 0; step < receive_from_.size(); ++step) {
        if (received_[step] == 0) partners.push_back(receive_from_[step]);
      }
      std::sort(partners.begin(), partners.end());
      partners.erase(std::unique(partners.begin(), partners.end()), partners.end());
      send_to_others(HandshakeMessage{HandshakeMessage::Presence, digest_, {}, known_id_, {}, ""}, partners, me_,
                     control_);
    }
  }

 private:
  const std::vector<int>& members_;
  SetDigest digest_;
  const std::string& id_;
  std::string known_id_{id_};
  int me_;
  MPI_Comm control_;
  std::vector<int> send_to_;       ///< by step
  std::vector<int> receive_from_;  ///< by step
  std::vector<char> received_;     ///< by step
  std::size_t next_send_ = 0;
  bool told_partners_ = false;
  MpiClock::duration escalate_after_{};
};

}  // namespace

void Handshake::run(const std::vector<int>& members, const std::string& id, int me, MPI_Comm control,
                    const Deadline& deadline, const char* caller) {
  const auto digest = digest_of(members);
  if (const auto found = poisoned_.find(digest); found != poisoned_.end()) {
    throw UsageError(found->second);
  }
  if (members.size() < 2) return;
  HandshakeRun run(members, digest, id, me, control, deadline);
  unfinished_[digest] = Unfinished{members, id};

  const auto mismatch_text = [&](int other, const HandshakeMessage& hello) {
    if (hello.digest == digest) {
      return fmt::format("register_communicator: inconsistent registration: {} is registered under {} and under {} "
                         "(the first {} instance {}, the second came from instance {}); every member must use the "
                         "same id",
                         format_set(members), id_text(run.known_id()), id_text(hello.id),
                         run.known_id() == id ? "is the one of" : "was passed on to", me, other);
    }
    return fmt::format("register_communicator: inconsistent registration: instance {} is creating {} ({}) while "
                       "instance {} is creating {} ({}); every member of a set must register it, and two instances "
                       "must register the sets they share in the same order",
                       me, format_set(members), id_text(id), other, format_set(hello.set), id_text(hello.id));
  };
  // A member of this set that names another set by its digest is asked for that set's list
  // once, to name it in the error (SetList, judged when it comes).
  std::set<std::pair<int, SetDigest>> asked;
  const auto ask_for_list = [&](int source, const SetDigest& theirs) {
    if (!asked.emplace(source, theirs).second) return;
    pending_sends().send(encode(HandshakeMessage{HandshakeMessage::ListRequest, theirs, {}, "", {}, ""}), source,
                         kHandshakeTag, control);
  };
  // A Hello, Presence, SetList or Notice: about this set (a step or a presence; a different id is
  // an error), about another set from a member of this one (an error: see the top; its list is
  // asked for first when the message has only its digest), a Notice of another set's census
  // (an error when a member of this set waits there), or about another set from a non-member
  // (kept for when this instance creates that set: returns false).
  const auto judge = [&](int source, const HandshakeMessage& message) {
    if (message.kind == HandshakeMessage::Notice && message.digest != digest) {
      // This instance is missing from that set (census.hpp): a member of this set that waits
      // there registers the two sets in the other order.
      for (std::size_t i = 0; i < message.set.size(); ++i) {
        const auto other = message.set[i];
        if (other != me && RollCall::bit(message.present, i) && run.is_member(other)) {
          fail(members, message.set, mismatch_text(other, message), me, control);
        }
      }
      return false;  // kept: it may show a conflict with a set this instance registers later
    }
    if (message.digest == digest) {
      if (run.ids_clash(message)) fail(members, members, mismatch_text(source, message), me, control);
      run.take(source, message);
      return true;
    }
    if (!run.is_member(source)) return false;
    if (message.set.empty()) {
      ask_for_list(source, message.digest);
      return true;
    }
    fail(members, message.set, mismatch_text(source, message), me, control);
  };
  // A ListRequest: the list of this set, or of one whose handshake did not complete here (a
  // member that failed or was interrupted), under the id this instance stands for.
  const auto answer = [&](int source, const HandshakeMessage& request) {
    const std::vector<int>* list = nullptr;
    const std::string* list_id = nullptr;
    if (request.digest == digest) {
      list = &members;
      list_id = &run.known_id();
    } else if (const auto found = unfinished_.find(request.digest); found != unfinished_.end()) {
      list = &found->second.members;
      list_id = &found->second.id;
    }
    if (list == nullptr) return;  // a set this instance never started (cannot come from this binary)
    pending_sends().send(encode(HandshakeMessage{HandshakeMessage::SetList, request.digest, *list, *list_id, {}, ""}),
                         source, kHandshakeTag, control);
  };

  // The roll call (see the top), once this member's deadline passed or a member's roll call
  // reached it while it waited; `roll_seconds`: the timeout it runs for.
  std::optional<RollCall> roll;
  double roll_seconds = 0;
  auto roll_start = MpiClock::now();
  const auto roll_elapsed = [&roll_start] { return std::chrono::duration<double>(MpiClock::now() - roll_start).count(); };
  const auto start_roll_call = [&](double seconds) {
    roll_seconds = seconds;
    roll_start = MpiClock::now();
    roll.emplace(members.size(), position_of(members, me), roll_call_window(seconds),
                 [&](std::size_t to, RollCall::Kind kind, int level, const RollCall::Bitmap& present) {
                   HandshakeMessage message{HandshakeMessage::Roll, digest, {}, "", {}, ""};
                   message.roll_kind = static_cast<std::int32_t>(kind);
                   message.roll_level = level;
                   message.seconds = roll_seconds;
                   message.present = present;
                   pending_sends().send(encode(message), members[to], kHandshakeTag, control);
                 });
    roll->start(0);
  };
  // A Roll about this set: a step of the roll call this member takes part in (it joins as the
  // first one reaches it while it waits), or the news that the others gave up before this member
  // came (found as it arrives, or a Final: the roll call is over).
  const auto take_roll = [&](int source, const HandshakeMessage& message, bool arriving) {
    const auto kind = static_cast<RollCall::Kind>(message.roll_kind);
    if (!roll && (arriving || kind == RollCall::Kind::Final)) {
      std::set<int> givers;
      RollCall::add_takers(givers, source, message.present, members);
      givers.erase(me);
      fail_late(members, {givers.begin(), givers.end()}, message.seconds, me, caller);
    }
    if (!roll) start_roll_call(deadline.bounded() ? deadline.seconds() : message.seconds);
    roll->receive(position_of(members, source), kind, message.roll_level, message.present, roll_elapsed());
  };

  // Without a deadline, the census (census.hpp) once the wait lasts; its times are seconds since `start`.
  const auto start = MpiClock::now();
  const auto since_start = [&start] { return std::chrono::duration<double>(MpiClock::now() - start).count(); };
  std::optional<Census> census;
  if (!deadline.bounded()) {
    census.emplace(
        members.size(), position_of(members, me), census_after_, 0.0,
        [&](std::size_t to, int epoch, int kind, int level, const RollCall::Bitmap& present) {
          HandshakeMessage message{HandshakeMessage::Census, digest, {}, "", {}, ""};
          message.census_epoch = epoch;
          message.roll_kind = kind;
          message.roll_level = level;
          message.present = present;
          pending_sends().send(encode(message), members[to], kHandshakeTag, control);
        },
        [&](std::size_t to, const RollCall::Bitmap& present) {
          HandshakeMessage notice{HandshakeMessage::Notice, digest, members, run.known_id(), {}, ""};
          notice.present = present;
          pending_sends().send(encode(notice), members[to], kHandshakeTag, control);
        });
  }
  // A Notice is kept until this instance registers its set or one that it shows a conflict with;
  // only the latest of a set's Notices is kept (a census every few minutes at most would
  // otherwise pile them up).
  const auto keep = [&](int source, HandshakeMessage message) {
    if (message.kind == HandshakeMessage::Notice) {
      stash_.erase(std::remove_if(stash_.begin(), stash_.end(),
                                  [&](const Received& kept) {
                                    return kept.message.kind == HandshakeMessage::Notice &&
                                           kept.message.digest == message.digest;
                                  }),
                   stash_.end());
    }
    stash_.push_back({source, std::move(message)});
  };

  // Messages that arrived during earlier handshakes (a Roll among them came before this member did).
  for (auto it = stash_.begin(); it != stash_.end();) {
    if (poisoned_.count(it->message.digest) != 0 || completed_.count(it->message.digest) != 0) {
      it = stash_.erase(it);
      continue;
    }
    const auto source = it->source;
    const auto message = it->message;
    if (message.kind == HandshakeMessage::Roll) {
      if (message.digest == digest) take_roll(source, message, true);
      ++it;  // another set's: kept for when this instance creates it
    } else if (message.digest == digest || run.is_member(source) || message.kind == HandshakeMessage::Notice) {
      it = judge(source, message) ? stash_.erase(it) : it + 1;
    } else {
      ++it;
    }
  }
  run.send_ready_steps();

  // Takes one handshake message if one is there (false when none): a matched probe
  // (mpi/matched_receive.hpp) so that receiving is race-free even with MPI_THREAD_MULTIPLE;
  // polling (not a blocking probe) so that the MPI lock, when calls are serialized, is not held
  // while we wait. `arriving`: taken in the first polls, so there before this member came.
  const auto take_one = [&](bool arriving) {
    MPI_Status status;
    std::vector<char> buffer;
    if (!take_message(kHandshakeTag, control, buffer, status)) return false;
    const auto source = status.MPI_SOURCE;
    auto message = decode(buffer, source);
    if (message.kind == HandshakeMessage::ListRequest) {
      answer(source, message);
      return true;
    }
    if (message.kind == HandshakeMessage::Mismatch) {
      poison(message.digest, message.text);
      poison(message.other_digest, message.text);
      if (message.digest == digest || message.other_digest == digest) {
        throw UsageError(message.text);
      }
      return true;  // about sets this instance has not reached yet: they are poisoned now
    }
    // A stale message from a failed or finished creation.
    if (poisoned_.count(message.digest) != 0 || completed_.count(message.digest) != 0) return true;
    if (message.kind == HandshakeMessage::Census) {
      // This set's census, which this member takes part in (or, in its first looks, notes as one
      // that went on without it); another set's, or one that reaches a member with a deadline:
      // nothing to keep (that census takes this member for missing and sends it a Notice).
      if (census && message.digest == digest) {
        if (arriving) {
          census->noted_on_arrival(message.census_epoch, since_start());
        } else {
          census->receive(position_of(members, source), message.census_epoch, message.roll_kind, message.roll_level,
                          message.present, since_start());
        }
      }
      return true;
    }
    if (message.kind == HandshakeMessage::Roll) {
      if (message.digest == digest) {
        take_roll(source, message, arriving);
      } else {
        stash_.push_back({source, std::move(message)});  // a set this instance gets to later: it fails then
      }
      return true;
    }
    if (!judge(source, message)) keep(source, std::move(message));
    if (!roll) run.send_ready_steps();
    return true;
  };

  InterruptPoll interrupts;
  // Every member stays roll_call_length, answering those that still ask, as in a timed
  // synchronize (roll_call_driver.hpp).
  const auto roll_call_and_give_up = [&] {
    drive_roll_call(*roll, roll_start, roll_seconds, members.size(), [&](double) {
      while (take_one(false)) {
      }
      interrupts();
    });
    std::vector<int> missing;
    for (const auto position : roll->missing()) missing.push_back(members[position]);
    give_up(members, missing, roll_seconds, me, caller);
  };

  // A Roll taken in the first polls came before this member did: the others gave up on it. Several
  // passes (mpi/late_look.hpp): one may miss a message that was sent long ago.
  const int arrival_passes = late_look_passes(8);
  int empty_polls = 0;
  while (!run.done() && !roll) {
    if (take_one(empty_polls < arrival_passes)) continue;
    ++empty_polls;
    if (deadline.passed()) {
      start_roll_call(deadline.seconds());
      break;
    }
    // Spin briefly, then yield so that oversubscribed peers run, then sleep so that a long wait
    // (a member that registers much later) does not burn a core.
    const auto waited = MpiClock::now() - start;
    run.escalate_if_due(waited);
    if (census) census->poll(since_start());
    pause_between_polls(waited, std::chrono::microseconds(50), std::chrono::milliseconds(10),
                        std::chrono::microseconds(100));
    if (waited > std::chrono::milliseconds(10)) interrupts();  // Ctrl-C while a member has not come (popdist/interrupts.hpp)
  }
  if (roll) roll_call_and_give_up();
  // One more look for a Roll or Mismatch about this set before entering the creation. A notice
  // sent long ago can still sit in MPI's queues behind the Hellos: each probe is one progress
  // pass, so look with several passes (a few microseconds), not once.
  if (deadline.bounded()) {
    const auto until = MpiClock::now() + std::chrono::milliseconds(1);
    const int passes = late_look_passes(16);
    for (int pass = 0; pass < passes && (pass < 4 || MpiClock::now() < until); ++pass) {
      while (take_one(true)) {  // a Roll now: a member gave up before this one completed
      }
    }
  }
  completed_.insert(digest);
  unfinished_.erase(digest);
  pending_sends().reap();
}

}  // namespace popdist::detail
