#include "protocols/timed/roll_call.hpp"

#include <algorithm>

namespace popdist::detail {
namespace {

/// The low `bits` bits of `value` in reverse order.
std::size_t bit_reversed(std::size_t value, int bits) {
  std::size_t out = 0;
  for (int b = 0; b < bits; ++b) out |= ((value >> b) & 1U) << (bits - 1 - b);
  return out;
}

}  // namespace

double roll_call_window(double seconds) noexcept { return std::clamp(seconds / 8, 0.02, 0.125); }

double roll_call_grace(double seconds) noexcept { return std::clamp(seconds / 2, 0.05, 1.0); }

double roll_call_settle(double seconds, std::size_t members) noexcept {
  std::size_t levels = 0;
  while ((std::size_t{2} << levels) <= members) ++levels;
  return static_cast<double>(levels + 5) * roll_call_window(seconds);
}

double roll_call_length(double seconds, std::size_t members) noexcept {
  return std::max(roll_call_grace(seconds), roll_call_settle(seconds, members) + 2 * roll_call_window(seconds));
}

RollCall::RollCall(std::size_t count, std::size_t position, double window, Send send)
    : count_(count), me_(position), window_(window), send_(std::move(send)), slot_(0),
      state_(count, State::Unknown), messaged_(count, 0) {
  while (p2_ * 2 <= count_) {
    p2_ *= 2;
    ++levels_;
  }
  slot_ = slot_of(me_);
  data_.resize(static_cast<std::size_t>(levels_));
  hold_.assign(static_cast<std::size_t>(levels_), 0);
}

void RollCall::start(double now) {
  if (role_ != Role::Idle) return;
  state_[me_] = State::Present;
  const bool extra = me_ >= p2_;
  const std::size_t fold_partner = extra ? me_ - p2_ : me_ + p2_;
  if (extra || fold_partner < count_) {
    role_ = Role::Folding;
    fold_until_ = now + window_;
    send(fold_partner, Kind::Fold, -1);
  } else {
    begin_acting();
  }
  advance(now);
}

void RollCall::receive(std::size_t from, Kind kind, int level, const Bitmap& present, double now) {
  if (from >= count_ || from == me_ || role_ == Role::Idle) return;
  if (role_ == Role::Settling && state_[from] == State::Unknown) state_[from] = State::Present;  // it sent something
  switch (kind) {
    case Kind::Probe:
      if (probed_by_.insert(from).second) send(from, Kind::Here, -1);
      break;
    case Kind::Here:
      break;
    case Kind::Fold:
      if (role_ == Role::Folding && slot_of(from) == slot_) {
        state_[from] = State::Present;
        if (me_ >= p2_) {
          role_ = Role::Follower;  // the first position acts for the slot and tells this one at the end
        } else {
          begin_acting();
        }
      }
      break;
    case Kind::Request:
    case Kind::Answer:
      if (level < 0 || level >= levels_ || !in_block(level, from)) break;
      if (kind == Kind::Request) requests_.emplace(std::make_pair(level, from), now);
      if (!data_[static_cast<std::size_t>(level)].first) data_[static_cast<std::size_t>(level)] = {true, present};
      break;
    case Kind::Hold:
      if (level >= 0 && level < levels_ && in_block(level, from)) hold_[static_cast<std::size_t>(level)] = 1;
      break;
    case Kind::Final:
      if (role_ == Role::Follower && from == me_ - p2_) {
        for (std::size_t i = 0; i < count_; ++i) state_[i] = bit(present, i) ? State::Present : State::Absent;
        state_[me_] = State::Present;
        role_ = Role::Done;
      }
      break;
  }
  advance(now);
}

void RollCall::settle(double now) {
  if (role_ == Role::Idle || role_ == Role::Done || role_ == Role::Settling) return;
  role_ = Role::Settling;
  settle_until_ = now + window_;
  for (std::size_t i = 0; i < count_; ++i) {
    if (state_[i] == State::Unknown) send(i, Kind::Probe, -1);
  }
}

void RollCall::poll(double now) {
  if (role_ == Role::Settling && now >= settle_until_) {
    for (auto& state : state_) {
      if (state == State::Unknown) state = State::Absent;  // silent for a window
    }
    role_ = Role::Done;
  } else if (role_ == Role::Folding && now >= fold_until_) {
    state_[me_ >= p2_ ? me_ - p2_ : me_ + p2_] = State::Absent;  // silent for a window
    begin_acting();
  } else if (role_ == Role::Actor && level_ < levels_ && !data_[static_cast<std::size_t>(level_)].first &&
             hold_[static_cast<std::size_t>(level_)] == 0 && asked_ > 0 && now >= level_until_) {
    if (asked_ < asking_.size()) {
      ask_next(now);
    } else {
      for (const auto position : block(level_)) state_[position] = State::Absent;  // nobody answered
      finish_level();
    }
  }
  advance(now);
  hold_requests(now);
}

std::vector<std::size_t> RollCall::missing() const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < count_; ++i) {
    if (state_[i] != State::Present) out.push_back(i);
  }
  return out;
}

void RollCall::send(std::size_t to, Kind kind, int level) {
  ++sent_;
  messaged_[to] = 1;
  if (kind == Kind::Request || kind == Kind::Answer) sent_at_.insert({level, to});
  send_(to, kind, level, known());
}

void RollCall::begin_acting() {
  role_ = Role::Actor;
  level_ = 0;
  asked_ = 0;
}

/// Asks the next batch of this level's candidates (1, 1, 2, 4, ... per window).
void RollCall::ask_next(double now) {
  const auto end = std::min(asking_.size(), asked_ == 0 ? std::size_t{1} : 2 * asked_);
  for (; asked_ < end; ++asked_) {
    if (sent_at_.count({level_, asking_[asked_]}) == 0) send(asking_[asked_], Kind::Request, level_);
  }
  level_until_ = now + window_of(level_);
}

void RollCall::advance(double now) {
  while (role_ == Role::Actor) {
    answer_requests();
    if (level_ == levels_) {
      finish();
      break;
    }
    auto& data = data_[static_cast<std::size_t>(level_)];
    if (data.first) {
      merge_block(level_, data.second);
      finish_level();
      continue;
    }
    if (asked_ == 0) {
      asking_ = candidates(level_);
      ask_next(now);
    }
    break;
  }
  if (role_ == Role::Done) answer_requests();
}

void RollCall::finish_level() {
  ++level_;
  asked_ = 0;
  asking_.clear();
}

void RollCall::finish() {
  role_ = Role::Done;
  for (std::size_t i = 0; i < count_; ++i) {
    if (state_[i] == State::Unknown) state_[i] = State::Absent;  // cannot happen: every block was settled
  }
  // The extra folded into this slot waits for the result.
  if (me_ < p2_ && me_ + p2_ < count_ && state_[me_ + p2_] == State::Present) send(me_ + p2_, Kind::Final, -1);
  // A notice for every absent member whose nearest present member this is (slot distance, then
  // first positions before extras), so that it fails when it comes late.
  std::vector<std::size_t> present_slots;  // sorted, each once
  for (std::size_t slot = 0; slot < p2_; ++slot) {
    if (state_[slot] == State::Present || (slot + p2_ < count_ && state_[slot + p2_] == State::Present)) {
      present_slots.push_back(slot);
    }
  }
  for (std::size_t absent = 0; absent < count_; ++absent) {
    if (state_[absent] != State::Absent || messaged_[absent] != 0) continue;
    const auto slot = nearest_slot(present_slots, slot_of(absent));
    const auto nearest = state_[slot] == State::Present ? slot : slot + p2_;
    if (nearest == me_) send(absent, Kind::Final, -1);
  }
}

/// The slot of `sorted_slots` (not empty) whose XOR with `slot` is the smallest: bit by bit from
/// the top, the slots that agree with `slot` there when there are any. Within the range kept so
/// far every slot has the same higher bits, so those with the bit clear come first.
/// O(levels x log k), where comparing with every slot made the notices O(absent x k).
std::size_t RollCall::nearest_slot(const std::vector<std::size_t>& sorted_slots, std::size_t slot) const {
  auto low = sorted_slots.begin();
  auto high = sorted_slots.end();
  for (int bit = levels_ - 1; bit >= 0; --bit) {
    const std::size_t mask = std::size_t{1} << bit;
    const auto middle = std::partition_point(low, high, [mask](std::size_t candidate) { return (candidate & mask) == 0; });
    if ((slot & mask) != 0) {
      if (middle != high) low = middle;
    } else if (middle != low) {
      high = middle;
    }
  }
  return *low;
}

/// Answers the requests of the levels this actor has reached, once per requester and level,
/// unless its own level message went to the requester already.
void RollCall::answer_requests() {
  for (auto it = requests_.begin(); it != requests_.end();) {
    const auto [level, from] = it->first;
    if (role_ != Role::Done && level > level_) {
      ++it;
      continue;
    }
    if (sent_at_.count({level, from}) == 0) send(from, Kind::Answer, level);
    it = requests_.erase(it);
  }
}

/// Tells a requester that this member is here and will answer, when it has held the request for
/// all but half a window of the requester's window: a member still settling the levels below
/// (asking absent members) would otherwise be given up as absent. Rare: windows grow by one per
/// level, so a member that waited a window for an absent one at a level below still answers in
/// time without it.
void RollCall::hold_requests(double now) {
  if (role_ != Role::Folding && role_ != Role::Actor) return;
  for (const auto& [request, since] : requests_) {
    if (now - since >= window_of(request.first) - window_ / 2 && held_.insert(request).second) send(request.second, Kind::Hold, request.first);
  }
}

void RollCall::merge_block(int level, const Bitmap& present) {
  for (const auto position : block(level)) state_[position] = bit(present, position) ? State::Present : State::Absent;
}

RollCall::Bitmap RollCall::known() const {
  Bitmap bits(bytes_for(count_), 0);
  for (std::size_t i = 0; i < count_; ++i) {
    if (state_[i] == State::Present) bits[i / 8] = static_cast<std::uint8_t>(bits[i / 8] | (1U << (i % 8)));
  }
  return bits;
}

std::vector<std::size_t> RollCall::block(int level) const {
  const std::size_t size = std::size_t{1} << level;
  const std::size_t first = ((slot_ >> level) ^ 1U) << level;
  std::vector<std::size_t> positions;
  for (std::size_t slot = first; slot < first + size; ++slot) {
    positions.push_back(slot);
    if (slot + p2_ < count_) positions.push_back(slot + p2_);
  }
  return positions;
}

bool RollCall::in_block(int level, std::size_t position) const {
  return (slot_of(position) >> level) == ((slot_ >> level) ^ 1U);
}

std::vector<std::size_t> RollCall::candidates(int level) const {
  const std::size_t size = std::size_t{1} << level;
  const std::size_t natural = slot_ ^ size;
  std::vector<std::size_t> firsts;
  std::vector<std::size_t> extras;
  // The second try: the natural partner's neighbour across half the block (its first position's
  // offset 2^(level-1) + 1), a member that no other level's second try of the same absent member
  // goes to (those go to the partners of its own levels, XOR 2^j, when bit-reversed).
  const std::size_t second = level == 0 ? 0 : (size / 2) | 1U;
  for (std::size_t t = 0; t < size; ++t) {
    const auto offset = t == 1 ? second : bit_reversed(t, level) == second ? bit_reversed(1, level) : bit_reversed(t, level);
    const auto slot = natural ^ offset;
    firsts.push_back(slot);
    if (slot + p2_ < count_) extras.push_back(slot + p2_);
  }
  // After the natural partner, first positions without an extra before those with one: those
  // send two messages more already (the fold's), and answering a second try would add a third.
  std::stable_partition(firsts.begin() + 1, firsts.end(), [this](std::size_t slot) { return slot + p2_ >= count_; });
  firsts.insert(firsts.end(), extras.begin(), extras.end());
  return firsts;
}

}  // namespace popdist::detail
