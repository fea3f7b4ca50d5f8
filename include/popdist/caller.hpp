#pragma once
/// @file caller.hpp
/// Who called, for errors: the public call's name and the registration call's name in the
/// language of the API the user called (C++: register_communicator; Python's bindings:
/// registerCommunicator), so that a message names the user's own functions where it is raised
/// (design.md §7) instead of being rewritten on its way out.

namespace popdist::detail {

/// The names a call's errors use. The pointers name string literals (they outlive every call).
struct Caller {
  /// Implicit from a bare name: the core's own call sites name a call of the C++ API.
  constexpr Caller(const char* call_name, const char* registration_name = "register_communicator") noexcept
      : name(call_name), registration(registration_name) {}

  const char* name;          ///< the call the user made: "synchronize", "registerCommunicator"
  const char* registration;  ///< the call that registers a set: advice, and the handshake's errors
};

}  // namespace popdist::detail
