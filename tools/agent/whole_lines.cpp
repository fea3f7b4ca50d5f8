#include "agent/whole_lines.hpp"

#include <errno.h>
#include <unistd.h>

#include <string_view>

#include "io/read_write.hpp"

namespace popdist::cli {
namespace {

// A line longer than this is passed on in pieces (it would not fit one pipe write anyway).
constexpr std::size_t kMaxHeld = 1 << 16;
// A kept line longer than this is cut: the report shows lines, not megabytes.
constexpr std::size_t kMaxKeptLine = 512;

}  // namespace

void OutputStream::read_some() {
  char buffer[8192];
  const ssize_t got = ::read(from, buffer, sizeof buffer);
  if (got < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (got <= 0) {
    ::close(from);
    from = -1;
    pass_on_lines(true);
    if (!partial_line.empty()) keep("\n", 1);
    return;
  }
  wrote = true;
  const auto size = static_cast<std::size_t>(got);
  if (log >= 0) (void)io::write_all(log, std::string_view(buffer, size));  // the file gets the bytes as written
  keep(buffer, size);
  held.append(buffer, size);
  pass_on_lines(false);
}

void OutputStream::keep(const char* data, std::size_t size) {
  if (keep_lines == 0) return;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] != '\n') {
      if (partial_line.size() < kMaxKeptLine) partial_line += data[i];
      continue;
    }
    last_lines.push_back(std::move(partial_line));
    partial_line.clear();
    if (last_lines.size() > keep_lines) last_lines.pop_front();
  }
}

// Passes on every complete line, and every progress update at once: programs draw progress in
// place with carriage returns, as `text\r` (C's printf) or `\rtext` (tqdm, Lightning's bar); the
// line they draw on may never end. Keeps the rest of a line that is still being written (unless
// it grew too long).
void OutputStream::pass_on_lines(bool at_end) {
  if (to < 0) {
    held.clear();
    return;
  }
  // A last line without its newline gets one, as does progress left drawn: Open MPI would glue
  // the next instance's tagged output onto it.
  if (at_end && !held.empty() && held.back() != '\n') held += '\n';
  if (at_end && held.empty() && last_passed == '\r') held = "\n";
  const std::size_t last_newline = held.rfind('\n');
  const std::size_t last_return = held.rfind('\r');
  std::size_t upto = last_newline == std::string::npos ? 0 : last_newline + 1;
  const bool drawing =
      last_return != std::string::npos && (last_newline == std::string::npos || last_return > last_newline);
  if (drawing || held.size() >= kMaxHeld) upto = held.size();
  if (upto == 0) return;
  write_segments(upto, drawing);
  held.erase(0, upto);
}

namespace {

// `piece` with `tag` where Open MPI's --tag-output puts its own: at the start, and after each
// newline but the last.
std::string with_tags(const std::string& piece, const std::string& tag) {
  std::string tagged = tag + piece;
  for (std::size_t at = tagged.find('\n', tag.size()); at != std::string::npos && at + 1 < tagged.size();
       at = tagged.find('\n', at + 1 + tag.size())) {
    tagged.insert(at + 1, tag);
  }
  return tagged;
}

}  // namespace

// Open MPI tags the start of each piece it reads (and after each newline, never after a
// return). So each update is one write that ends in a return, and an update written as
// `\rtext` is passed on as `text\r`: its leading return, coming where the cursor is already at
// the start of the line, is skipped. The tag then starts each update on the terminal instead
// of being overwritten by it, and updates written at once stay separately tagged pieces. Runs
// of whole lines stay one write; "\r\n" is a line end.
void OutputStream::write_segments(std::size_t upto, bool drawing) {
  std::string piece;
  auto pass = [&] {
    // a closed stdout is the reader's choice: keep draining
    (void)io::write_all(to, tag.empty() ? piece : with_tags(piece, tag));
    last_passed = piece.back();
    piece.clear();
  };
  for (std::size_t i = 0; i < upto; ++i) {
    const char c = held[i];
    if (c == '\r' && !(i + 1 < upto && held[i + 1] == '\n')) {
      if (piece.empty() && (last_passed == '\r' || last_passed == '\n')) continue;
      piece += c;
      pass();
      continue;
    }
    piece += c;
  }
  if (piece.empty()) return;
  // The update being drawn (text after a return, no newline yet): passed on now, with the return
  // the program writes before its next update (skipped then).
  if (drawing && piece.back() != '\n') piece += '\r';
  pass();
}

}  // namespace popdist::cli
