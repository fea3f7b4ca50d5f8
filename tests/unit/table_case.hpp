#pragma once
// Registers one Catch2 test case per table row, so that every launcher layout and every bad
// input is its own named test (listed by --list-tests, discovered by ctest, run and reported
// on its own) while the rows stay a plain table.

#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <utility>

namespace popdist::testing {

/// A Catch2 test body that runs a std::function (Catch2 v2's built-in invokers take plain
/// function pointers, which cannot carry a table row).
class FunctionInvoker final : public Catch::ITestInvoker {
 public:
  explicit FunctionInvoker(std::function<void()> body) : body_(std::move(body)) {}
  void invoke() const override { body_(); }

 private:
  std::function<void()> body_;
};

/// Registers `body` as the test case `name` with `tags` (e.g. "[detect][layout]"). Call during
/// static initialization (before Catch2's main runs). Names must be unique and must avoid the
/// characters of Catch2's test-spec syntax (',', '[', ']', '*', '\\', '"').
inline void register_case(const std::string& name, const std::string& tags, std::function<void()> body,
                          const char* file, std::size_t line) {
  // Catch2 keeps the invoker for the whole run, as it does for TEST_CASE's static invokers.
  Catch::getMutableRegistryHub().registerTest(Catch::makeTestCase(new FunctionInvoker(std::move(body)), "",
                                                                  Catch::NameAndTags(name, tags),
                                                                  Catch::SourceLineInfo(file, line)));
}

}  // namespace popdist::testing
