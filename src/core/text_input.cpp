// Bounded reading of user-supplied text files (text_input.hpp): one character-level loop instead of
// std::getline, because getline grows its string until it meets a '\n', which a sparse file or
// /dev/zero never provides.

#include "popdist/text_input.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <istream>
#include <streambuf>

#include "core/numbers.hpp"
#include "popdist/error.hpp"

namespace popdist {
namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a fifo";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

// libstdc++'s filebuf throws std::ios_base::failure from underflow when read(2) fails (e.g. EIO from
// /proc/self/mem), whatever the stream's exception mask; that becomes popdist's error here.
std::char_traits<char>::int_type next_char(std::streambuf* buffer, const std::string& source, int lines_read) {
  if (buffer == nullptr) return std::char_traits<char>::eof();
  try {
    return buffer->sbumpc();
  } catch (const std::exception& failure) {
    const int error = errno;
    throw UsageError(fmt::format("{}: read error after line {}: {}", source, lines_read,
                                 error != 0 ? std::strerror(error) : failure.what()));
  }
}

}  // namespace

void for_each_input_line(std::istream& in, const std::string& source,
                         const std::function<void(int number, std::string_view line)>& on_line) {
  std::streambuf* buffer = in.rdbuf();
  std::string line;
  std::uintmax_t total = 0;
  int number = 0;
  errno = 0;
  for (;;) {
    const auto next = next_char(buffer, source, number);
    if (std::char_traits<char>::eq_int_type(next, std::char_traits<char>::eof())) break;
    if (++total > max_input_file_bytes) {
      throw UsageError(fmt::format("{}: longer than {} bytes, the most popdist reads from such a file", source,
                                   max_input_file_bytes));
    }
    const char c = std::char_traits<char>::to_char_type(next);
    if (c == '\n') {
      on_line(++number, line);
      line.clear();
      errno = 0;  // whatever on_line did, errno now speaks for the reads only
      continue;
    }
    if (line.size() == max_input_line_bytes) {
      throw UsageError(fmt::format("{}:{}: line longer than {} bytes (Linux's limit for one environment string), "
                                   "starting '{}'",
                                   source, number + 1, max_input_line_bytes, detail::printable(line)));
    }
    line += c;
  }
  // A streambuf reports a failing read(2) as the end of the input; errno tells the two apart.
  // ENOTTY is not a failure: glibc's stdio asks isatty() when it first buffers standard input.
  if (errno != 0 && errno != ENOTTY) {
    const int error = errno;
    throw UsageError(fmt::format("{}: read error after line {}: {}", source, number, std::strerror(error)));
  }
  if (!line.empty()) on_line(++number, line);
}

void check_input_file(const std::string& path, std::string_view what) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    const int error = errno;
    throw UsageError(fmt::format("{} '{}': cannot open it: {}", what, detail::printable(path), std::strerror(error)));
  }
  if (!S_ISREG(info.st_mode)) {
    throw UsageError(fmt::format("{} '{}' is {}; expected a regular file", what, detail::printable(path),
                                 kind_of(info.st_mode)));
  }
  if (static_cast<std::uintmax_t>(info.st_size) > max_input_file_bytes) {
    throw UsageError(fmt::format("{} '{}' is {} bytes; popdist reads at most {} bytes from it", what,
                                 detail::printable(path), info.st_size, max_input_file_bytes));
  }
}

}  // namespace popdist
