#pragma once
// Which set each member waited in, for a timed synchronize that failed (DESIGN.md 5: one set,
// one barrier). Members that name the same set meet however they name it; members that name
// *different* sets that overlap (instance 0 over {0, 1}, instance 1 over {1, 2}) each wait for
// the other in vain. A timeout then names the instances that did not arrive, but "did not arrive"
// hides that they were waiting too, elsewhere. So a failing timed synchronize tells the members
// it missed which set it waited in, and answers such a notice with its own: each error names the
// set every missing member used, when that member was in a timed synchronize within the roll
// call's grace (or still waiting in one, which answers between its polls).
//
// The same goes for two different popdist operations over the same members (instance 0 in
// synchronize(), instance 1 in one of popdist's own collectives, which meet apart:
// collective_meeting.hpp): neither can ever complete, so a member that hears of it fails at once,
// and each error names both operations.
//
// One fixed tag on the control communicator; a notice is the sender's entry hash, the hash of its
// members and a short description ("synchronize over {1, 2} ('pair')", "popdist.torch.
// DistributedSampler (allgather of bytes) over {0, 1}"), at most kMaxText bytes.

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace popdist::detail {

struct ProtocolSet;

class WaitedIn {
 public:
  static constexpr std::size_t kMaxText = 200;

  /// `entry`: the set this instance waits in.
  WaitedIn(const ProtocolSet& entry, MPI_Comm control);

  /// Tells `members` (other than the ones told already) which set this instance waits in.
  void tell(const std::vector<int>& members);

  /// Takes the notices queued for this instance: a notice about another set is remembered
  /// (heard()), and its sender is told this instance's set in return (once).
  void take();

  /// By instance: the description of the other set it waited in.
  [[nodiscard]] const std::map<int, std::string>& heard() const noexcept { return heard_; }

  /// A member heard of that waits in another operation over the same members, and that
  /// operation's description; -1 when none was heard of.
  [[nodiscard]] std::pair<int, std::string> other_operation() const;
  /// This instance's description of its own wait.
  [[nodiscard]] const std::string& mine() const noexcept { return text_; }

  /// " (instance 1 waited in synchronize over {1, 2} instead; ...)" for the `missing` heard of,
  /// or "" when none was.
  [[nodiscard]] std::string explain(const std::vector<int>& missing) const;

 private:
  const ProtocolSet& entry_;
  MPI_Comm control_;
  std::vector<char> mine_;  ///< the notice this instance sends
  std::string text_;        ///< its description
  std::uint64_t members_hash_ = 0;
  std::set<int> told_;
  std::map<int, std::string> heard_;
  std::set<int> same_members_;  ///< the instances of heard_ that wait over the same members
};

}  // namespace popdist::detail
