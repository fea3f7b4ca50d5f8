#pragma once
// The channel's cryptography, all of it from OpenSSL's libcrypto (nothing written here but the
// calls): HMAC-SHA256 for the proofs and every frame's tag, HKDF-SHA256 (RFC 5869) for the keys
// derived from the job key, CRYPTO_memcmp for comparisons whose time must not depend on where two
// tags differ, and getrandom for keys and nonces. Bytes are carried in std::string (binary).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace popdist::cli::channel::crypto {

/// Bytes of a key (the job key, the per-connection keys), a nonce and an HMAC-SHA256 tag.
inline constexpr std::size_t kKeyBytes = 32;
inline constexpr std::size_t kNonceBytes = 32;
inline constexpr std::size_t kTagBytes = 32;

/// `count` bytes from the kernel's random source (getrandom); throws std::system_error.
[[nodiscard]] std::string random_bytes(std::size_t count);

/// HMAC-SHA256 of `data` under `key` (32 bytes); throws std::runtime_error if libcrypto fails.
[[nodiscard]] std::string hmac_sha256(std::string_view key, std::string_view data);

/// HKDF-SHA256 (extract and expand): `length` bytes from the input key material `ikm`, the
/// `salt` and the context `info`; throws std::runtime_error if libcrypto fails.
[[nodiscard]] std::string hkdf_sha256(std::string_view ikm, std::string_view salt, std::string_view info,
                                      std::size_t length);

/// Whether `a` and `b` are equal; for equal lengths, in a time that does not depend on the bytes.
[[nodiscard]] bool equal(std::string_view a, std::string_view b);

/// Lower-case hex digits of `bytes`, and back (nullopt unless an even count of hex digits).
[[nodiscard]] std::string to_hex(std::string_view bytes);
[[nodiscard]] std::optional<std::string> from_hex(std::string_view hex);

}  // namespace popdist::cli::channel::crypto
