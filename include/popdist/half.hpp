#pragma once
/// @file half.hpp
/// IEEE binary16 ("half", Poplar's HALF) in 16-bit storage, converted to and from float: what the
/// collectives (collectives.hpp) use to sum HALF data, and what a user needs to fill it.
#include <cstdint>

namespace popdist::collectives {

/// The float a binary16 stands for (exact: every half is a float).
[[nodiscard]] float half_to_float(std::uint16_t half) noexcept;
/// The nearest binary16 (ties to even); beyond 65504 (after rounding) infinity; NaN stays NaN.
[[nodiscard]] std::uint16_t float_to_half(float value) noexcept;

}  // namespace popdist::collectives
