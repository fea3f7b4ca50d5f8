#include "channel/crypto.hpp"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <sys/random.h>

#include <cerrno>
#include <memory>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace popdist::cli::channel::crypto {
namespace {

[[noreturn]] void fail(const char* what) {
  const unsigned long code = ERR_get_error();
  char text[256] = "no error queued";
  if (code != 0) ERR_error_string_n(code, text, sizeof text);
  throw std::runtime_error(std::string("libcrypto: ") + what + " failed: " + text);
}

const unsigned char* bytes(std::string_view text) { return reinterpret_cast<const unsigned char*>(text.data()); }

int digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string random_bytes(std::size_t count) {
  std::string out(count, '\0');
  std::size_t filled = 0;
  while (filled < count) {
    const ssize_t got = getrandom(out.data() + filled, count - filled, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw std::system_error(errno, std::generic_category(), "getrandom for the channel's keys");
    filled += static_cast<std::size_t>(got);
  }
  return out;
}

namespace {

// Fetched once: libcrypto's fetch looks the algorithm up in its provider store under a lock, which
// every frame's tag and every handshake would otherwise pay (measured: README.md "Cost").
EVP_MAC* hmac_algorithm() {
  static EVP_MAC* const mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  return mac;
}

EVP_KDF* hkdf_algorithm() {
  static EVP_KDF* const kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
  return kdf;
}

}  // namespace

std::string hmac_sha256(std::string_view key, std::string_view data) {
  if (hmac_algorithm() == nullptr) fail("fetching HMAC");
  const std::unique_ptr<EVP_MAC_CTX, decltype(&EVP_MAC_CTX_free)> context(EVP_MAC_CTX_new(hmac_algorithm()),
                                                                         EVP_MAC_CTX_free);
  char digest[] = "SHA256";
  const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                               OSSL_PARAM_construct_end()};
  unsigned char tag[EVP_MAX_MD_SIZE];
  std::size_t length = 0;
  if (!context || EVP_MAC_init(context.get(), bytes(key), key.size(), params) != 1 ||
      EVP_MAC_update(context.get(), bytes(data), data.size()) != 1 ||
      EVP_MAC_final(context.get(), tag, &length, sizeof tag) != 1)
    fail("HMAC-SHA256");
  return std::string(reinterpret_cast<const char*>(tag), length);
}

std::string hkdf_sha256(std::string_view ikm, std::string_view salt, std::string_view info, std::size_t length) {
  if (hkdf_algorithm() == nullptr) fail("fetching HKDF");
  const std::unique_ptr<EVP_KDF_CTX, decltype(&EVP_KDF_CTX_free)> context(EVP_KDF_CTX_new(hkdf_algorithm()),
                                                                         EVP_KDF_CTX_free);
  if (!context) fail("making an HKDF context");
  char digest[] = "SHA256";
  // OSSL_PARAM takes non-const pointers; libcrypto only reads them. An empty salt or info is
  // left out (HKDF then uses its defaults: a salt of zeros, no info), as RFC 5869 specifies.
  std::vector<OSSL_PARAM> params{OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
                                 OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<char*>(ikm.data()),
                                                                   ikm.size())};
  if (!salt.empty())
    params.push_back(OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, const_cast<char*>(salt.data()), salt.size()));
  if (!info.empty())
    params.push_back(OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, const_cast<char*>(info.data()), info.size()));
  params.push_back(OSSL_PARAM_construct_end());
  std::string out(length, '\0');
  if (EVP_KDF_derive(context.get(), reinterpret_cast<unsigned char*>(out.data()), length, params.data()) != 1)
    fail("HKDF-SHA256");
  return out;
}

bool equal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string to_hex(std::string_view data) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  text.reserve(2 * data.size());
  for (const unsigned char c : data) text += kDigits[c >> 4], text += kDigits[c & 0xf];
  return text;
}

std::optional<std::string> from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string out;
  out.reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int high = digit(hex[i]), low = digit(hex[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>(high * 16 + low);
  }
  return out;
}

}  // namespace popdist::cli::channel::crypto
