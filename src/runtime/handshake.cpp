// Why a handshake, and why this shape:
//
// MPI_Comm_create_group is collective over the new group's members only. If instance 0 creates
// {0,1} while instance 1 creates {0,1,2}, both block forever inside MPI. Before creating, every
// member therefore tells every other member which set it is creating (a Hello) and waits for
// their Hellos.
//
// All handshake messages use ONE tag and are received with MPI_ANY_SOURCE, and are interpreted
// by their content. A tag per set would not do: instance 0 would wait for a message tagged
// {0,1} that instance 1, busy with {0,1,2}, never sends -- the very hang we want to turn into an
// error. With content-based matching a Hello from a member of my set about a different set that
// contains me is a proof of inconsistency: that member is creating another set I belong to
// first, i.e. the two instances register sets they share in different orders, which MPI cannot
// resolve either. A Hello from a non-member of my set is legitimate (it is creating a set I will
// create later, e.g. disjoint sets registered in different orders) and is stashed until then.
//
// On an inconsistency the instance that sees it sends a Mismatch (with its error text) to every
// instance of both sets, so that members still waiting for a Hello that will never come raise
// the same error. Both sets are then poisoned locally: any later registration of them throws at
// once, and stale Hellos about them are dropped.
//
// With a deadline (POPDIST_SYNC_TIMEOUT or the caller's timeout), a member still waiting for
// Hellos when it passes sends GaveUp to every other member and throws TimeoutError naming the
// members it waited for. A member that was waiting fails with that notice; one that arrives late
// finds it, and before MPI_Comm_create_group every member looks once more for a GaveUp or a
// Mismatch about its set, so that a late member does not enter the creation alone. (A late
// member whose last Hello arrives in the instant between that look and a peer's deadline can
// still enter it: any timeout has that race.)
#include "runtime/handshake.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>
#include <thread>

#include "popdist/error.hpp"
#include "runtime/instance_sets.hpp"
#include "runtime/mpi_call.hpp"
#include "runtime/pending_sends.hpp"

namespace popdist::detail {
namespace {

constexpr int kHandshakeTag = static_cast<int>(ControlTag::Handshake);

void put_int(std::vector<char>& out, std::int32_t value) {
  const auto* bytes = reinterpret_cast<const char*>(&value);
  out.insert(out.end(), bytes, bytes + sizeof value);
}

void put_ints(std::vector<char>& out, const std::vector<int>& values) {
  put_int(out, static_cast<std::int32_t>(values.size()));
  for (const auto value : values) put_int(out, value);
}

void put_text(std::vector<char>& out, const std::string& text) {
  put_int(out, static_cast<std::int32_t>(text.size()));
  out.insert(out.end(), text.begin(), text.end());
}

class Reader {
 public:
  Reader(const std::vector<char>& bytes, int source) : bytes_(bytes), source_(source) {}
  std::int32_t get_int() {
    need(sizeof(std::int32_t));
    std::int32_t value = 0;
    std::memcpy(&value, bytes_.data() + position_, sizeof value);
    position_ += sizeof value;
    return value;
  }
  std::vector<int> get_ints() {
    const auto count = get_int();
    if (count < 0) malformed();
    std::vector<int> values;
    for (std::int32_t i = 0; i < count; ++i) values.push_back(get_int());
    return values;
  }
  std::string get_text() {
    const auto length = get_int();
    if (length < 0) malformed();
    need(static_cast<std::size_t>(length));
    std::string text(bytes_.data() + position_, static_cast<std::size_t>(length));
    position_ += static_cast<std::size_t>(length);
    return text;
  }

 private:
  void need(std::size_t count) {
    if (position_ + count > bytes_.size()) malformed();
  }
  [[noreturn]] void malformed() const {
    throw Error(fmt::format("register_communicator: malformed handshake message ({} bytes) from instance {}",
                            bytes_.size(), source_));
  }
  const std::vector<char>& bytes_;
  int source_;
  std::size_t position_ = 0;
};

std::string id_text(const std::string& id) { return id.empty() ? std::string("no id") : fmt::format("id '{}'", id); }

}  // namespace

std::vector<char> encode(const HandshakeMessage& message) {
  std::vector<char> out;
  put_int(out, message.kind);
  put_ints(out, message.set);
  put_text(out, message.id);
  put_ints(out, message.other_set);
  put_text(out, message.text);
  return out;
}

namespace {
/// Posts `message` to every instance of `to` except `me` (nonblocking: a peer that never receives
/// it must not hold this instance up).
template <class Instances>
void send_to_others(const HandshakeMessage& message, const Instances& to, int me, MPI_Comm control) {
  const auto bytes = encode(message);
  for (const auto instance : to) {
    if (instance != me) pending_sends().send(bytes, instance, kHandshakeTag, control);
  }
}
}  // namespace

HandshakeMessage decode(const std::vector<char>& bytes, int source) {
  Reader reader(bytes, source);
  HandshakeMessage message;
  message.kind = reader.get_int();
  message.set = reader.get_ints();
  message.id = reader.get_text();
  message.other_set = reader.get_ints();
  message.text = reader.get_text();
  return message;
}

void Handshake::reset() noexcept {
  stash_.clear();
  poisoned_.clear();
}

void Handshake::poison(const std::vector<int>& set, const std::string& text) { poisoned_.emplace(set, text); }

void Handshake::fail(const std::vector<int>& mine, const std::vector<int>& theirs, const std::string& text, int me,
                     MPI_Comm control) {
  poison(mine, text);
  poison(theirs, text);
  std::set<int> everyone(mine.begin(), mine.end());
  everyone.insert(theirs.begin(), theirs.end());
  HandshakeMessage notice;
  notice.kind = HandshakeMessage::Mismatch;
  notice.set = mine;
  notice.other_set = theirs;
  notice.text = text;
  send_to_others(notice, everyone, me, control);
  throw UsageError(text);
}

void Handshake::give_up(const std::vector<int>& members, const std::set<int>& missing, double seconds, int me,
                        MPI_Comm control) {
  const std::vector<int> absent(missing.begin(), missing.end());
  const auto text = fmt::format("register_communicator over {}: instance{} {} did not register it within {} s "
                                "(instance {} gave up waiting; the set cannot be created in this job)",
                                format_set(members), absent.size() == 1 ? "" : "s", fmt::join(absent, ", "), seconds,
                                me);
  poison(members, text);
  HandshakeMessage notice;
  notice.kind = HandshakeMessage::GaveUp;
  notice.set = members;
  notice.other_set = absent;
  notice.text = text;
  send_to_others(notice, members, me, control);
  throw TimeoutError(text, absent);
}

void Handshake::run(const std::vector<int>& members, const std::string& id, int me, MPI_Comm control,
                    const Deadline& deadline) {
  if (const auto found = poisoned_.find(members); found != poisoned_.end()) {
    throw UsageError(found->second);
  }
  std::set<int> waiting;
  for (const auto member : members) {
    if (member != me) waiting.insert(member);
  }
  if (waiting.empty()) return;

  const auto mismatch_text = [&](int other, const HandshakeMessage& hello) {
    if (hello.set == members) {
      return fmt::format("register_communicator: inconsistent registration: instance {} registers {} with {} but "
                         "instance {} registers it with {}; every member must use the same id",
                         me, format_set(members), id_text(id), other, id_text(hello.id));
    }
    return fmt::format("register_communicator: inconsistent registration: instance {} is creating {} ({}) while "
                       "instance {} is creating {} ({}); every member of a set must register it, and two instances "
                       "must register the sets they share in the same order",
                       me, format_set(members), id_text(id), other, format_set(hello.set), id_text(hello.id));
  };
  const auto ids_clash = [&](const HandshakeMessage& hello) {
    return !id.empty() && !hello.id.empty() && hello.id != id;
  };

  // Hellos that arrived during earlier handshakes.
  for (auto it = stash_.begin(); it != stash_.end();) {
    const auto source = it->source;
    const auto& hello = it->message;
    if (poisoned_.count(hello.set) != 0) {
      it = stash_.erase(it);
    } else if (waiting.count(source) != 0) {
      // A member of my set stashed a Hello earlier: it is about my set (fine) or about another
      // set it created before mine that I have not (inconsistent order).
      if (hello.set != members || ids_clash(hello)) {
        const auto text = mismatch_text(source, hello);
        const auto theirs = hello.set;
        stash_.erase(it);
        fail(members, theirs, text, me, control);
      }
      waiting.erase(source);
      it = stash_.erase(it);
    } else {
      ++it;
    }
  }

  HandshakeMessage hello;
  hello.kind = HandshakeMessage::Hello;
  hello.set = members;
  hello.id = id;
  send_to_others(hello, members, me, control);

  // Takes one handshake message if one is there (false when none): a matched probe (MPI-3) so
  // that receiving is race-free even with MPI_THREAD_MULTIPLE; polling (not a blocking probe) so
  // that the MPI lock, when calls are serialized, is not held while we wait.
  const auto take_one = [&]() {
    int flag = 0;
    MPI_Message matched = MPI_MESSAGE_NULL;
    MPI_Status status;
    {
      MpiLock lock;
      check_mpi(MPI_Improbe(MPI_ANY_SOURCE, kHandshakeTag, control, &flag, &matched, &status), "MPI_Improbe");
    }
    if (flag == 0) return false;
    int count = 0;
    std::vector<char> buffer;
    {
      MpiLock lock;
      check_mpi(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
      buffer.resize(static_cast<std::size_t>(count));
      check_mpi(MPI_Mrecv(buffer.data(), count, MPI_BYTE, &matched, MPI_STATUS_IGNORE), "MPI_Mrecv");
    }
    const auto source = status.MPI_SOURCE;
    auto message = decode(buffer, source);
    if (message.kind == HandshakeMessage::GaveUp) {
      poison(message.set, message.text);
      if (message.set == members) throw TimeoutError(message.text, message.other_set);
      return true;  // about a set this instance has not reached yet: poisoned now
    }
    if (message.kind == HandshakeMessage::Mismatch) {
      poison(message.set, message.text);
      poison(message.other_set, message.text);
      if (message.set == members || message.other_set == members) {
        throw UsageError(message.text);
      }
      return true;  // about sets this instance has not reached yet: they are poisoned now
    }
    if (poisoned_.count(message.set) != 0) return true;  // a stale Hello from a failed creation
    if (waiting.count(source) != 0) {
      if (message.set != members || ids_clash(message)) {
        fail(members, message.set, mismatch_text(source, message), me, control);
      }
      waiting.erase(source);
    } else {
      // From a non-member of my set: it is creating a set I will create later (keep it for
      // then). A second Hello for my set from a member cannot happen in a consistent program;
      // it is kept too, and a later handshake with that member reports it.
      stash_.push_back({source, std::move(message)});
    }
    return true;
  };

  const auto start = std::chrono::steady_clock::now();
  while (!waiting.empty()) {
    if (take_one()) continue;
    if (deadline.passed()) give_up(members, waiting, deadline.seconds(), me, control);
    // Spin briefly, then yield so that oversubscribed peers run, then sleep so that a long wait
    // (a member that registers much later) does not burn a core.
    const auto waited = std::chrono::steady_clock::now() - start;
    if (waited > std::chrono::milliseconds(10)) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    } else if (waited > std::chrono::microseconds(50)) {
      std::this_thread::yield();
    }
  }
  // One more look for a GaveUp or Mismatch about this set before entering the creation. A notice
  // sent long ago can still sit in MPI's queues behind the Hellos: each probe is one progress
  // pass, so look with several passes (a few microseconds), not once.
  if (deadline.bounded()) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
    for (int pass = 0; pass < 16 && (pass < 4 || std::chrono::steady_clock::now() < until); ++pass) {
      while (take_one()) {
      }
    }
  }
  pending_sends().reap();
}

}  // namespace popdist::detail
