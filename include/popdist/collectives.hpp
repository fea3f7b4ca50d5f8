#pragma once
/// @file collectives.hpp
/// PopDist's host collectives (`<popdist/collectives.hpp>`) over plain element types, with
/// PopDist's argument order: `broadcast(data, count, type, root, communicatorId)`,
/// `allReduceSum(data, count, type, communicatorId)`, `allGather(send, receive, count, type,
/// communicatorId)` and `sequential::broadcast(...)`.
///
/// Where PopDist takes a `poplar::Type`, popdist takes an ElementType (whose constants have
/// Poplar's names: `poplar::FLOAT` becomes `popdist::collectives::FLOAT`), or the element type is
/// deduced by the typed overloads. HALF is IEEE binary16 in 16-bit storage (`std::uint16_t`);
/// its sum is computed in float and rounded to nearest even once.
///
/// Every call is a collective over a communicator: the current scope (all instances, or the set
/// of the enclosing execute_on_instances) for an empty id, else a registered one. `root` is the
/// sender's index among the communicator's members: the instance index for all instances, the
/// position in the sorted instance set otherwise. Instances that are not members return at once
/// without touching the buffers. They need init(), except in a job of one instance, where they
/// work without it (broadcast and allReduceSum leave the data as it is, allGather copies it).
/// Errors: UsageError (bad root, sizes, ids), MpiError; both derive from popdist_error.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "popdist/half.hpp"

namespace popdist::collectives {

/// The element types of the collectives (Poplar's names).
enum class ElementType { FLOAT, HALF, DOUBLE, INT, UNSIGNED_INT, LONGLONG, UNSIGNED_LONGLONG };

inline constexpr ElementType FLOAT = ElementType::FLOAT;                          ///< float
inline constexpr ElementType HALF = ElementType::HALF;                            ///< binary16 in std::uint16_t
inline constexpr ElementType DOUBLE = ElementType::DOUBLE;                        ///< double
inline constexpr ElementType INT = ElementType::INT;                              ///< std::int32_t
inline constexpr ElementType UNSIGNED_INT = ElementType::UNSIGNED_INT;            ///< std::uint32_t
inline constexpr ElementType LONGLONG = ElementType::LONGLONG;                    ///< std::int64_t
inline constexpr ElementType UNSIGNED_LONGLONG = ElementType::UNSIGNED_LONGLONG;  ///< std::uint64_t

/// Bytes of one element of `type`.
[[nodiscard]] std::size_t element_size(ElementType type) noexcept;

/// The root's `count` elements into every member's `data`.
void broadcast(void* data, std::size_t count, ElementType type, int root = 0, const std::string& communicatorId = "");

/// The element-wise sum over the members, in place in every member's `data`.
void allReduceSum(void* data, std::size_t count, ElementType type, const std::string& communicatorId = "");

/// Every member's `count` elements of `send`, in member order, into `receive` (count x members
/// elements) on every member.
void allGather(const void* send, void* receive, std::size_t count, ElementType type,
               const std::string& communicatorId = "");

namespace sequential {
/// broadcast() in pieces of at most 64 MiB sent one after another, so that neither MPI's int
/// counts nor one huge message limit the size (PopDist uses it for large weights).
void broadcast(void* data, std::size_t count, ElementType type, int root = 0, const std::string& communicatorId = "");
}  // namespace sequential

/// The ElementType of a C++ element type (float, double, 32- and 64-bit integers).
template <class T>
[[nodiscard]] constexpr ElementType element_type_of() {
  if constexpr (std::is_same_v<T, float>) return FLOAT;
  else if constexpr (std::is_same_v<T, double>) return DOUBLE;
  else if constexpr (std::is_integral_v<T> && sizeof(T) == 4) return std::is_signed_v<T> ? INT : UNSIGNED_INT;
  else if constexpr (std::is_integral_v<T> && sizeof(T) == 8) return std::is_signed_v<T> ? LONGLONG : UNSIGNED_LONGLONG;
  else static_assert(sizeof(T) == 0, "popdist collectives take float, double, 32- or 64-bit integers (HALF: pass the ElementType)");
}

/// Typed overloads: the element type is deduced from the pointer.
template <class T>
void broadcast(T* data, std::size_t count, int root = 0, const std::string& communicatorId = "") {
  broadcast(static_cast<void*>(data), count, element_type_of<T>(), root, communicatorId);
}
template <class T>
void allReduceSum(T* data, std::size_t count, const std::string& communicatorId = "") {
  allReduceSum(static_cast<void*>(data), count, element_type_of<T>(), communicatorId);
}
template <class T>
void allGather(const T* send, T* receive, std::size_t count, const std::string& communicatorId = "") {
  allGather(static_cast<const void*>(send), static_cast<void*>(receive), count, element_type_of<T>(), communicatorId);
}

}  // namespace popdist::collectives

namespace popdist::detail {

/// The byte collectives behind popdist.torch and popdist.lightning (the Python module's
/// broadcast_bytes and allgather_bytes) over the current scope; they need init(). `timeout`
/// (seconds), else POPDIST_SYNC_TIMEOUT, bounds them, with a meeting first that names the members
/// missing or in another popdist call (src/registry/collective_meeting.hpp); without either, a
/// plain MPI collective. `operation` names the call in errors.
[[nodiscard]] std::string broadcast_bytes(const std::string& data, int root, std::optional<double> timeout,
                                          const std::string& operation);
/// Every member's bytes, in member order (instance order for all instances); as broadcast_bytes.
[[nodiscard]] std::vector<std::string> allgather_bytes(const std::string& data, std::optional<double> timeout,
                                                       const std::string& operation);

}  // namespace popdist::detail
