// Writes, with the CLI's JsonWriter, one compact JSON document per line: each is
// {"hex": <the input bytes in hex>, "quoted": <json_quote of those bytes>, ...}. The inputs are
// every single byte, every byte pair of interest and a set of tricky sequences.
// check_json_output.py parses each line with Python's strict json module and compares the
// decoded string with Python's own UTF-8 decoding of the input (errors="replace").
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "topology/json_writer.hpp"

using popdist::cli::topology_cmd::JsonWriter;

namespace {

std::string hex(const std::string& bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 0xF];
  }
  return out;
}

}  // namespace

int main() {
  std::vector<std::string> inputs;
  for (int c = 0; c < 256; ++c) inputs.emplace_back(1, static_cast<char>(c));
  // Every lead byte followed by every continuation-range byte and a few others.
  for (int lead = 0xC0; lead < 0x100; ++lead) {
    for (int next : {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF}) {
      inputs.push_back(std::string{static_cast<char>(lead), static_cast<char>(next)});
      inputs.push_back(std::string{static_cast<char>(lead), static_cast<char>(next), '\x80', '\x80'});
    }
  }
  for (const char* s : {"", "plain", "quote\"back\\slash/", "\xe2\x82\xac", "\xf0\x9f\x96\xa5", "\xf4\x8f\xbf\xbf",
                        "\xed\x9f\xbf", "\xed\xa0\x80", "\xef\xbf\xbf", "\xe2\x80\xa8\xe2\x80\xa9", "\xe2\x82",
                        "\xf0\x9f\x96", "a\x01" "b\x1f" "c\x7f" "d"}) {
    inputs.emplace_back(s);
  }
  inputs.emplace_back(std::string("nul\0inside", 10));

  for (const std::string& input : inputs) {
    std::ostringstream line;
    JsonWriter json(line, 0);
    json.begin_object();
    json.key("hex").value(hex(input));
    json.key("quoted").value(input);
    json.key(input).value(true);  // keys take the same path
    json.key("nested").begin_array().value(input).begin_object().key("k").value(input).end_object().end_array();
    json.end_object();
    std::cout << line.str() << '\n';
  }
  return 0;
}
