#pragma once
// The message of the popdist error a call throws, for CHECK_THAT(..., Contains(...)): the tests
// assert what an error says, not only that one was thrown.

#include <string>

namespace popdist_test {

/// what() of the `Error` that `call` throws, or "(no error thrown)" when it returns normally.
/// Any other exception propagates (and fails the test case).
template <class Error, class Call>
std::string error_message_of(Call&& call) {
  try {
    call();
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error thrown)";
}

}  // namespace popdist_test
