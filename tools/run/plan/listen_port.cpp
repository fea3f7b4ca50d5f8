#include "run/plan/listen_port.hpp"

#include <algorithm>
#include <charconv>

namespace popdist::cli {
namespace {

constexpr int kHighestPort = 65535;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n'; }

std::string_view skip_space(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  return text;
}

}  // namespace

std::optional<PortRange> parse_port_range(std::string_view text) {
  PortRange range;
  int* fields[] = {&range.first, &range.last};
  for (int* field : fields) {
    text = skip_space(text);
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *field);
    if (error != std::errc() || *field < 1 || *field > kHighestPort) return std::nullopt;
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  }
  if (!skip_space(text).empty() || range.first > range.last) return std::nullopt;
  return range;
}

std::optional<int> pick_listen_port(PortRange ephemeral, unsigned start, const std::function<bool(int)>& is_free,
                                    int attempts) {
  // The offered ports: [lowest, ephemeral.first) and (ephemeral.last, highest], as one sequence.
  const int below = std::clamp(ephemeral.first, kLowestOfferedPort, kHighestPort + 1) - kLowestOfferedPort;
  const int above_first = std::max(ephemeral.last + 1, kLowestOfferedPort);
  const int above = std::max(0, kHighestPort + 1 - above_first);
  const int count = below + above;
  if (count == 0) return std::nullopt;
  for (int i = 0; i < std::min(attempts, count); ++i) {
    const int position = static_cast<int>((start + static_cast<unsigned>(i)) % static_cast<unsigned>(count));
    const int port = position < below ? kLowestOfferedPort + position : above_first + (position - below);
    if (is_free(port)) return port;
  }
  return std::nullopt;
}

}  // namespace popdist::cli
