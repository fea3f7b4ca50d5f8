#pragma once
// Which set each member waited in, for a timed synchronize that failed: members that name
// different sets that overlap each wait for the other in vain, and "did not arrive" would hide
// that they were waiting too, elsewhere. So a failing timed wait tells the members it missed which
// set (or which of popdist's operations) it waited in, and answers such a notice with its own;
// two different operations over the same members fail at once, naming both. One fixed tag on the
// control communicator; a notice is two hashes and at most kMaxText bytes of text.
// docs/guide/protocols.md, "Which set each member waited in".

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
