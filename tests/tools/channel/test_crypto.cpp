// The channel's cryptography (tools/channel/crypto.hpp) against the published test vectors:
// HMAC-SHA256 from RFC 4231, HKDF-SHA256 from RFC 5869 (appendix A.1-A.3).
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "channel/crypto.hpp"

using namespace popdist::cli::channel;

namespace {
std::string counting(int first, int last) {
  std::string bytes;
  for (int b = first; b <= last; ++b) bytes += static_cast<char>(b);
  return bytes;
}
}  // namespace

TEST_CASE("HMAC-SHA256 gives RFC 4231's test vectors") {
  CHECK(crypto::to_hex(crypto::hmac_sha256(std::string(20, '\x0b'), "Hi There")) ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(crypto::to_hex(crypto::hmac_sha256("Jefe", "what do ya want for nothing?")) ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  CHECK(crypto::to_hex(crypto::hmac_sha256(std::string(20, '\xaa'), std::string(50, '\xdd'))) ==
        "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  CHECK(crypto::to_hex(crypto::hmac_sha256(counting(1, 25), std::string(50, '\xcd'))) ==
        "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
  const std::string long_key(131, '\xaa');
  CHECK(crypto::to_hex(crypto::hmac_sha256(long_key, "Test Using Larger Than Block-Size Key - Hash Key First")) ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  CHECK(crypto::to_hex(crypto::hmac_sha256(
            long_key, "This is a test using a larger than block-size key and a larger than block-size data. The "
                      "key needs to be hashed before being used by the HMAC algorithm.")) ==
        "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST_CASE("HKDF-SHA256 gives RFC 5869's test vectors") {
  CHECK(crypto::to_hex(crypto::hkdf_sha256(std::string(22, '\x0b'), counting(0x00, 0x0c), counting(0xf0, 0xf9), 42)) ==
        "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865");
  CHECK(crypto::to_hex(crypto::hkdf_sha256(counting(0x00, 0x4f), counting(0x60, 0xaf), counting(0xb0, 0xff), 82)) ==
        "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7827271cb41c65e590e09da3275600c2f09b"
        "8367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d87");
  CHECK(crypto::to_hex(crypto::hkdf_sha256(std::string(22, '\x0b'), "", "", 42)) ==
        "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8");
}

TEST_CASE("constant-time comparison: equal only when equal, lengths first") {
  const std::string tag = crypto::hmac_sha256("key", "data");
  std::string flipped = tag;
  flipped[31] = static_cast<char>(flipped[31] ^ 1);
  CHECK(crypto::equal(tag, tag));
  CHECK_FALSE(crypto::equal(tag, flipped));
  CHECK_FALSE(crypto::equal(tag, tag.substr(0, 16)));
  CHECK_FALSE(crypto::equal(tag, ""));
  CHECK(crypto::equal("", ""));
}

TEST_CASE("random bytes: the count asked for, and never the same twice") {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    const std::string nonce = crypto::random_bytes(crypto::kNonceBytes);
    CHECK(nonce.size() == crypto::kNonceBytes);
    seen.insert(nonce);
  }
  CHECK(seen.size() == 100);
}

TEST_CASE("hex both ways, odd counts and non-digits refused") {
  CHECK(crypto::to_hex(std::string("\x00\x7f\xff", 3)) == "007fff");
  CHECK(crypto::from_hex("007FfF") == std::string("\x00\x7f\xff", 3));
  CHECK_FALSE(crypto::from_hex("abc"));
  CHECK_FALSE(crypto::from_hex("zz"));
}
