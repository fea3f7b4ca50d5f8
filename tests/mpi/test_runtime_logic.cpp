// The pure logic of the runtime, tested without MPI: the job check and init()'s screen, the host
// layout from the shared-memory split, participant validation, POPDIST_SYNC_TIMEOUT, tags and
// the handshake's encoding.
#include <catch2/catch.hpp>
#include <algorithm>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "error_message.hpp"
#include "popdist/error.hpp"
#include "popdist/job_check.hpp"
#include "protocols/instance_sets.hpp"
#include "protocols/registration/handshake.hpp"
#include "runtime/instance_record.hpp"
#include "runtime/job_exchange.hpp"

using popdist::detail::InstanceRecord;
namespace field = popdist::field;

namespace {

// n instances, `local` replicas each, uniform.
std::vector<InstanceRecord> uniform_job(int n, int local = 1) {
  std::vector<InstanceRecord> records(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    auto& r = records[static_cast<std::size_t>(i)];
    r.value(field::instance_index) = i;
    r.value(field::num_instances) = n;
    r.value(field::replica_index_offset) = i * local;
    r.value(field::num_local_replicas) = local;
    r.value(field::num_total_replicas) = n * local;
    r.mpi_rank = i;
  }
  return records;
}

// The views init() checks, rebuilt from records as it does.
std::vector<popdist::InstanceView> views_of(const std::vector<InstanceRecord>& records) {
  const auto placements = popdist::detail::host_placements(records);
  std::vector<popdist::InstanceView> views;
  for (std::size_t i = 0; i < records.size(); ++i) {
    views.push_back({popdist::detail::topology_of(records[i], placements[i]), "h"});
  }
  return views;
}

std::string errors_of(const std::vector<InstanceRecord>& records) { return popdist::check_job(views_of(records)).errors_text(); }

// What the screen of init()'s exchange concludes for these records: the reductions computed
// here by hand, as MPI_Exscan and MPI_Allreduce(MAX) compute them.
popdist::detail::ScreenVerdict screen_of(const std::vector<InstanceRecord>& records) {
  popdist::detail::ScreenVector reduced;
  reduced.fill(std::numeric_limits<std::int64_t>::min());
  std::int64_t before = 0;
  const auto n = static_cast<int>(records.size());
  for (int rank = 0; rank < n; ++rank) {
    const auto& r = records[static_cast<std::size_t>(rank)];
    popdist::detail::ScreenInput input;
    input.failed = r.failed != 0;
    input.rank = rank;
    input.size = n;
    input.replicas_before = before;
    input.offset = r.value(field::replica_index_offset);
    input.local = r.value(field::num_local_replicas);
    input.total = r.value(field::num_total_replicas);
    input.ipus = r.value(field::ipus_per_replica);
    input.uniform = r.has(InstanceRecord::kUniform);
    const auto mine = popdist::detail::screen_contribution(input);
    for (std::size_t k = 0; k < reduced.size(); ++k) reduced[k] = std::max(reduced[k], mine[k]);
    before += input.failed ? 0 : r.value(field::num_local_replicas);
  }
  return popdist::detail::screen_verdict(reduced);
}

}  // namespace

TEST_CASE("Runtime.logic: consistent jobs pass the job check and the screen", "[logic]") {
  for (int n = 1; n <= 6; ++n) {
    for (int local = 1; local <= 3; ++local) {
      const auto records = uniform_job(n, local);
      CHECK(errors_of(records).empty());
      const auto verdict = screen_of(records);
      CHECK_FALSE(verdict.amiss);
      CHECK_FALSE(verdict.any_failed);
    }
  }
  // Non-uniform but tiled: 3 + 1 replicas.
  auto records = uniform_job(2);
  records[0].value(field::num_local_replicas) = 3;
  records[1].value(field::replica_index_offset) = 3;
  for (auto& r : records) {
    r.value(field::num_total_replicas) = 4;
    r.flags &= ~InstanceRecord::kUniform;
  }
  CHECK(errors_of(records).empty());
  CHECK_FALSE(screen_of(records).amiss);
  CHECK_FALSE(screen_of(records).all_uniform);  // init() gathers the ranges then
  // Tiled in another order than the instances': valid, but the screen sends it to the job check.
  auto reversed = uniform_job(2);
  reversed[0].value(field::replica_index_offset) = 1;
  reversed[1].value(field::replica_index_offset) = 0;
  CHECK(errors_of(reversed).empty());
  CHECK(screen_of(reversed).amiss);
}

TEST_CASE("Runtime.logic: disagreements name the instances and values", "[logic]") {
  auto totals = uniform_job(3);
  totals[1].value(field::num_total_replicas) = 5;
  CHECK_THAT(errors_of(totals), Catch::Contains("total number of replicas") && Catch::Contains("instances 0, 2 say 3") &&
                                    Catch::Contains("instance 1 says 5"));
  CHECK(screen_of(totals).amiss);

  auto devices = uniform_job(2);
  devices[0].value(field::ipus_per_replica) = 2;
  CHECK_THAT(errors_of(devices), Catch::Contains("devices per replica") && Catch::Contains("instance 0 says 2") &&
                                     Catch::Contains("instance 1 says 1"));
  CHECK(screen_of(devices).amiss);

  auto gap = uniform_job(3);
  gap[2].value(field::replica_index_offset) = 2;
  gap[1].value(field::replica_index_offset) = 3;
  for (auto& r : gap) r.value(field::num_total_replicas) = 4;
  CHECK_THAT(errors_of(gap), Catch::Contains("do not tile 0..3: replica 1 driven by no instance"));
  CHECK(screen_of(gap).amiss);

  auto overlap = uniform_job(2, 2);
  overlap[1].value(field::replica_index_offset) = 1;
  CHECK_THAT(errors_of(overlap), Catch::Contains("replica 1 driven by both instance 0 (replicas [0, 2)) and instance 1 "
                                                 "(replicas [1, 3))"));
  CHECK(screen_of(overlap).amiss);

  auto short_of_total = uniform_job(2);
  for (auto& r : short_of_total) r.value(field::num_total_replicas) = 5;
  CHECK_THAT(errors_of(short_of_total), Catch::Contains("replicas 2-4 driven by no instance"));
  CHECK(screen_of(short_of_total).amiss);

  auto twice = uniform_job(3);
  twice[2].value(field::instance_index) = 1;
  CHECK_THAT(errors_of(twice), Catch::Contains("not a permutation") && Catch::Contains("MPI ranks 1, 2 all claim instance index 1"));

  auto swapped = uniform_job(2);
  swapped[0].value(field::instance_index) = 1;
  swapped[1].value(field::instance_index) = 0;
  CHECK_THAT(errors_of(swapped), Catch::Contains("MPI rank 0 is instance 1"));

  auto count = uniform_job(2);
  count[1].value(field::num_instances) = 3;
  CHECK_THAT(errors_of(count), Catch::Contains("instance 1 (MPI rank 1) counts 3 instances but MPI has 2"));
}

TEST_CASE("Runtime.logic: failed instances are found, the lowest named by the screen", "[logic]") {
  auto records = uniform_job(4);
  records[3] = popdist::detail::make_failed_record();
  records[1] = popdist::detail::make_failed_record();
  CHECK(popdist::detail::failed_ranks(records) == std::vector<int>{1, 3});
  const auto verdict = screen_of(records);
  CHECK(verdict.any_failed);
  CHECK(verdict.lowest_failed == 1);
  for (auto& r : records) r = popdist::detail::make_failed_record();
  CHECK(screen_of(records).lowest_failed == 0);
}

TEST_CASE("Runtime.logic: the record init() may gather is compact", "[logic]") {
  // Derived from the field table, with no fixed cap: one int32 per non-flag field and six of its
  // own, no padding; 64 bytes with today's fields (tests/bench/README.md counts it per instance).
  STATIC_REQUIRE(sizeof(InstanceRecord) ==
                 sizeof(std::int32_t) * (6 + popdist::detail::count_value_fields()));
}

TEST_CASE("Runtime.logic: a record carries every field of the table back", "[logic]") {
  popdist::Topology t;
  t.launcher = popdist::Launcher::Slurm;
  t.instance_index = 2;
  t.num_instances = 3;
  t.num_local_replicas = 2;
  t.num_total_replicas = 6;
  t.replica_index_offset = 4;
  t.ipus_per_replica = 4;
  t.uniform_replicas_per_instance = false;
  t.popdist_env_set = true;
  t.ipus_per_replica_set = true;
  const auto back = popdist::detail::topology_of(popdist::detail::make_record(t), {});
  for (const auto& row : popdist::topology_fields) {
    if (row.name == field::host_index || row.name == field::local_instance_index ||
        row.name == field::num_local_instances) {
      continue;  // MPI's placement decides these when the launcher did not say
    }
    CHECK(popdist::same_field_value(back, t, row));
  }
  CHECK(back.ipus_per_replica_set);
  CHECK(popdist::detail::make_failed_record().failed == 1);
}

TEST_CASE("Runtime.logic: host placement from the shared-memory split", "[logic]") {
  // Hosts given by each instance's leader (lowest rank on its host): 3 + 1, 2 + 2, interleaved.
  struct Case {
    std::vector<int> leaders;
    std::vector<int> local_index;
    std::vector<int> expected_host;
  };
  const std::vector<Case> cases{
      {{0, 0, 0, 3}, {0, 1, 2, 0}, {0, 0, 0, 1}},
      {{0, 0, 2, 2}, {0, 1, 0, 1}, {0, 0, 1, 1}},
      {{0, 1, 0, 1}, {0, 0, 1, 1}, {0, 1, 0, 1}},  // round-robin placement
      {{0}, {0}, {0}},
  };
  for (const auto& c : cases) {
    auto records = uniform_job(static_cast<int>(c.leaders.size()));
    for (std::size_t i = 0; i < records.size(); ++i) {
      records[i].shm_leader = c.leaders[i];
      records[i].shm_local_index = c.local_index[i];
      records[i].shm_local_count =
          static_cast<int>(std::count(c.leaders.begin(), c.leaders.end(), c.leaders[i]));
    }
    const auto placements = popdist::detail::host_placements(records);
    for (std::size_t i = 0; i < records.size(); ++i) {
      CHECK(placements[i].host_index == c.expected_host[i]);
      CHECK(placements[i].local_instance_index == c.local_index[i]);
    }
  }
}

TEST_CASE("Runtime.logic: MPI's placement fills in what the launcher did not say", "[logic]") {
  popdist::Topology t;
  t.host_index = std::nullopt;
  t.provenance["host_index"] = "default";
  t.provenance["local_instance_index"] = "OMPI_COMM_WORLD_LOCAL_RANK";
  t.provenance["num_local_instances"] = "OMPI_COMM_WORLD_LOCAL_SIZE";
  t.local_instance_index = 1;
  t.num_local_instances = 2;
  const popdist::detail::HostPlacement agreeing{1, 1, 2};
  auto copy = t;
  CHECK(popdist::detail::apply_placement(copy, popdist::detail::said_by_launcher(t), agreeing).empty());
  CHECK(copy.host_index == 1);
  CHECK(copy.provenance["host_index"] == "mpi");
  CHECK(copy.provenance["local_instance_index"] == "OMPI_COMM_WORLD_LOCAL_RANK");

  const popdist::detail::HostPlacement disagreeing{0, 0, 3};
  copy = t;
  const auto warnings = popdist::detail::apply_placement(copy, popdist::detail::said_by_launcher(t), disagreeing);
  REQUIRE(warnings.size() == 2);
  CHECK_THAT(warnings[0], Catch::Contains("OMPI_COMM_WORLD_LOCAL_RANK") && Catch::Contains("says 0"));
  CHECK(copy.local_instance_index == 1);  // the launcher's value is kept

  popdist::Topology unknown;
  unknown.provenance["local_instance_index"] = "default";
  unknown.provenance["num_local_instances"] = "default";
  unknown.provenance["host_index"] = "SLURM_NODEID";
  unknown.host_index = 4;
  CHECK(popdist::detail::apply_placement(unknown, popdist::detail::said_by_launcher(unknown), disagreeing).size() == 1);
  CHECK(unknown.local_instance_index == 0);
  CHECK(unknown.num_local_instances == 3);
  CHECK(unknown.provenance["num_local_instances"] == "mpi");
  CHECK(unknown.host_index == 4);
}

TEST_CASE("Runtime.logic: participants are validated with clear errors", "[logic]") {
  using popdist::detail::validated_members;
  CHECK(validated_members(std::vector<int>{3, 1, 2}, 4, "f") == std::vector<int>{1, 2, 3});
  CHECK(validated_members(popdist::InstanceSet{0}, 1, "f") == std::vector<int>{0});
  const auto usage_error_of = [](std::vector<int> list, int n) -> std::string {
    try {
      (void)validated_members(list, n, "register_communicator");
    } catch (const popdist::UsageError& error) {
      return error.what();
    }
    return "(no UsageError)";
  };
  CHECK(usage_error_of({}, 4) ==
        "register_communicator: the set of participants is empty; give at least one instance index in 0..3");
  CHECK(usage_error_of({0, 4, -1}, 4) ==
        "register_communicator: participants 4, -1 out of range: valid instance indices are 0..3 (4 instances)");
  CHECK(usage_error_of({2, 1, 2, 1, 2}, 4) ==
        "register_communicator: duplicate participants 1, 2 in [2, 1, 2, 1, 2]: each instance may appear once");
}

TEST_CASE("Runtime.logic: POPDIST_SYNC_TIMEOUT", "[logic]") {
  using popdist::detail::parse_sync_timeout;
  CHECK(!parse_sync_timeout(std::nullopt));
  CHECK(parse_sync_timeout(std::string("30")) == 30.0);
  CHECK(parse_sync_timeout(std::string("0.25")) == 0.25);
  CHECK(parse_sync_timeout(std::string("1e-3")) == 0.001);
  for (const char* bad : {"", "abc", "-1", "0", "nan", "2s", " 2", "1,5"}) {
    INFO("value '" << bad << "'");
    try {
      (void)parse_sync_timeout(std::string(bad));
      FAIL("accepted");
    } catch (const popdist::EnvironmentError& error) {
      CHECK_THAT(error.what(), Catch::Contains(std::string("POPDIST_SYNC_TIMEOUT='") + bad + "'") &&
                                   Catch::Contains("positive number of seconds"));
    }
  }
  CHECK_THROWS_AS(popdist::detail::check_timeout_argument(0), popdist::UsageError);
  CHECK_NOTHROW(popdist::detail::check_timeout_argument(0.001));
}

TEST_CASE("Runtime.logic: tags stay in range and apart", "[logic]") {
  using namespace popdist::detail;
  for (const int tag_ub : {32767, 2147483647}) {
    std::set<int> seen;
    for (int a = 0; a < 8; ++a) {
      for (int b = a; b < 8; ++b) {
        const auto hash = set_hash(a == b ? std::vector<int>{a} : std::vector<int>{a, b});
        const auto arrived = timed_tag(hash, TimedKind::Arrived, tag_ub);
        const auto gave_up = timed_tag(hash, TimedKind::GaveUp, tag_ub);
        CHECK(arrived >= static_cast<int>(ControlTag::FirstSetTag));
        CHECK(gave_up == arrived + 1);
        CHECK(gave_up <= tag_ub);
        CHECK(creation_tag(hash, tag_ub) <= tag_ub);
        seen.insert(arrived);
      }
    }
    CHECK(seen.size() == 36);  // 36 sets, 36 distinct tag pairs
  }
  CHECK(set_hash({0, 1}) != set_hash({1, 0}));  // order matters: callers pass sorted members
  CHECK(set_hash({0, 1}) == set_hash({0, 1}));
}

TEST_CASE("Runtime.logic: sets are named member by member up to 16 members, shortly beyond", "[logic]") {
  using popdist::detail::format_set;
  const auto range = [](int first, int end, int stride = 1) {
    std::vector<int> members;
    for (int i = first; i < end; i += stride) members.push_back(i);
    return members;
  };
  CHECK(format_set(std::vector<int>{}) == "{}");
  CHECK(format_set(std::vector<int>{3}) == "{3}");
  CHECK(format_set(range(0, 16)) == "{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}");
  CHECK(format_set(popdist::InstanceSet{0, 2, 3}) == "{0, 2, 3}");
  CHECK(format_set(range(0, 17)) == "{0-16} (17 instances)");
  auto all_but_one = range(0, 256);
  all_but_one.erase(all_but_one.begin() + 1);
  CHECK(format_set(all_but_one) == "{0, 2-255} (255 instances)");
  // Runs of two stay two members; 16 items are shown in full, more around "...".
  CHECK(format_set(range(0, 48, 3)) == "{0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39, 42, 45}");
  auto pairs = range(0, 30, 3);
  for (int i = 0; i < 30; i += 3) pairs.push_back(i + 1);
  std::sort(pairs.begin(), pairs.end());
  CHECK(format_set(pairs) == "{0, 1, 3, 4, 6, 7, 9, 10, ..., 18, 19, 21, 22, 24, 25, 27, 28} (20 instances)");
  CHECK(format_set(range(0, 16384, 100)) ==
        "{0, 100, 200, 300, 400, 500, 600, 700, ..., 15600, 15700, 15800, 15900, 16000, 16100, 16200, 16300} "
        "(164 instances)");
  CHECK(format_set(range(0, 16384)) == "{0-16383} (16384 instances)");
}

TEST_CASE("Runtime.logic: handshake messages round-trip", "[logic]") {
  popdist::detail::HandshakeMessage message;
  message.kind = popdist::detail::HandshakeMessage::Mismatch;
  message.digest = popdist::detail::digest_of({0, 1});
  message.id = "pair";
  message.other_digest = popdist::detail::digest_of({0, 1, 2});
  message.text = "inconsistent";
  const auto bytes = popdist::detail::encode(message);
  const auto back = popdist::detail::decode(bytes, 3);
  CHECK(back.kind == message.kind);
  CHECK(back.digest == message.digest);
  CHECK(back.set.empty());
  CHECK(back.id == message.id);
  CHECK(back.other_digest == message.other_digest);
  CHECK(back.text == message.text);
  // A SetList carries its list, which must match its digest.
  popdist::detail::HandshakeMessage list;
  list.kind = popdist::detail::HandshakeMessage::SetList;
  list.set = {0, 1, 2};
  list.digest = popdist::detail::digest_of(list.set);
  CHECK(popdist::detail::decode(popdist::detail::encode(list), 3).set == list.set);
  list.digest = popdist::detail::digest_of({0, 1});
  CHECK_THROWS_WITH(popdist::detail::decode(popdist::detail::encode(list), 3),
                    Catch::Contains("malformed handshake message"));
  auto truncated = bytes;
  truncated.resize(bytes.size() - 3);
  CHECK_THROWS_WITH(popdist::detail::decode(truncated, 3), Catch::Contains("malformed handshake message") &&
                                                                Catch::Contains("instance 3"));
}

TEST_CASE("Runtime.logic: a Hello names its set by a digest of fixed size", "[logic]") {
  using popdist::detail::digest_of;
  using popdist::detail::HandshakeMessage;
  std::vector<int> all(4096);
  for (int i = 0; i < 4096; ++i) all[static_cast<std::size_t>(i)] = i;
  // The same set has the same digest; sets differing in one member, or by a member's position
  // (the same sum of members), do not.
  CHECK(digest_of(all) == digest_of(std::vector<int>(all)));
  CHECK(digest_of({0, 1}) != digest_of({0, 2}));
  CHECK(digest_of({0, 3}) != digest_of({1, 2}));
  CHECK(digest_of({0, 1, 2}) != digest_of({0, 1}));
  // A Hello's bytes do not grow with its set (registration's bytes per member are O(log N)).
  const auto hello_of = [](const std::vector<int>& set) {
    return popdist::detail::encode(HandshakeMessage{HandshakeMessage::Hello, digest_of(set), {}, "all", {}, ""});
  };
  CHECK(hello_of(all).size() == hello_of({0, 1}).size());
  CHECK(hello_of(all).size() <= 64);
  // A list travels only with its own digest: another is a malformed message.
  HandshakeMessage list{HandshakeMessage::SetList, digest_of({0, 1}), {0, 2}, "", {}, ""};
  CHECK_THROWS_WITH(popdist::detail::decode(popdist::detail::encode(list), 5),
                    Catch::Contains("malformed handshake message") && Catch::Contains("instance 5"));
  list.set = {0, 1};
  CHECK(popdist::detail::decode(popdist::detail::encode(list), 5).set == list.set);
}
