// The JSON writer of `popdist topology --json`: RFC 8259 string escaping (every control
// character, quotes, backslashes, UTF-8 passed through, invalid UTF-8 replaced), commas and
// nesting, and misuse caught instead of producing invalid JSON.
#include <catch2/catch.hpp>

#include <sstream>
#include <stdexcept>
#include <string>

#include "topology/json_writer.hpp"

using popdist::cli::topology_cmd::json_quote;
using popdist::cli::topology_cmd::JsonWriter;

TEST_CASE("json_quote leaves printable ASCII alone", "[json]") {
  CHECK(json_quote("") == R"("")");
  CHECK(json_quote("OMPI_COMM_WORLD_RANK") == R"("OMPI_COMM_WORLD_RANK")");
  CHECK(json_quote("a/b 'c' {d} [e] ~") == R"("a/b 'c' {d} [e] ~")");
  CHECK(json_quote("\x7f") == "\"\x7f\"");  // DEL is not a control character in JSON's sense
}

TEST_CASE("json_quote escapes quotes and backslashes", "[json]") {
  CHECK(json_quote(R"(say "hi")") == R"("say \"hi\"")");
  CHECK(json_quote(R"(C:\path\)") == R"("C:\\path\\")");
  CHECK(json_quote(R"(\")") == R"("\\\"")");
}

TEST_CASE("json_quote escapes every control character", "[json]") {
  static const char* const expected[32] = {
      R"(\u0000)", R"(\u0001)", R"(\u0002)", R"(\u0003)", R"(\u0004)", R"(\u0005)", R"(\u0006)", R"(\u0007)",
      R"(\b)",     R"(\t)",     R"(\n)",     R"(\u000b)", R"(\f)",     R"(\r)",     R"(\u000e)", R"(\u000f)",
      R"(\u0010)", R"(\u0011)", R"(\u0012)", R"(\u0013)", R"(\u0014)", R"(\u0015)", R"(\u0016)", R"(\u0017)",
      R"(\u0018)", R"(\u0019)", R"(\u001a)", R"(\u001b)", R"(\u001c)", R"(\u001d)", R"(\u001e)", R"(\u001f)"};
  for (int c = 0; c < 32; ++c) {
    INFO("character " << c);
    CHECK(json_quote(std::string(1, static_cast<char>(c))) == "\"" + std::string(expected[c]) + "\"");
  }
  CHECK(json_quote(std::string("a\0b", 3)) == R"("a\u0000b")");  // an embedded NUL is not the end
  CHECK(json_quote("line 1\nline 2\ttab") == R"("line 1\nline 2\ttab")");
}

TEST_CASE("json_quote passes valid UTF-8 through", "[json]") {
  CHECK(json_quote("h\xc3\xb4te") == "\"h\xc3\xb4te\"");                      // U+00F4
  CHECK(json_quote("\xe2\x82\xac") == "\"\xe2\x82\xac\"");                    // U+20AC
  CHECK(json_quote("\xf0\x9f\x96\xa5") == "\"\xf0\x9f\x96\xa5\"");            // U+1F5A5
  CHECK(json_quote("\xf4\x8f\xbf\xbf") == "\"\xf4\x8f\xbf\xbf\"");            // U+10FFFF, the last one
  CHECK(json_quote("\xe2\x80\xa8") == "\"\xe2\x80\xa8\"");                    // U+2028 is valid JSON
}

TEST_CASE("json_quote replaces invalid UTF-8 with U+FFFD, one per maximal subpart", "[json]") {
  CHECK(json_quote("\xff") == R"("\ufffd")");                   // never valid
  CHECK(json_quote("a\x80z") == R"("a\ufffdz")");               // a stray continuation byte
  CHECK(json_quote("\xc0\xaf") == R"("\ufffd\ufffd")");         // overlong '/'
  CHECK(json_quote("\xe0\x80\xaf") == R"("\ufffd\ufffd\ufffd")");  // overlong, 3 bytes
  CHECK(json_quote("\xed\xa0\x80") == R"("\ufffd\ufffd\ufffd")");  // a UTF-16 surrogate
  CHECK(json_quote("\xf4\x90\x80\x80") == R"("\ufffd\ufffd\ufffd\ufffd")");  // above U+10FFFF
  CHECK(json_quote("\xe2\x82") == R"("\ufffd")");               // truncated at the end: one subpart
  CHECK(json_quote("\xe2\x82z") == R"("\ufffdz")");             // truncated before ASCII
  CHECK(json_quote("\xf0\x9f\x96") == R"("\ufffd")");
  CHECK(json_quote("\xc3") == R"("\ufffd")");
  CHECK(json_quote("\xc3\xc3\xb4") == "\"\\ufffd\xc3\xb4\"");  // the second lead byte starts afresh
}

namespace {
std::string write(int indent, void (*body)(JsonWriter&)) {
  std::ostringstream out;
  JsonWriter json(out, indent);
  body(json);
  CHECK(json.complete());
  return out.str();
}
}  // namespace

TEST_CASE("JsonWriter writes compact documents with the right commas", "[json]") {
  CHECK(write(0, [](JsonWriter& j) { j.begin_object().end_object(); }) == "{}");
  CHECK(write(0, [](JsonWriter& j) { j.begin_array().end_array(); }) == "[]");
  CHECK(write(0, [](JsonWriter& j) { j.value(42); }) == "42");
  CHECK(write(0, [](JsonWriter& j) {
          j.begin_object();
          j.key("a").value(1);
          j.key("b").value(std::int64_t{-9000000000});
          j.key("c").value(true);
          j.key("d").value(false);
          j.key("e").value(nullptr);
          j.key("f").value(std::optional<int>());
          j.key("g").value(std::optional<int>(7));
          j.key("h").value("x\"y");
          j.key("i").begin_array().value(1).value("two").begin_object().end_object().begin_array().end_array().end_array();
          j.key("j").begin_object().key("k").begin_object().key("l").value(0).end_object().end_object();
          j.end_object();
        }) == R"({"a":1,"b":-9000000000,"c":true,"d":false,"e":null,"f":null,"g":7,"h":"x\"y",)"
               R"("i":[1,"two",{},[]],"j":{"k":{"l":0}}})");
}

TEST_CASE("JsonWriter pretty-prints with the indent given", "[json]") {
  CHECK(write(2, [](JsonWriter& j) {
          j.begin_object();
          j.key("n").value(1);
          j.key("list").begin_array().value(1).value(2).end_array();
          j.key("empty").begin_array().end_array();
          j.end_object();
        }) == "{\n  \"n\": 1,\n  \"list\": [\n    1,\n    2\n  ],\n  \"empty\": []\n}");
}

TEST_CASE("JsonWriter escapes keys too", "[json]") {
  CHECK(write(0, [](JsonWriter& j) { j.begin_object().key("a\nb").value(1).end_object(); }) == R"({"a\nb":1})");
}

TEST_CASE("JsonWriter refuses what would be invalid JSON", "[json]") {
  std::ostringstream out;
  SECTION("a value in an object without a key") {
    JsonWriter json(out);
    json.begin_object();
    CHECK_THROWS_AS(json.value(1), std::logic_error);
  }
  SECTION("a key in an array") {
    JsonWriter json(out);
    json.begin_array();
    CHECK_THROWS_AS(json.key("k"), std::logic_error);
  }
  SECTION("a key at the top level") {
    JsonWriter json(out);
    CHECK_THROWS_AS(json.key("k"), std::logic_error);
  }
  SECTION("two keys in a row") {
    JsonWriter json(out);
    json.begin_object().key("a");
    CHECK_THROWS_AS(json.key("b"), std::logic_error);
  }
  SECTION("closing an object with a key still waiting for its value") {
    JsonWriter json(out);
    json.begin_object().key("a");
    CHECK_THROWS_AS(json.end_object(), std::logic_error);
  }
  SECTION("closing the wrong container") {
    JsonWriter json(out);
    json.begin_object();
    CHECK_THROWS_AS(json.end_array(), std::logic_error);
  }
  SECTION("closing what was never opened") {
    JsonWriter json(out);
    CHECK_THROWS_AS(json.end_object(), std::logic_error);
  }
  SECTION("a second top-level value") {
    JsonWriter json(out);
    json.value(1);
    CHECK_THROWS_AS(json.value(2), std::logic_error);
    CHECK_THROWS_AS(json.begin_object(), std::logic_error);
  }
  SECTION("an unfinished document is not complete") {
    JsonWriter json(out);
    json.begin_object().key("a").begin_array();
    CHECK_FALSE(json.complete());
  }
}
