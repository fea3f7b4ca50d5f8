#pragma once
// The handshake every member runs before MPI_Comm_create_group, so that registering
// inconsistent sets is an error on every instance involved instead of a hang (DESIGN.md 5).

#include <mpi.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "mpi/deadline.hpp"

namespace popdist::detail {

/// One handshake message on the control communicator.
struct HandshakeMessage {
  enum Kind : int { Hello = 1, Mismatch = 2, GaveUp = 3, Presence = 4 };
  int kind = Hello;
  /// Hello, Presence, GaveUp: the set the sender is creating; Mismatch: one of the two sets
  std::vector<int> set;
  std::string id;              ///< Hello, Presence: the id it registers the set under ("" when none)
  std::vector<int> other_set;  ///< Mismatch: the other set; GaveUp: the members that did not come
  std::string text;            ///< Mismatch, GaveUp: the error the sender raised
};

/// Byte encoding of a message (both ends run the same binary).
[[nodiscard]] std::vector<char> encode(const HandshakeMessage& message);
/// Decodes; throws Error for a malformed buffer (names the sender).
[[nodiscard]] HandshakeMessage decode(const std::vector<char>& bytes, int source);

class Handshake {
 public:
  /// Forgets the stash and the poisoned sets (init and finalize).
  void reset() noexcept;

  /// Returns once every member of `members` (sorted, containing `me`) is known to be creating
  /// the same set under the same id: a recursive-doubling exchange of Hellos, O(log k) messages per
  /// member (handshake.cpp says why and how). Throws UsageError when another member is creating
  /// a different set that contains this instance, or registers the same set under a different
  /// id; before throwing it tells every instance of both sets, so none of them waits for a
  /// creation that will never happen. A set involved in such an error is "poisoned":
  /// registering it again throws the same error at once.
  /// Bounded by `deadline`: when members have not come by then, throws TimeoutError naming
  /// them, after telling every other member (GaveUp), so that a late member fails too instead
  /// of entering MPI_Comm_create_group alone; the set is then poisoned.
  /// `caller` is the public call that creates the set, for messages.
  void run(const std::vector<int>& members, const std::string& id, int me, MPI_Comm control,
           const Deadline& deadline = {}, const char* caller = "register_communicator");

 private:
  struct Received {
    int source = 0;
    HandshakeMessage message;
  };
  [[noreturn]] void fail(const std::vector<int>& mine, const std::vector<int>& theirs, const std::string& text,
                         int me, MPI_Comm control);
  void poison(const std::vector<int>& set, const std::string& text);
  [[noreturn]] void give_up(const std::vector<int>& members, const std::set<int>& missing, double seconds, int me,
                            MPI_Comm control, const char* caller);

  std::vector<Received> stash_;                          ///< messages about sets we will create later
  std::map<std::vector<int>, std::string> poisoned_;     ///< set -> the error that poisoned it
  std::set<std::vector<int>> completed_;                 ///< sets whose handshake completed here
};

}  // namespace popdist::detail
