#pragma once
// The messages of registration's handshake (handshake.cpp) and their byte encoding. A Hello or
// Presence names its set by a fixed-size digest, so that a member's bytes grow like its messages,
// O(log k); a list travels only where a set is in question (SetList, Notice), and a Mismatch
// carries digests and its text. Why each message carries what it does: docs/guide/protocols.md,
// "Its messages".

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace popdist::detail {

/// A sorted set of instances by its size and two independent 64-bit hashes. Two different sets
/// with the same digest would be taken for one set and hang in MPI_Comm_create_group: the second
/// hash makes that a 2^-128 chance for any pair of sets instead of 2^-64.
struct SetDigest {
  std::int32_t count = 0;
  std::uint64_t hash = 0;  ///< instance_sets.hpp's set_hash (FNV-1a), the one the tags use
  std::uint64_t mix = 0;   ///< a sum of splitmix64 of position and member, independent of FNV-1a
  friend bool operator==(const SetDigest& a, const SetDigest& b) {
    return a.count == b.count && a.hash == b.hash && a.mix == b.mix;
  }
  friend bool operator!=(const SetDigest& a, const SetDigest& b) { return !(a == b); }
  friend bool operator<(const SetDigest& a, const SetDigest& b) {
    return std::tie(a.count, a.hash, a.mix) < std::tie(b.count, b.hash, b.mix);
  }
};

/// The digest of `sorted_members` (the same on every instance and every run).
[[nodiscard]] SetDigest digest_of(const std::vector<int>& sorted_members) noexcept;

/// One handshake message on the control communicator.
struct HandshakeMessage {
  enum Kind : int {
    Hello = 1, Mismatch = 2, Roll = 3, Presence = 4, ListRequest = 5, SetList = 6, Census = 7, Notice = 8
  };
  HandshakeMessage() = default;
  /// Every kind but Roll, whose own fields are set after.
  HandshakeMessage(int kind_, const SetDigest& digest_, std::vector<int> set_, std::string id_,
                   const SetDigest& other_digest_, std::string text_)
      : kind(kind_), digest(digest_), set(std::move(set_)), id(std::move(id_)), other_digest(other_digest_),
        text(std::move(text_)) {}
  int kind = Hello;
  /// Every kind: the set the sender is creating (Hello, Presence, Roll), one of the two sets
  /// (Mismatch), the set asked about (ListRequest) or sent (SetList)
  SetDigest digest;
  std::vector<int> set;        ///< SetList, Notice: that set's members; empty otherwise
  std::string id;              ///< Hello, Presence, SetList, Notice: the id the set is registered under ("" when none)
  SetDigest other_digest;      ///< Mismatch: the other set
  std::string text;            ///< Mismatch: the error the sender raised
  /// Roll and Census: a message of a roll call (roll_call.hpp), its kind and level. Roll: the
  /// one that names the members that did not come when a registration's deadline passes; Census:
  /// the one of a registration without a deadline that waits long (census.hpp).
  std::int32_t roll_kind = 0;
  std::int32_t roll_level = 0;
  double seconds = 0;               ///< Roll: the sender's timeout
  std::int32_t census_epoch = 0;    ///< Census: which census of the set (census.hpp)
  /// Roll, Census: the positions the sender knows present (RollCall::Bitmap); Notice: the
  /// positions of the set's members that took part in its census.
  std::vector<std::uint8_t> present;
};

/// Byte encoding of a message (both ends run the same binary).
[[nodiscard]] std::vector<char> encode(const HandshakeMessage& message);
/// Decodes; throws Error for a malformed buffer, or a list that does not match its digest
/// (names the sender, under `subject`: the registration call in the caller's API).
[[nodiscard]] HandshakeMessage decode(const std::vector<char>& bytes, int source,
                                      const char* subject = "register_communicator");

}  // namespace popdist::detail
