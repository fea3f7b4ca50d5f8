// Strict decimal parsing: one test case per accepted and per rejected spelling.

#include <catch2/catch.hpp>

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "core/numbers.hpp"
#include "popdist/error.hpp"
#include "table_case.hpp"

namespace popdist::testing {
namespace {

using detail::Expect;
using detail::parse_decimal;

struct Accepted {
  std::string name;
  std::string text;
  Expect expect;
  int value;
};

struct Rejected {
  std::string name;
  std::string text;
  Expect expect;
  std::string problem;  ///< a fragment of the message besides the variable, value and expectation
  std::string shown = "";  ///< how the value appears in the message, when escaped
};

const std::vector<Accepted> kAccepted = {
    {"zero index", "0", Expect::NonNegative, 0},
    {"one count", "1", Expect::Positive, 1},
    {"multi-digit", "4096", Expect::Positive, 4096},
    {"leading zeros", "007", Expect::NonNegative, 7},
    {"INT_MAX", "2147483647", Expect::Positive, INT_MAX},
};

const std::vector<Rejected> kRejected = {
    {"empty", "", Expect::NonNegative, "is empty"},
    {"letters", "abc", Expect::NonNegative, "is not a decimal number"},
    {"negative index", "-1", Expect::NonNegative, "is negative"},
    {"negative count", "-4", Expect::Positive, "is negative"},
    {"zero count", "0", Expect::Positive, "is zero"},
    {"zeros count", "000", Expect::Positive, "is zero"},
    {"INT_MAX plus one", "2147483648", Expect::NonNegative, "is too large"},
    {"twenty digits", "99999999999999999999", Expect::Positive, "is too large"},
    {"overflow with garbage", "99999999999x", Expect::Positive, "is too large"},
    {"trailing letter", "4x", Expect::Positive, "trailing characters 'x'"},
    {"trailing space", "4 ", Expect::Positive, "trailing characters ' '"},
    {"trailing newline", "4\n", Expect::Positive, "trailing characters '\\n'", "4\\n"},
    {"trailing carriage return from a CRLF file", "4\r", Expect::Positive, "trailing characters '\\r'", "4\\r"},
    {"trailing control character", "4\x01", Expect::Positive, "trailing characters '\\x01'", "4\\x01"},
    {"leading plus", "+4", Expect::Positive, "is not a decimal number"},
    {"leading space", " 4", Expect::Positive, "is not a decimal number"},
    {"leading tab", "\t4", Expect::Positive, "is not a decimal number", "\\t4"},
    {"hexadecimal", "0x10", Expect::NonNegative, "trailing characters 'x10'"},
    {"exponent", "1e3", Expect::Positive, "trailing characters 'e3'"},
    {"fraction", "3.0", Expect::Positive, "trailing characters '.0'"},
    {"lone minus", "-", Expect::NonNegative, "is not a decimal number"},
    {"minus garbage", "-x", Expect::NonNegative, "is not a decimal number"},
    {"digit group separator", "1_000", Expect::Positive, "trailing characters '_000'"},
    {"arabic-indic digit", "\xd9\xa3", Expect::Positive, "is not a decimal number"},
};

const bool registered = [] {
  for (const auto& row : kAccepted) {
    register_case("numbers.accepts " + row.name, "[numbers]", [row] {
      CHECK(parse_decimal("SOME_VARIABLE", row.text, row.expect) == row.value);
    }, __FILE__, __LINE__);
  }
  for (const auto& row : kRejected) {
    register_case("numbers.rejects " + row.name, "[numbers]", [row] {
      try {
        (void)parse_decimal("SOME_VARIABLE", row.text, row.expect);
        FAIL("accepted '" << row.text << "'");
      } catch (const EnvironmentError& error) {
        const std::string message = error.what();
        INFO(message);
        CHECK(message.find("SOME_VARIABLE='" + (row.shown.empty() ? row.text : row.shown) + "'") != std::string::npos);
        // No raw control character reaches the terminal.
        CHECK(std::none_of(message.begin(), message.end(), [](char c) { return c == '\r' || c == '\n' || c == '\t'; }));
        CHECK(message.find(row.problem) != std::string::npos);
        CHECK(message.find(row.expect == Expect::Positive ? "expected a decimal integer >= 1"
                                                          : "expected a decimal integer >= 0") != std::string::npos);
      }
    }, __FILE__, __LINE__);
  }
  return true;
}();

}  // namespace

TEST_CASE("numbers.read_number: unset is nullopt, set is parsed with its source", "[numbers]") {
  const auto env = lookup_in({{"COUNT", "12"}, {"EMPTY", ""}});
  CHECK_FALSE(detail::read_number(env, "MISSING", Expect::Positive).has_value());
  const auto count = detail::read_number(env, "COUNT", Expect::Positive);
  REQUIRE(count.has_value());
  CHECK(count->value == 12);
  CHECK(count->source == "COUNT");
  CHECK_THROWS_WITH(detail::read_number(env, "EMPTY", Expect::Positive), Catch::Contains("EMPTY='' is empty"));
}

}  // namespace popdist::testing
