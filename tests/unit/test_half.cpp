// HALF (IEEE binary16) conversions of the collectives: exact values, rounding to nearest even,
// subnormals, overflow to infinity, NaN.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

#include "popdist/collectives.hpp"

using popdist::collectives::float_to_half;
using popdist::collectives::half_to_float;

TEST_CASE("half <-> float", "[collectives][half]") {
  CHECK(float_to_half(1.0f) == 0x3c00);
  CHECK(float_to_half(-2.0f) == 0xc000);
  CHECK(float_to_half(65504.0f) == 0x7bff);
  CHECK(float_to_half(65520.0f) == 0x7c00);            // the tie past the largest rounds to infinity
  CHECK(float_to_half(1.0f + 1.0f / 2048) == 0x3c00);  // tie: to even (down)
  CHECK(float_to_half(1.0f + 3.0f / 2048) == 0x3c02);  // tie: to even (up)
  CHECK(float_to_half(std::ldexp(1.0f, -24)) == 0x0001);  // smallest subnormal
  CHECK(float_to_half(std::ldexp(1.0f, -25)) == 0x0000);  // its half: tie to even (zero)
  CHECK(float_to_half(-0.0f) == 0x8000);
  CHECK(float_to_half(std::numeric_limits<float>::infinity()) == 0x7c00);
  CHECK(std::isnan(half_to_float(float_to_half(std::numeric_limits<float>::quiet_NaN()))));
  // every half survives the round trip
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto half = static_cast<std::uint16_t>(bits);
    const float value = half_to_float(half);
    if (std::isnan(value)) continue;
    INFO(bits);
    REQUIRE(float_to_half(value) == half);
  }
  CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));
  CHECK(half_to_float(0x3555) == Approx(0.333251953125f));
}
