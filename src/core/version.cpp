#include "popdist/version.hpp"

namespace popdist {
const char* version() noexcept { return POPDIST_VERSION_STRING; }
}  // namespace popdist
