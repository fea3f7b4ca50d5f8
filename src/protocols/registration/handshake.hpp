#pragma once
// The handshake every member runs before MPI_Comm_create_group, so that registering
// inconsistent sets is an error on every instance involved instead of a hang (design.md §5.1).

#include <mpi.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "mpi/deadline.hpp"
#include "popdist/caller.hpp"
#include "protocols/registration/handshake_message.hpp"
#include "runtime/runtime_state.hpp"

namespace popdist::detail {

class Handshake {
 public:
  /// Forgets the stash, the poisoned and the unfinished sets (init and finalize); `census_after`:
  /// how long a registration without a deadline waits before its census (POPDIST_CENSUS_AFTER,
  /// census.hpp).
  void reset(double census_after = kDefaultCensusAfter) noexcept;

  /// Returns once every member of `members` (sorted, containing `me`) is known to be creating
  /// the same set under the same id: a recursive-doubling exchange of Hellos, O(log k) messages per
  /// member (handshake.cpp says why and how). Throws UsageError when another member is creating
  /// a different set that contains this instance, or registers the same set under a different
  /// id; before throwing it tells every instance of both sets, so none of them waits for a
  /// creation that will never happen. A set involved in such an error is "poisoned":
  /// registering it again throws the same error at once.
  /// Without a deadline, a census (census.hpp) finds the conflicts that no Hello or Presence
  /// reaches, once the wait lasts.
  /// Bounded by `deadline`: when members have not come by then, the members that did come find
  /// out which did not in a roll call (roll_call.hpp, O(log k) messages per member when few are
  /// missing) and throw TimeoutError naming them; every missing member is sent at least one of its
  /// messages, so that a late member fails too instead of entering MPI_Comm_create_group alone.
  /// The set is then poisoned.
  /// `caller` names the public call that creates the set and the registration call, for messages.
  void run(const std::vector<int>& members, const std::string& id, int me, MPI_Comm control,
           const Deadline& deadline = {}, const Caller& caller = "register_communicator");

 private:
  struct Received {
    int source = 0;
    HandshakeMessage message;
  };
  /// A set whose handshake started here and did not complete: what a ListRequest about it gets.
  struct Unfinished {
    std::vector<int> members;
    std::string id;
  };
  /// One registration's handshake, its steps as named functions (handshake.cpp).
  class Session;
  [[noreturn]] void fail(const std::vector<int>& mine, const std::vector<int>& theirs, const std::string& text,
                         int me, MPI_Comm control);
  void poison(const SetDigest& set, const std::string& text);
  /// After the roll call: TimeoutError naming `missing`, the members that did not take part.
  [[noreturn]] void give_up(const std::vector<int>& members, const std::vector<int>& missing, double seconds, int me,
                            const Caller& caller);
  /// For a member that arrives after `givers` ran their roll call without it: TimeoutError.
  [[noreturn]] void fail_late(const std::vector<int>& members, const std::vector<int>& givers, double seconds,
                              int me, const char* caller);

  std::vector<Received> stash_;                  ///< messages about sets we will create later
  std::map<SetDigest, std::string> poisoned_;    ///< set -> the error that poisoned it
  std::set<SetDigest> completed_;                ///< sets whose handshake completed here
  std::map<SetDigest, Unfinished> unfinished_;   ///< sets whose handshake started here and did not complete
  double census_after_ = kDefaultCensusAfter;
};

}  // namespace popdist::detail
