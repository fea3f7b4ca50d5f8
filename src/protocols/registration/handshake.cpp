// Registration's handshake (handshake.hpp): before MPI_Comm_create_group, the members make sure
// they all create the same set under the same id, so that a disagreement is an error on every
// instance involved instead of a hang inside MPI. A recursive-doubling exchange of Hellos (the
// timed synchronize's schedule, timed_rounds.hpp) on one tag for every set (messages are judged
// by their content), a Presence and, without a deadline, a census when the wait lasts; with a
// deadline, a roll call names the members that did not come. Handshake::run reads as the steps of
// one registration (Handshake::Session). Why each of these, and what they cost:
// docs/guide/protocols.md, "Registration's handshake".
#include "protocols/registration/handshake.hpp"

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
#include "protocols/instance_sets.hpp"
#include "protocols/registration/census.hpp"
#include "protocols/timed/roll_call.hpp"
#include "protocols/timed/roll_call_driver.hpp"
#include "protocols/timed/timed_rounds.hpp"

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
                        const Caller& caller) {
  // Named after the call the user made: execute_on_instances and synchronize create their set's
  // communicator on first use, and "did not register it" would puzzle their callers.
  const bool registering = std::string_view(caller.name) == caller.registration;
  const auto what = missing.empty()
                        ? std::string("every member came, but not before a member's timeout ran out")
                        : fmt::format("instance{} {} did not {} within {} s", missing.size() == 1 ? "" : "s",
                                      fmt::join(missing, ", "),
                                      registering ? "register it" : "come to create the set's communicator", seconds);
  const auto text = fmt::format("{} over {}: {} (instance {} gave up waiting; the set cannot be created in this job)",
                                caller.name, format_set(members), what, me);
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

/// Before a member that still waits tells its partners that it is there (docs/guide/protocols.md).
constexpr auto kEscalateAfter = std::chrono::milliseconds(250);

/// The exchange of Hellos of one registration: its steps' partners, and what came in
/// (docs/guide/protocols.md).
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
  /// sends to, once (docs/guide/protocols.md).
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

/// One registration's handshake: the steps of docs/guide/protocols.md, as functions a reader can
/// follow from Handshake::run. It reads and writes the handshake's state (the stash, the poisoned,
/// the unfinished sets), which outlives it.
class Handshake::Session {
 public:
  Session(Handshake& owner, const std::vector<int>& members, const SetDigest& digest, const std::string& id, int me,
          MPI_Comm control, const Deadline& deadline, const Caller& caller)
      : owner_(owner),
        members_(members),
        digest_(digest),
        id_(id),
        me_(me),
        control_(control),
        deadline_(deadline),
        caller_(caller),
        run_(members, digest, id, me, control, deadline) {
    if (!deadline.bounded()) start_census();
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void replay_stash();
  void wait_for_members();
  void look_before_creation();

 private:
  [[nodiscard]] double since_start() const { return std::chrono::duration<double>(MpiClock::now() - start_).count(); }
  [[nodiscard]] double roll_elapsed() const {
    return std::chrono::duration<double>(MpiClock::now() - roll_start_).count();
  }
  [[nodiscard]] std::string mismatch_text(int other, const HandshakeMessage& hello) const;
  void ask_for_list(int source, const SetDigest& theirs);
  bool judge(int source, const HandshakeMessage& message);
  void judge_notice(const HandshakeMessage& message);
  void answer(int source, const HandshakeMessage& request);
  void start_roll_call(double seconds);
  void take_roll(int source, const HandshakeMessage& message, bool arriving);
  void start_census();
  void take_census(int source, const HandshakeMessage& message, bool arriving);
  void keep(int source, HandshakeMessage message);
  bool take_one(bool arriving);
  bool take_mismatch(const HandshakeMessage& message);
  [[noreturn]] void roll_call_and_give_up();

  Handshake& owner_;
  const std::vector<int>& members_;
  const SetDigest digest_;
  const std::string& id_;
  const int me_;
  const MPI_Comm control_;
  const Deadline& deadline_;
  const Caller caller_;
  HandshakeRun run_;
  /// A member of this set that names another set by its digest is asked for that set's list
  /// once, to name it in the error (SetList, judged when it comes).
  std::set<std::pair<int, SetDigest>> asked_;
  /// The roll call (docs/guide/protocols.md), once this member's deadline passed or a member's roll call
  /// reached it while it waited; `roll_seconds_`: the timeout it runs for.
  std::optional<RollCall> roll_;
  double roll_seconds_ = 0;
  MpiClock::time_point roll_start_ = MpiClock::now();
  /// Without a deadline, the census (census.hpp) once the wait lasts; its times are seconds
  /// since `start_`.
  const MpiClock::time_point start_ = MpiClock::now();
  std::optional<Census> census_;
  InterruptPoll interrupts_;
};

std::string Handshake::Session::mismatch_text(int other, const HandshakeMessage& hello) const {
  if (hello.digest == digest_) {
    return fmt::format("{}: inconsistent registration: {} is registered under {} and under {} "
                       "(the first {} instance {}, the second came from instance {}); every member must use the "
                       "same id",
                       caller_.registration, format_set(members_), id_text(run_.known_id()), id_text(hello.id),
                       run_.known_id() == id_ ? "is the one of" : "was passed on to", me_, other);
  }
  return fmt::format("{}: inconsistent registration: instance {} is creating {} ({}) while "
                     "instance {} is creating {} ({}); every member of a set must register it, and two instances "
                     "must register the sets they share in the same order",
                     caller_.registration, me_, format_set(members_), id_text(id_), other, format_set(hello.set),
                     id_text(hello.id));
}

void Handshake::Session::ask_for_list(int source, const SetDigest& theirs) {
  if (!asked_.emplace(source, theirs).second) return;
  pending_sends().send(encode(HandshakeMessage{HandshakeMessage::ListRequest, theirs, {}, "", {}, ""}), source,
                       kHandshakeTag, control_);
}

/// A Notice of another set's census: this instance is missing from that set (census.hpp), so a
/// member of this set that waits there registers the two sets in the other order.
void Handshake::Session::judge_notice(const HandshakeMessage& message) {
  for (std::size_t i = 0; i < message.set.size(); ++i) {
    const auto other = message.set[i];
    if (other != me_ && RollCall::bit(message.present, i) && run_.is_member(other)) {
      owner_.fail(members_, message.set, mismatch_text(other, message), me_, control_);
    }
  }
}

/// A Hello, Presence, SetList or Notice: about this set (a step or a presence; a different id is an
/// error), about another set from a member of this one (an error: see docs/guide/protocols.md; its list
/// is asked for first when the message has only its digest), a Notice of another set's census (an error
/// when a member of this set waits there), or about another set from a non-member (kept for when this
/// instance creates that set: returns false).
bool Handshake::Session::judge(int source, const HandshakeMessage& message) {
  if (message.kind == HandshakeMessage::Notice && message.digest != digest_) {
    judge_notice(message);
    return false;  // kept: it may show a conflict with a set this instance registers later
  }
  if (message.digest == digest_) {
    if (run_.ids_clash(message)) owner_.fail(members_, members_, mismatch_text(source, message), me_, control_);
    run_.take(source, message);
    return true;
  }
  if (!run_.is_member(source)) return false;
  if (message.set.empty()) {
    ask_for_list(source, message.digest);
    return true;
  }
  owner_.fail(members_, message.set, mismatch_text(source, message), me_, control_);
}

/// A ListRequest: the list of this set, or of one whose handshake did not complete here (a
/// member that failed or was interrupted), under the id this instance stands for.
void Handshake::Session::answer(int source, const HandshakeMessage& request) {
  const std::vector<int>* list = nullptr;
  const std::string* list_id = nullptr;
  if (request.digest == digest_) {
    list = &members_;
    list_id = &run_.known_id();
  } else if (const auto found = owner_.unfinished_.find(request.digest); found != owner_.unfinished_.end()) {
    list = &found->second.members;
    list_id = &found->second.id;
  }
  if (list == nullptr) return;  // a set this instance never started (cannot come from this binary)
  pending_sends().send(encode(HandshakeMessage{HandshakeMessage::SetList, request.digest, *list, *list_id, {}, ""}),
                       source, kHandshakeTag, control_);
}

void Handshake::Session::start_roll_call(double seconds) {
  roll_seconds_ = seconds;
  roll_start_ = MpiClock::now();
  roll_.emplace(members_.size(), position_of(members_, me_), roll_call_window(seconds),
                [this](std::size_t to, RollCall::Kind kind, int level, const RollCall::Bitmap& present) {
                  HandshakeMessage message{HandshakeMessage::Roll, digest_, {}, "", {}, ""};
                  message.roll_kind = static_cast<std::int32_t>(kind);
                  message.roll_level = level;
                  message.seconds = roll_seconds_;
                  message.present = present;
                  pending_sends().send(encode(message), members_[to], kHandshakeTag, control_);
                });
  roll_->start(0);
}

/// A Roll about this set: a step of the roll call this member takes part in (it joins as the
/// first one reaches it while it waits), or the news that the others gave up before this member
/// came (found as it arrives, or a Final: the roll call is over).
void Handshake::Session::take_roll(int source, const HandshakeMessage& message, bool arriving) {
  const auto kind = static_cast<RollCall::Kind>(message.roll_kind);
  if (!roll_ && (arriving || kind == RollCall::Kind::Final)) {
    std::set<int> givers;
    RollCall::add_takers(givers, source, message.present, members_);
    givers.erase(me_);
    owner_.fail_late(members_, {givers.begin(), givers.end()}, message.seconds, me_, caller_.name);
  }
  if (!roll_) start_roll_call(deadline_.bounded() ? deadline_.seconds() : message.seconds);
  roll_->receive(position_of(members_, source), kind, message.roll_level, message.present, roll_elapsed());
}

void Handshake::Session::start_census() {
  census_.emplace(
      members_.size(), position_of(members_, me_), owner_.census_after_, 0.0,
      [this](std::size_t to, int epoch, int kind, int level, const RollCall::Bitmap& present) {
        HandshakeMessage message{HandshakeMessage::Census, digest_, {}, "", {}, ""};
        message.census_epoch = epoch;
        message.roll_kind = kind;
        message.roll_level = level;
        message.present = present;
        pending_sends().send(encode(message), members_[to], kHandshakeTag, control_);
      },
      [this](std::size_t to, const RollCall::Bitmap& present) {
        HandshakeMessage notice{HandshakeMessage::Notice, digest_, members_, run_.known_id(), {}, ""};
        notice.present = present;
        pending_sends().send(encode(notice), members_[to], kHandshakeTag, control_);
      });
}

/// This set's census, which this member takes part in (or, in its first looks, notes as one that
/// went on without it); another set's, or one that reaches a member with a deadline: nothing to
/// keep (that census takes this member for missing and sends it a Notice).
void Handshake::Session::take_census(int source, const HandshakeMessage& message, bool arriving) {
  if (!census_ || message.digest != digest_) return;
  if (arriving) {
    census_->noted_on_arrival(message.census_epoch, since_start());
  } else {
    census_->receive(position_of(members_, source), message.census_epoch, message.roll_kind, message.roll_level,
                     message.present, since_start());
  }
}

/// A Notice is kept until this instance registers its set or one that it shows a conflict with;
/// only the latest of a set's Notices is kept (a census every few minutes at most would
/// otherwise pile them up).
void Handshake::Session::keep(int source, HandshakeMessage message) {
  auto& stash = owner_.stash_;
  if (message.kind == HandshakeMessage::Notice) {
    stash.erase(std::remove_if(stash.begin(), stash.end(),
                               [&](const Received& kept) {
                                 return kept.message.kind == HandshakeMessage::Notice &&
                                        kept.message.digest == message.digest;
                               }),
                stash.end());
  }
  stash.push_back({source, std::move(message)});
}

/// Messages that arrived during earlier handshakes (a Roll among them came before this member
/// did), then this member's first step.
void Handshake::Session::replay_stash() {
  auto& stash = owner_.stash_;
  for (auto it = stash.begin(); it != stash.end();) {
    if (owner_.poisoned_.count(it->message.digest) != 0 || owner_.completed_.count(it->message.digest) != 0) {
      it = stash.erase(it);
      continue;
    }
    const auto source = it->source;
    const auto message = it->message;
    if (message.kind == HandshakeMessage::Roll) {
      if (message.digest == digest_) take_roll(source, message, true);
      ++it;  // another set's: kept for when this instance creates it
    } else if (message.digest == digest_ || run_.is_member(source) || message.kind == HandshakeMessage::Notice) {
      it = judge(source, message) ? stash.erase(it) : it + 1;
    } else {
      ++it;
    }
  }
  run_.send_ready_steps();
}

/// A Mismatch poisons both sets it names; it fails this handshake when this set is one of them.
/// Returns true (the message is taken).
bool Handshake::Session::take_mismatch(const HandshakeMessage& message) {
  owner_.poison(message.digest, message.text);
  owner_.poison(message.other_digest, message.text);
  if (message.digest == digest_ || message.other_digest == digest_) throw UsageError(message.text);
  return true;  // about sets this instance has not reached yet: they are poisoned now
}

/// Takes one handshake message if one is there (false when none): a matched probe
/// (mpi/matched_receive.hpp) so that receiving is race-free even with MPI_THREAD_MULTIPLE;
/// polling (not a blocking probe) so that the MPI lock, when calls are serialized, is not held
/// while we wait. `arriving`: taken in the first polls, so there before this member came.
bool Handshake::Session::take_one(bool arriving) {
  MPI_Status status;
  std::vector<char> buffer;
  if (!take_message(kHandshakeTag, control_, buffer, status)) return false;
  const auto source = status.MPI_SOURCE;
  auto message = decode(buffer, source, caller_.registration);
  if (message.kind == HandshakeMessage::ListRequest) {
    answer(source, message);
    return true;
  }
  if (message.kind == HandshakeMessage::Mismatch) return take_mismatch(message);
  // A stale message from a failed or finished creation.
  if (owner_.poisoned_.count(message.digest) != 0 || owner_.completed_.count(message.digest) != 0) return true;
  if (message.kind == HandshakeMessage::Census) {
    take_census(source, message, arriving);
  } else if (message.kind == HandshakeMessage::Roll && message.digest == digest_) {
    take_roll(source, message, arriving);
  } else if (message.kind == HandshakeMessage::Roll) {
    owner_.stash_.push_back({source, std::move(message)});  // a set this instance gets to later: it fails then
  } else {
    if (!judge(source, message)) keep(source, std::move(message));
    if (!roll_) run_.send_ready_steps();
  }
  return true;
}

/// Polls until every step is in, or a roll call starts (this member's deadline, or another's
/// roll call reaching it); then, if one started, the roll call and its TimeoutError.
void Handshake::Session::wait_for_members() {
  // A Roll taken in the first polls came before this member did: the others gave up on it.
  // Several passes (mpi/late_look.hpp): one may miss a message that was sent long ago.
  const int arrival_passes = late_look_passes(8);
  int empty_polls = 0;
  while (!run_.done() && !roll_) {
    if (take_one(empty_polls < arrival_passes)) continue;
    ++empty_polls;
    if (deadline_.passed()) {
      start_roll_call(deadline_.seconds());
      break;
    }
    // Spin briefly, then yield so that oversubscribed peers run, then sleep so that a long wait
    // (a member that registers much later) does not burn a core.
    const auto waited = MpiClock::now() - start_;
    run_.escalate_if_due(waited);
    if (census_) census_->poll(since_start());
    pause_between_polls(waited, std::chrono::microseconds(50), std::chrono::milliseconds(10),
                        std::chrono::microseconds(100));
    if (waited > std::chrono::milliseconds(10)) interrupts_();  // Ctrl-C while a member has not come
  }
  if (roll_) roll_call_and_give_up();
}

/// Every member stays roll_call_length, answering those that still ask, as in a timed
/// synchronize (roll_call_driver.hpp); then TimeoutError naming the members that did not come.
void Handshake::Session::roll_call_and_give_up() {
  drive_roll_call(*roll_, roll_start_, roll_seconds_, members_.size(), [this](double) {
    while (take_one(false)) {
    }
    interrupts_();
  });
  std::vector<int> missing;
  for (const auto position : roll_->missing()) missing.push_back(members_[position]);
  owner_.give_up(members_, missing, roll_seconds_, me_, caller_);
}

/// One more look for a Roll or Mismatch about this set before entering the creation. A notice
/// sent long ago can still sit in MPI's queues behind the Hellos: each probe is one progress
/// pass, so look with several passes (a few microseconds), not once.
void Handshake::Session::look_before_creation() {
  if (!deadline_.bounded()) return;
  const auto until = MpiClock::now() + std::chrono::milliseconds(1);
  const int passes = late_look_passes(16);
  for (int pass = 0; pass < passes && (pass < 4 || MpiClock::now() < until); ++pass) {
    while (take_one(true)) {  // a Roll now: a member gave up before this one completed
    }
  }
}

void Handshake::run(const std::vector<int>& members, const std::string& id, int me, MPI_Comm control,
                    const Deadline& deadline, const Caller& caller) {
  const auto digest = digest_of(members);
  if (const auto found = poisoned_.find(digest); found != poisoned_.end()) throw UsageError(found->second);
  if (members.size() < 2) return;
  Session session(*this, members, digest, id, me, control, deadline, caller);
  unfinished_[digest] = Unfinished{members, id};
  session.replay_stash();
  session.wait_for_members();
  session.look_before_creation();
  completed_.insert(digest);
  unfinished_.erase(digest);
  pending_sends().reap();
}

}  // namespace popdist::detail
