// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// cache_guard: the guard of guard.h in front of SQLite or PostgreSQL.
//
//   cache_guard check --db sqlite:/tmp/x.db --dir /tmp/guard   correctness (the meson test)
//   cache_guard bench --db sqlite:/tmp/x.db --dir /tmp/guard   measurements (JSON lines on stdout)
//   cache_guard load --keys 10000000 --dir /tmp/guard          time to build, save and map a filter
//
// --db postgres:"host=127.0.0.1 port=5433 dbname=postgres" selects PostgreSQL (run_postgres.sh
// starts a throwaway server).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "guard.h"
#include "store.h"

namespace cache_guard {
namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  std::string command;
  std::string db = "sqlite:cache_guard.db";
  std::string dir = ".";
  uint64_t rows = 200'000;
  uint64_t keys = 10'000'000;
  int clients = 4;
  double seconds = 3;
  // bench: the offered load of the open-loop runs, lookups/s over all clients.
  double rate = 5000;
};

bool Parse(int argc, char** argv, Args& args) {
  if (argc < 2) return false;
  args.command = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--db") {
      args.db = value;
    } else if (flag == "--dir") {
      args.dir = value;
    } else if (flag == "--rows") {
      args.rows = std::strtoull(value, nullptr, 10);
    } else if (flag == "--keys") {
      args.keys = std::strtoull(value, nullptr, 10);
    } else if (flag == "--clients") {
      args.clients = std::atoi(value);
    } else if (flag == "--seconds") {
      args.seconds = std::atof(value);
    } else if (flag == "--rate") {
      args.rate = std::atof(value);
    } else {
      return false;
    }
  }
  return true;
}

absl::StatusOr<std::unique_ptr<Database>> OpenDatabase(const std::string& spec) {
  if (spec.starts_with("sqlite:")) return OpenSqlite(spec.substr(7));
  if (spec.starts_with("postgres:")) return OpenPostgres(spec.substr(9));
  return absl::InvalidArgumentError(absl::StrCat("--db must be sqlite:PATH or postgres:CONNINFO"));
}

#define CHECK_OK(expr)                                                                \
  do {                                                                                \
    if (absl::Status _s = (expr); !_s.ok()) {                                         \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, _s.ToString().c_str()); \
      std::exit(2);                                                                   \
    }                                                                                 \
  } while (0)

template <typename T>
T ValueOrDie(absl::StatusOr<T> value) {
  CHECK_OK(value.status());
  return *std::move(value);
}

int failures = 0;
void Expect(bool fact, const std::string& what) {
  std::printf("%s  %s\n", fact ? "ok  " : "FAIL", what.c_str());
  if (!fact) ++failures;
}

std::string Key(uint64_t i) { return absl::StrCat("user:", i); }

// Races `writers` writing keys prefix0, prefix1, ... (each through `write`) against readers that
// ask the database, then the filter, then the database again about the keys being written right
// now. A row committed before and after the filter said "absent" is the one mistake a guard must
// not make. Returns how many times that happened.
uint64_t RaceReadersAgainstWriters(
    Database& db, const std::string& prefix, uint64_t per_writer,
    const std::function<void(Connection&, const std::string&)>& write,
    const std::function<bool(const std::string&)>& filter_says_maybe) {
  constexpr int kWriters = 2, kReaders = 2;
  std::vector<std::atomic<uint64_t>> progress(kWriters);
  std::atomic<int> writing{kWriters};
  std::atomic<uint64_t> violations{0}, checked{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      auto conn = ValueOrDie(db.Connect());
      for (uint64_t i = 0; i < per_writer; ++i) {
        progress[w].store(i, std::memory_order_release);
        write(*conn, absl::StrCat(prefix, w, ":", i));
      }
      writing.fetch_sub(1);
    });
  }
  for (int r = 0; r < kReaders; ++r) {
    threads.emplace_back([&, r] {
      auto conn = ValueOrDie(db.Connect());
      std::mt19937_64 rng(r);
      while (writing.load() > 0) {
        const int w = static_cast<int>(rng() % kWriters);
        // The key being written now or just before: the only ones whose commit can race.
        const uint64_t i = progress[w].load(std::memory_order_acquire) - (rng() % 2);
        const std::string key = absl::StrCat(prefix, w, ":", i);
        // A key lives one interval (created once, deleted at most once), so a row visible
        // before and after the filter's answer existed while the filter answered.
        if (!ValueOrDie(conn->Get(key)).has_value()) continue;
        const bool maybe = filter_says_maybe(key);
        if (!ValueOrDie(conn->Get(key)).has_value()) continue;
        checked.fetch_add(1);
        if (!maybe) violations.fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::printf("      race: %llu committed rows checked while being written\n",
              static_cast<unsigned long long>(checked.load()));
  return violations.load();
}

int64_t UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The windowed guard: rows that live at most a TTL after their Put, forgotten by age. Runs on an
// emptied table: a windowed guard is for tables whose every row expires.
void CheckWindowed(Database& db, const Args& args) {
  std::printf("%s: windowed guard (expiry by age, TTL 2 s)\n", db.name().c_str());
  CHECK_OK(db.Reset());
  auto conn = ValueOrDie(db.Connect());
  GuardOptions options;
  options.filter_path = args.dir + "/check_windowed.bloom";
  options.capacity = 100'000;
  options.ttl_seconds = 2;
  std::remove(options.filter_path.c_str());
  std::remove((options.filter_path + ".seq").c_str());
  const auto ttl_key = [](uint64_t i) { return absl::StrCat("ttl:", i); };
  {
    auto guard = ValueOrDie(CacheGuard<bloomery::WindowedFilter>::Open(options, *conn));
    Expect(guard->Put(*conn, "forever", "v", 0).code() == absl::StatusCode::kInvalidArgument &&
               guard->Put(*conn, "late", "v", UnixNow() + 60).code() ==
                   absl::StatusCode::kInvalidArgument,
           "a row that would outlive the TTL is refused");
    for (uint64_t i = 0; i < 1000; ++i) CHECK_OK(guard->Put(*conn, ttl_key(i), "v", UnixNow() + 2));
    CHECK_OK(guard->Save(*conn));
  }
  {
    auto guard = ValueOrDie(CacheGuard<bloomery::WindowedFilter>::Open(options, *conn));
    uint64_t missing = 0;
    for (uint64_t i = 0; i < 1000; ++i) missing += !guard->filter()->MayContain(ttl_key(i));
    Expect(guard->restored() && missing == 0,
           "restart loads the saved window: every row within its TTL is in it");
    const uint64_t violations = RaceReadersAgainstWriters(
        db, "wrace:", 1500,
        [&](Connection& c, const std::string& key) {
          CHECK_OK(guard->Put(c, key, "v", UnixNow() + 2));
        },
        [&](const std::string& key) { return guard->filter()->MayContain(key); });
    Expect(violations == 0, absl::StrCat("no committed row within its TTL is answered absent (",
                                         violations, " times)"));
    // The window is ceil(2 * 4 / 3) = 3 s: wait it out, and the first rows are gone by age alone.
    std::this_thread::sleep_for(std::chrono::milliseconds(3200));
    CHECK_OK(guard->Put(*conn, "fresh", "v", UnixNow() + 2));
    uint64_t stale = 0;
    for (uint64_t i = 0; i < 1000; ++i) stale += guard->filter()->MayContain(ttl_key(i));
    Expect(stale < 60 && guard->filter()->MayContain("fresh"),
           absl::StrCat("after the window the expired rows left the filter by age (", stale,
                        " of 1000 still maybe: false positives, planned 1%); a fresh row is in"));
  }
}

int Check(const Args& args) {
  auto db = ValueOrDie(OpenDatabase(args.db));
  CHECK_OK(db->Reset());
  auto conn = ValueOrDie(db->Connect());
  constexpr uint64_t kExisting = 20'000;
  CHECK_OK(conn->Populate("user:", 0, kExisting));

  GuardOptions options;
  options.filter_path = args.dir + "/check_blocked.bloom";
  options.capacity = 100'000;
  std::remove(options.filter_path.c_str());
  std::remove((options.filter_path + ".seq").c_str());
  std::printf("%s: blocked guard\n", db->name().c_str());
  {
    auto guard = ValueOrDie(CacheGuard<bloomery::BlockedFilter>::Open(options, *conn));
    Expect(!guard->restored(), "first start scans the table");
    uint64_t missing = 0;
    for (uint64_t i = 0; i < kExisting; ++i) missing += !guard->filter()->MayContain(Key(i));
    Expect(missing == 0, "every existing row is in the filter after the bulk load");
    for (uint64_t i = 0; i < 10'000; ++i) {
      CHECK_OK(guard->Get(*conn, absl::StrCat("absent:", i)).status());
    }
    // Binomial: the count stays under mean + 5 sigma + 5 but for a broken filter.
    const uint64_t queried = guard->counters().db_queries.load();
    const double mean = 10'000 * guard->filter()->EstimatedFpr();
    Expect(static_cast<double>(queried) <= mean + 5 * std::sqrt(mean) + 5,
           absl::StrCat("10000 absent lookups cost ", queried, " queries (FPR now ",
                        guard->filter()->EstimatedFpr(), ", expected ", mean, ")"));
    const auto first = ValueOrDie(guard->Get(*conn, Key(7)));
    const auto second = ValueOrDie(guard->Get(*conn, Key(7)));
    Expect(first == second && first.has_value() && guard->counters().lru_hits.load() == 1,
           "a present key's second lookup is an LRU hit");
    CHECK_OK(guard->Put(*conn, Key(7), "new value"));
    Expect(ValueOrDie(guard->Get(*conn, Key(7))) == "new value", "a Put invalidates the LRU");
    for (uint64_t i = 0; i < 1000; ++i) CHECK_OK(guard->Put(*conn, absl::StrCat("new:", i), "v"));
    CHECK_OK(guard->Save(*conn));
  }
  // Written while no guard runs (another process): the restart must catch up through the log.
  for (uint64_t i = 0; i < 500; ++i) {
    (void)ValueOrDie(conn->Put(absl::StrCat("offline:", i), "v", 0));
  }
  {
    auto guard = ValueOrDie(CacheGuard<bloomery::BlockedFilter>::Open(options, *conn));
    Expect(guard->restored() && guard->replayed() == 500,
           absl::StrCat("restart maps the saved filter and replays the 500 later rows (replayed ",
                        guard->replayed(), ")"));
    uint64_t missing = 0;
    for (uint64_t i = 0; i < kExisting; ++i) missing += !guard->filter()->MayContain(Key(i));
    for (uint64_t i = 0; i < 1000; ++i) {
      missing += !guard->filter()->MayContain(absl::StrCat("new:", i));
    }
    for (uint64_t i = 0; i < 500; ++i) {
      missing += !guard->filter()->MayContain(absl::StrCat("offline:", i));
    }
    Expect(missing == 0, "after the restart every row is in the filter");

    const uint64_t violations = RaceReadersAgainstWriters(
        *db, "race:", 1500,
        [&](Connection& c, const std::string& key) { CHECK_OK(guard->Put(c, key, "v")); },
        [&](const std::string& key) { return guard->filter()->MayContain(key); });
    Expect(violations == 0,
           absl::StrCat("no committed row is ever answered absent (", violations, " times)"));
  }
  {
    // The control: add to the filter only after the commit, as a naive guard would. The race
    // must catch it, or the test above proves nothing.
    auto naive = ValueOrDie(
        bloomery::BlockedFilter::Create({.capacity = 100'000, .memory = {.concurrent = true}}));
    const uint64_t violations = RaceReadersAgainstWriters(
        *db, "naive:", 300,
        [&](Connection& c, const std::string& key) {
          (void)ValueOrDie(c.Put(key, "v", 0));
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          (void)naive.Insert(key);
        },
        [&](const std::string& key) { return naive.MayContain(key); });
    Expect(violations > 0, absl::StrCat("control: adding after the commit is caught (", violations,
                                        " committed rows answered absent)"));
  }

  std::printf("%s: counting guard (deletes and expiry)\n", db->name().c_str());
  options.filter_path = args.dir + "/check_counting.bloom";
  std::remove(options.filter_path.c_str());
  std::remove((options.filter_path + ".seq").c_str());
  {
    auto guard = ValueOrDie(CacheGuard<bloomery::CountingFilter>::Open(options, *conn));
    const int64_t now = 1'000'000;
    for (uint64_t i = 0; i < 2000; ++i) {
      CHECK_OK(guard->Put(*conn, absl::StrCat("session:", i), "v", i < 1000 ? now - 1 : now + 60));
    }
    for (uint64_t i = 0; i < 2000; ++i) {  // updates must not add counts
      CHECK_OK(guard->Put(*conn, absl::StrCat("session:", i), "v2", i < 1000 ? now - 1 : now + 60));
    }
    const size_t reaped = ValueOrDie(guard->ReapExpired(*conn, now));
    Expect(reaped == 1000, absl::StrCat("the reaper deletes the 1000 expired rows (", reaped, ")"));
    for (uint64_t i = 1000; i < 1500; ++i)
      CHECK_OK(guard->Delete(*conn, absl::StrCat("session:", i)));
    uint64_t stale = 0, missing = 0;
    for (uint64_t i = 0; i < 1500; ++i)
      stale += guard->filter()->MayContain(absl::StrCat("session:", i));
    for (uint64_t i = 1500; i < 2000; ++i) {
      missing += !guard->filter()->MayContain(absl::StrCat("session:", i));
    }
    for (uint64_t i = 0; i < kExisting; ++i) missing += !guard->filter()->MayContain(Key(i));
    Expect(missing == 0, "live rows stay in the counting filter");
    Expect(stale < 60, absl::StrCat("expired and deleted keys leave the filter (", stale,
                                    " of 1500 still maybe: false positives, planned 1%)"));

    const uint64_t violations = RaceReadersAgainstWriters(
        *db, "churn:", 800,
        [&](Connection& c, const std::string& key) {
          CHECK_OK(guard->Put(c, key, "v"));
          CHECK_OK(guard->Delete(c, key));
        },
        [&](const std::string& key) { return guard->filter()->MayContain(key); });
    Expect(violations == 0, absl::StrCat("insert-then-delete churn never hides a committed row (",
                                         violations, " times)"));
    CHECK_OK(guard->Save(*conn));
  }
  for (uint64_t i = 1500; i < 1600; ++i) {
    (void)ValueOrDie(conn->Delete(absl::StrCat("session:", i)));
  }
  {
    auto guard = ValueOrDie(CacheGuard<bloomery::CountingFilter>::Open(options, *conn));
    uint64_t stale = 0, missing = 0;
    for (uint64_t i = 1500; i < 1600; ++i)
      stale += guard->filter()->MayContain(absl::StrCat("session:", i));
    for (uint64_t i = 1600; i < 2000; ++i) {
      missing += !guard->filter()->MayContain(absl::StrCat("session:", i));
    }
    Expect(guard->restored() && guard->replayed() == 100 && missing == 0 && stale < 10,
           absl::StrCat("restart replays 100 offline deletes: ", stale,
                        " of them still maybe, live rows all present"));
  }
  CheckWindowed(*db, args);
  std::printf("%s\n", failures == 0 ? "PASS" : "FAILED");
  return failures == 0 ? 0 : 1;
}

// One benchmark configuration: `clients` threads look up keys for `seconds`, a share `absent` of
// them random keys that no row has (the attack).
struct Sample {
  std::vector<double> present_us, absent_us;
};

double Percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(i), v.end());
  return v[i];
}

template <typename Guard>
// rate == 0: closed loop, each client sends its next lookup when the last returns (the capacity).
// rate > 0: open loop, lookups are due at a fixed total rate and latency counts from when a lookup
// was due, so a database that falls behind shows its queueing (no coordinated omission).
void RunConfig(Database& db, Guard& guard, const Args& args, double absent, bool guarded,
               double rate, int rep) {
  const GuardCounters& counters = guard.counters();
  const uint64_t queries0 = counters.db_queries.load(), misses0 = counters.db_misses.load();
  std::vector<Sample> samples(args.clients);
  std::vector<uint64_t> absent_asked(args.clients, 0);
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(args.seconds);
  for (int c = 0; c < args.clients; ++c) {
    threads.emplace_back([&, c] {
      auto conn = ValueOrDie(db.Connect());
      // A fresh key sequence per run: a replayed one would find its keys in the LRU.
      std::mt19937_64 rng(((rep * 2 + guarded) * 1000 + static_cast<uint64_t>(absent * 100)) * 64 +
                          c + (rate > 0 ? 1 << 20 : 0));
      std::uniform_real_distribution<double> coin(0, 1);
      const auto interval = std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(rate > 0 ? args.clients / rate : 0));
      for (auto due = start; Clock::now() < end; due += interval) {
        const bool ask_absent = coin(rng) < absent;
        const std::string key =
            ask_absent ? absl::StrCat("attack:", rng()) : Key(rng() % args.rows);
        if (rate > 0) std::this_thread::sleep_until(due);
        const auto t0 = rate > 0 ? due : Clock::now();
        CHECK_OK(guard.Get(*conn, key).status());
        const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
        (ask_absent ? samples[c].absent_us : samples[c].present_us).push_back(us);
        absent_asked[c] += ask_absent;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  Sample all;
  uint64_t absent_total = 0;
  for (int c = 0; c < args.clients; ++c) {
    all.present_us.insert(all.present_us.end(), samples[c].present_us.begin(),
                          samples[c].present_us.end());
    all.absent_us.insert(all.absent_us.end(), samples[c].absent_us.begin(),
                         samples[c].absent_us.end());
    absent_total += absent_asked[c];
  }
  const uint64_t queries = counters.db_queries.load() - queries0;
  const uint64_t misses = counters.db_misses.load() - misses0;
  const double lookups = static_cast<double>(all.present_us.size() + all.absent_us.size());
  std::printf(
      "{\"db\":\"%s\",\"guard\":%s,\"absent\":%.2f,\"clients\":%d,\"rows\":%llu,"
      "\"offered_per_s\":%.0f,"
      "\"lookups_per_s\":%.0f,\"db_queries_per_s\":%.0f,\"db_queries_per_lookup\":%.4f,"
      "\"present_p50_us\":%.1f,\"present_p99_us\":%.1f,\"absent_p50_us\":%.1f,"
      "\"absent_p99_us\":%.1f,\"observed_fpr\":%.5f}\n",
      db.name().c_str(), guarded ? "true" : "false", absent, args.clients,
      static_cast<unsigned long long>(args.rows), rate, lookups / elapsed,
      static_cast<double>(queries) / elapsed, static_cast<double>(queries) / lookups,
      Percentile(all.present_us, 0.5), Percentile(all.present_us, 0.99),
      Percentile(all.absent_us, 0.5), Percentile(all.absent_us, 0.99),
      guarded && absent_total > 0 ? static_cast<double>(misses) / static_cast<double>(absent_total)
                                  : 0.0);
  std::fflush(stdout);
}

int Bench(const Args& args) {
  auto db = ValueOrDie(OpenDatabase(args.db));
  CHECK_OK(db->Reset());
  auto conn = ValueOrDie(db->Connect());
  const auto populate0 = Clock::now();
  constexpr uint64_t kChunk = 100'000;
  for (uint64_t first = 0; first < args.rows; first += kChunk) {
    CHECK_OK(conn->Populate("user:", first, std::min(kChunk, args.rows - first)));
  }
  std::fprintf(stderr, "populated %llu rows in %.1f s\n",
               static_cast<unsigned long long>(args.rows),
               std::chrono::duration<double>(Clock::now() - populate0).count());
  GuardOptions options;
  options.filter_path = args.dir + "/bench.bloom";
  // Planned for exactly the rows there are, so the observed FPR is the planned one's to match.
  options.capacity = args.rows;
  std::remove((options.filter_path + ".seq").c_str());
  options.enabled = false;
  auto unguarded = ValueOrDie(CacheGuard<bloomery::BlockedFilter>::Open(options, *conn));
  options.enabled = true;
  const auto open0 = Clock::now();
  auto guarded = ValueOrDie(CacheGuard<bloomery::BlockedFilter>::Open(options, *conn));
  std::printf(
      "{\"db\":\"%s\",\"rows\":%llu,\"rebuild_from_table_s\":%.3f,\"planned_fpr\":%.5f,"
      "\"fpr_at_current_fill\":%.5f,\"filter_bytes\":%llu}\n",
      db->name().c_str(), static_cast<unsigned long long>(args.rows),
      std::chrono::duration<double>(Clock::now() - open0).count(),
      guarded->filter()->plan().expected_fpr, guarded->filter()->EstimatedFpr(),
      static_cast<unsigned long long>(guarded->filter()->memory_bytes()));
  // Interleaved repetitions: the machine's background load drifts, and every configuration
  // should see the same drift.
  for (int rep = 0; rep < 3; ++rep) {
    for (double rate : {0.0, args.rate}) {
      for (double absent : {0.5, 0.95}) {
        RunConfig(*db, *unguarded, args, absent, false, rate, rep);
        RunConfig(*db, *guarded, args, absent, true, rate, rep);
      }
    }
  }
  return 0;
}

// Deletes and expiry, priced: `rows` rows that each expire an hour after their Put, kept in a
// counting guard (which must reap every expired row through the guard) and in a windowed guard
// (which forgets keys by age). Prints, per guard: filter bytes per live row, Puts/s through the
// guard into the database, filter-only lookups/s over live and absent keys, and the reaping the
// counting guard needs.
template <typename Filter>
void PriceExpiry(Database& db, const Args& args, const char* name, bool burst = false) {
  CHECK_OK(db.Reset());
  auto conn = ValueOrDie(db.Connect());
  constexpr int64_t kTtl = 3600;
  GuardOptions options;
  options.filter_path = absl::StrCat(args.dir, "/expiry_", name, burst ? "_burst" : "", ".bloom");
  std::remove(options.filter_path.c_str());
  std::remove((options.filter_path + ".seq").c_str());
  options.ttl_seconds = kTtl;
  // Planned for the live rows at 1 %. A window holds the Puts of W = TTL * G/(G-1): with each row
  // written once per TTL, G/(G-1) times the live rows.
  const bool windowed = std::is_same_v<Filter, bloomery::WindowedFilter>;
  options.capacity =
      windowed ? args.rows * options.generations / (options.generations - 1) : args.rows;
  // The window plans each generation for its share of a steady stream. `burst` Puts every row at
  // once, into one generation; otherwise the rows arrive evenly over one TTL (each row written
  // once per TTL), replayed on a clock that advances TTL/rows per Put.
  std::atomic<int64_t> now_ns{0};
  if (windowed && !burst) options.clock = [&now_ns] { return now_ns.load(); };
  const int64_t step_ns = kTtl * 1'000'000'000 / static_cast<int64_t>(args.rows);
  auto guard = ValueOrDie(CacheGuard<Filter>::Open(options, *conn));
  std::vector<std::string> keys(args.rows), absent(args.rows);
  for (uint64_t i = 0; i < args.rows; ++i) {
    keys[i] = absl::StrCat("exp:", i);
    absent[i] = absl::StrCat("never:", i);
  }
  const auto t0 = Clock::now();
  for (const std::string& key : keys) {
    CHECK_OK(guard->Put(*conn, key, "v", UnixNow() + kTtl));
    now_ns += step_ns;
  }
  const auto t1 = Clock::now();
  const Filter& filter = *guard->filter();
  // An absent key answered "maybe" is a query that reaches the database: the attack's cost.
  uint64_t found = 0, absent_maybe = 0;
  for (int round = 0; round < 3; ++round) {
    for (const std::string& key : keys) found += filter.MayContain(key);
    for (const std::string& key : absent) absent_maybe += filter.MayContain(key);
  }
  const auto t2 = Clock::now();
  double reap_s = 0;
  uint64_t reaped = 0;
  if constexpr (std::is_same_v<Filter, bloomery::CountingFilter>) {
    // An hour later every row has expired: the counting guard deletes each through itself.
    const auto r0 = Clock::now();
    for (size_t n = 1; n > 0; reaped += n)
      n = ValueOrDie(guard->ReapExpired(*conn, UnixNow() + 2 * kTtl));
    reap_s = std::chrono::duration<double>(Clock::now() - r0).count();
  }
  auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  std::printf(
      "{\"db\":\"%s\",\"filter\":\"%s%s\",\"rows\":%llu,\"filter_bytes\":%llu,"
      "\"bits_per_live_row\":%.2f,\"puts_per_s\":%.0f,\"lookups_per_s\":%.0f,"
      "\"all_live_found\":%s,\"absent_db_queries_per_lookup\":%.5f,\"reaped\":%llu,"
      "\"reap_rows_per_s\":%.0f}\n",
      db.name().c_str(), name, burst ? " burst" : "", static_cast<unsigned long long>(args.rows),
      static_cast<unsigned long long>(filter.memory_bytes()),
      8.0 * static_cast<double>(filter.memory_bytes()) / static_cast<double>(args.rows),
      static_cast<double>(args.rows) / secs(t0, t1),
      6.0 * static_cast<double>(args.rows) / secs(t1, t2),
      found == 3 * args.rows ? "true" : "false",
      static_cast<double>(absent_maybe) / (3.0 * static_cast<double>(args.rows)),
      static_cast<unsigned long long>(reaped),
      reap_s > 0 ? static_cast<double>(reaped) / reap_s : 0.0);
  std::fflush(stdout);
}

int Expiry(const Args& args) {
  auto db = ValueOrDie(OpenDatabase(args.db));
  for (int rep = 0; rep < 3; ++rep) {  // interleaved: both guards see the same background load
    PriceExpiry<bloomery::CountingFilter>(*db, args, "counting");
    PriceExpiry<bloomery::WindowedFilter>(*db, args, "windowed");
    PriceExpiry<bloomery::WindowedFilter>(*db, args, "windowed", /*burst=*/true);
  }
  return 0;
}

// Time to build a filter of `keys` string keys with the batch API, save it and map it back: what
// a service pays at start with and without a saved file.
int Load(const Args& args) {
  std::vector<std::string> keys(args.keys);
  for (uint64_t i = 0; i < args.keys; ++i) keys[i] = Key(i);
  std::vector<std::string_view> views(keys.begin(), keys.end());
  bloomery::FilterOptions options;
  options.capacity = args.keys;
  options.fpr = 0.01;
  const auto t0 = Clock::now();
  auto filter = ValueOrDie(bloomery::BlockedFilter::Create(options));
  (void)filter.InsertMany(views);
  const auto t1 = Clock::now();
  const std::string path = args.dir + "/load.bloom";
  CHECK_OK(filter.Save(path));
  const auto t2 = Clock::now();
  auto mapped = ValueOrDie(bloomery::BlockedFilter::Map(path, bloomery::MapMode::kReadOnly));
  const auto t3 = Clock::now();
  const uint64_t found = mapped.MayContainMany(std::span<const std::string_view>(views));
  std::remove(path.c_str());
  auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  std::printf(
      "{\"keys\":%llu,\"create_and_insert_many_s\":%.3f,\"save_s\":%.3f,\"map_s\":%.4f,"
      "\"filter_bytes\":%llu,\"all_found\":%s}\n",
      static_cast<unsigned long long>(args.keys), secs(t0, t1), secs(t1, t2), secs(t2, t3),
      static_cast<unsigned long long>(filter.memory_bytes()),
      found == args.keys ? "true" : "false");
  return found == args.keys ? 0 : 1;
}

}  // namespace
}  // namespace cache_guard

int main(int argc, char** argv) {
  cache_guard::Args args;
  if (!cache_guard::Parse(argc, argv, args)) {
    std::fprintf(stderr,
                 "usage: cache_guard check|bench|load|expiry [--db sqlite:PATH|postgres:CONNINFO] "
                 "[--dir DIR] [--rows N] [--keys N] [--clients N] [--seconds S] [--rate R]\n");
    return 2;
  }
  if (args.command == "check") return cache_guard::Check(args);
  if (args.command == "bench") return cache_guard::Bench(args);
  if (args.command == "load") return cache_guard::Load(args);
  if (args.command == "expiry") return cache_guard::Expiry(args);
  std::fprintf(stderr, "unknown command %s\n", args.command.c_str());
  return 2;
}
