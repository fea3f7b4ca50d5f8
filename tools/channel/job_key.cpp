#include "channel/job_key.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "channel/crypto.hpp"
#include "io/fd.hpp"
#include "io/read_write.hpp"

namespace popdist::cli::channel {
namespace {

constexpr std::string_view kJobKeyLabel = "popdist channel 1 job key";
constexpr std::string_view kKeyIdLabel = "popdist channel 1 key id";
constexpr std::size_t kKeyFileBytes = 2 * crypto::kKeyBytes + 1;  // hex digits and a newline

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error("the channel's key file " + path + " " + what);
}

std::string errno_text() { return std::strerror(errno); }

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// Its directory, made 0700 when missing (only the last level: a home must exist already).
void make_directory(const std::string& path) {
  const std::string directory = directory_of(path);
  if (::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST)
    fail(path, "cannot be made: mkdir " + directory + ": " + errno_text());
}

// Another key under a temporary name, linked into place: link() fails when a key is there already
// (another launch made it first), and nobody ever reads half a key.
void make_key_file(const std::string& path) {
  make_directory(path);
  const std::string temporary = path + ".new." + std::to_string(::getpid());
  {
    io::Fd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd.valid()) fail(path, "cannot be made: " + temporary + ": " + errno_text());
    const bool written = io::write_all(fd.get(), crypto::to_hex(crypto::random_bytes(crypto::kKeyBytes)) + "\n") &&
                         ::fsync(fd.get()) == 0;
    if (!written) {
      ::unlink(temporary.c_str());
      fail(path, "cannot be written: " + errno_text());
    }
  }
  const bool linked = ::link(temporary.c_str(), path.c_str()) == 0 || errno == EEXIST;
  const std::string why = errno_text();
  ::unlink(temporary.c_str());
  if (!linked) fail(path, "cannot be made: link: " + why);
}

// As ssh treats a private key: ours alone, a regular file, nobody else may read or write it.
std::string checked_key(const std::string& path, int fd) {
  struct stat status {};
  if (::fstat(fd, &status) != 0) fail(path, "cannot be examined: " + errno_text());
  if (!S_ISREG(status.st_mode)) fail(path, "is not a regular file");
  if (status.st_uid != ::geteuid())
    fail(path, "belongs to uid " + std::to_string(status.st_uid) + ", not to this user (uid " +
                   std::to_string(::geteuid()) + ")");
  if ((status.st_mode & 077) != 0) fail(path, "is open to other users (mode 0" + std::to_string((status.st_mode >> 6) & 7) +
                                               std::to_string((status.st_mode >> 3) & 7) + std::to_string(status.st_mode & 7) +
                                               "): chmod 600 it, or remove it and let popdist run make another");
  char text[kKeyFileBytes + 1];
  const ssize_t got = ::pread(fd, text, sizeof text, 0);
  const std::string_view digits(text, got > 0 && text[got - 1] == '\n' ? static_cast<std::size_t>(got - 1)
                                                                       : static_cast<std::size_t>(std::max<ssize_t>(got, 0)));
  auto key = digits.size() == 2 * crypto::kKeyBytes ? crypto::from_hex(digits) : std::nullopt;
  if (!key) fail(path, "does not hold a key: expected 64 hex digits and a newline (its content is not shown)");
  return *key;
}

}  // namespace

KeyRoute key_route(const EnvironmentLookup& lookup) {
  const auto value = lookup(kKeyRouteVariable);
  if (!value || *value == "file") return KeyRoute::kFile;
  if (*value == "environment") return KeyRoute::kEnvironment;
  throw std::invalid_argument(std::string(kKeyRouteVariable) + "=" + *value +
                              ": expected 'file' (the default: a key file on a shared home) or 'environment' (the "
                              "key in mpirun's environment, in clear on the network)");
}

std::string key_file_path(const EnvironmentLookup& lookup) {
  if (const auto path = lookup(kKeyFileVariable); path && !path->empty()) return *path;
  std::string home = lookup("HOME").value_or("");
  if (home.empty())
    if (const passwd* entry = ::getpwuid(::geteuid()); entry && entry->pw_dir) home = entry->pw_dir;
  if (home.empty()) throw std::invalid_argument("HOME is not set and this user has no home: set " +
                                                std::string(kKeyFileVariable) + " to the channel's key file");
  return home + "/.popdist/channel.key";
}

std::string read_user_key(const std::string& path) {
  io::Fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) fail(path, "cannot be read: " + errno_text());
  return checked_key(path, fd.get());
}

std::string load_or_make_user_key(const std::string& path) {
  if (::access(path.c_str(), F_OK) != 0 && errno == ENOENT) make_key_file(path);
  return read_user_key(path);
}

std::string key_id(std::string_view user_key) {
  return crypto::to_hex(crypto::hmac_sha256(user_key, kKeyIdLabel).substr(0, 8));
}

std::string derive_job_key(std::string_view user_key, std::string_view nonce_hex) {
  const auto nonce = crypto::from_hex(nonce_hex);
  if (!nonce || nonce->size() != crypto::kNonceBytes)
    throw std::invalid_argument(std::string(kNonceVariable) + " holds " + std::to_string(nonce_hex.size()) +
                                " characters, expected 64 hex digits");
  return crypto::to_hex(crypto::hkdf_sha256(user_key, *nonce, kJobKeyLabel, crypto::kKeyBytes));
}

std::string make_job_nonce() { return crypto::to_hex(crypto::random_bytes(crypto::kNonceBytes)); }

std::string make_job_tag() { return crypto::to_hex(crypto::random_bytes(8)); }

JobKey job_key_from_environment(const EnvironmentLookup& lookup) {
  const auto nonce = lookup(kNonceVariable);
  if (!nonce) throw std::invalid_argument(std::string(kNonceVariable) + " is not set: the job's channel needs the nonce popdist run exports to its agents");
  if (nonce->size() != 2 * crypto::kNonceBytes || !crypto::from_hex(*nonce))
    throw std::invalid_argument(std::string(kNonceVariable) + "=" + *nonce + ": expected 64 hex digits");
  const auto tag = lookup(kTagVariable);
  if (!tag || tag->size() != 16 || !crypto::from_hex(*tag))
    throw std::invalid_argument(std::string(kTagVariable) + (tag ? " holds " + std::to_string(tag->size()) + " characters" : " is not set") +
                                ": expected the 16 hex digits popdist run exports to its agents");
  if (lookup(kSecretVariable)) return JobKey{secret_from_environment(lookup), *tag};
  const auto expected_id = lookup(kKeyIdVariable);
  if (!expected_id)
    throw std::invalid_argument(std::string(kKeyIdVariable) + " is not set: expected the id of the key popdist run used");
  const std::string path = key_file_path(lookup);
  std::string user_key;
  try {
    user_key = read_user_key(path);
  } catch (const std::runtime_error& error) {
    throw std::invalid_argument(std::string(error.what()) + " on this host (no shared home?): popdist run with " +
                                kKeyRouteVariable + "=environment sends the key in mpirun's environment instead");
  }
  if (key_id(user_key) != *expected_id)
    throw std::invalid_argument("the channel's key file " + path + " on this host has id " + key_id(user_key) +
                                ", popdist run's has " + *expected_id + " (a home not shared?): copy the launching " +
                                "host's, or run popdist run with " + kKeyRouteVariable + "=environment");
  return JobKey{derive_job_key(user_key, *nonce), *tag};
}

}  // namespace popdist::cli::channel
