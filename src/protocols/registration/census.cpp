#include "protocols/registration/census.hpp"

#include <algorithm>
#include <vector>

namespace popdist::detail {
namespace {

/// The census runs the roll call as a timed call of 1 s would: 125 ms windows, about a second
/// or two in all (roll_call.hpp). Long enough for members that poll every millisecond on a
/// loaded machine; short beside the waits that start a census.
constexpr double kRollSeconds = 1.0;

/// The kinds that ask the receiver for an answer: a member whose census is over answers them
/// with its number (Stale), so that the asker does not wait for answers that will not come.
bool asks(int kind) {
  const auto roll_kind = static_cast<RollCall::Kind>(kind);
  return roll_kind == RollCall::Kind::Fold || roll_kind == RollCall::Kind::Request || roll_kind == RollCall::Kind::Probe;
}

}  // namespace

Census::Census(std::size_t count, std::size_t position, double after, double now, Send send, Notify notify)
    : count_(count), position_(position), after_(after), send_(std::move(send)), notify_(std::move(notify)),
      next_at_(now + after) {}

double Census::interval() const noexcept { return after_ * static_cast<double>(1 << std::min(epoch_, 3)); }

void Census::noted_on_arrival(int epoch, double now) {
  if (epoch <= epoch_) return;
  epoch_ = epoch;
  next_at_ = now + interval();
}

void Census::begin(int epoch, double now) {
  epoch_ = epoch;
  call_.reset();
  call_.emplace(count_, position_, roll_call_window(kRollSeconds),
                [this, epoch](std::size_t to, RollCall::Kind kind, int level, const Bitmap& present) {
                  send_(to, epoch, static_cast<int>(kind), level, present);
                });
  call_start_ = now;
  notified_ = false;
  call_->start(0);
  after_step();
}

void Census::end(double now) {
  call_.reset();
  next_at_ = now + interval();
}

void Census::receive(std::size_t from, int epoch, int kind, int level, const Bitmap& present, double now) {
  if (from >= count_ || from == position_) return;
  if (kind == kStale) {
    if (epoch > epoch_) {  // this member missed censuses: it waits for the next one
      epoch_ = epoch;
      end(now);
    }
    return;
  }
  if (epoch > epoch_) begin(epoch, now);
  if (epoch == epoch_ && call_) {
    call_->receive(from, static_cast<RollCall::Kind>(kind), level, present, now - call_start_);
    after_step();
    return;
  }
  // An older census, or this one after this member's part in it ended.
  if (asks(kind) && staled_.emplace(from, epoch_).second) send_(from, epoch_, kStale, -1, {});
}

void Census::poll(double now) {
  if (!call_) {
    if (now >= next_at_) begin(epoch_ + 1, now);
    return;
  }
  const double elapsed = now - call_start_;
  if (!call_->done() && elapsed >= roll_call_settle(kRollSeconds, count_)) call_->settle(elapsed);  // once: it ends in a window
  call_->poll(elapsed);
  after_step();
  // Every member stays the roll call's length, answering those that still ask (roll_call.hpp).
  if (elapsed >= roll_call_length(kRollSeconds, count_)) end(now);
}

void Census::after_step() {
  if (call_ && call_->done() && !notified_) notify_missing();
}

void Census::notify_missing() {
  notified_ = true;
  const auto present = call_->known();
  if (!RollCall::bit(present, position_)) return;  // a member that took part knows itself present
  // The missing members are dealt out over the present ones in position order, from the nearest
  // present member before the first missing one (cyclically): the j-th missing member is told by
  // the (s + j)-th present one, for s that member's turn. Every present member ends the roll call
  // with the same bitmap, so each missing member hears from exactly one, none tells more than
  // ceil(missing / present), and one missing member hears from its nearest present member before
  // it. (That member told a whole run of missing members alone before: 64 Notices at 1,024
  // instances with the last 64 late.)
  std::size_t present_count = 0;
  std::size_t my_turn = 0;
  std::size_t first_missing = count_;
  for (std::size_t i = 0; i < count_; ++i) {
    if (!RollCall::bit(present, i)) {
      first_missing = std::min(first_missing, i);
      continue;
    }
    if (i == position_) my_turn = present_count;
    ++present_count;
  }
  // Every position before the first missing one is present: the member at first_missing - 1 is
  // the present one of that turn.
  const std::size_t start = first_missing > 0 ? first_missing - 1 : present_count - 1;
  const std::size_t my_offset = (my_turn + present_count - start) % present_count;
  std::size_t missing_seen = 0;
  for (std::size_t i = first_missing; i < count_; ++i) {
    if (RollCall::bit(present, i)) continue;
    if (missing_seen++ % present_count == my_offset) notify_(i, present);
  }
}

}  // namespace popdist::detail
