#pragma once
// One voice for what popdist run's processes tell the user: the launcher, its supervision and
// every agent write "popdist run: <message>" on stderr, so that a line says who speaks wherever
// it lands (a terminal, mpirun's merged output, an instance's log).

#include <string_view>

namespace popdist::cli {

/// Writes "popdist run: <message>\n" to stderr in one call (lines from several processes stay whole).
void say(std::string_view message);

}  // namespace popdist::cli
