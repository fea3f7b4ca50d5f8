#include "common/argument_text.hpp"

#include <fmt/format.h>

namespace popdist::cli {

std::string shown(std::string_view value) {
  std::string out = "'";
  std::size_t i = 0;
  for (; i < value.size() && i < kMaxShownChars; ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\0': out += "\\0"; break;
      case '\\': out += "\\\\"; break;
      case '\'': out += "\\'"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          out += fmt::format("\\x{:02x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += "'";
  if (i < value.size()) out += fmt::format("... ({} bytes)", value.size());
  return out;
}

}  // namespace popdist::cli
