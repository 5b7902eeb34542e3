// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// windowed_study: which design a sliding-window filter ("seen within the last W keys") should use,
// computed rather than guessed. It prints, for a requested FPR p over the whole window, the memory
// per key of the window and the cache lines a lookup of an absent key touches, for
//
//   gen G      G BlockedFilters rotated round-robin, each planned (plan.h) for W/G keys at the
//              per-generation FPR f with 1 - (1 - f)^G = p; a lookup ORs all G (G lines).
//              Keeps a key at least W (G-1)/G keys, forgets it after W.
//   apbf k,l   Age-Partitioned Bloom Filter (Shtul, Baquero, Almeida 2020): k + l flat slices of m
//              bits, an insert sets one bit in each of the k newest slices, every g = W/(l+1)
//              inserts the oldest slice is cleared and becomes the newest; a key is present when
//              some k consecutive slices all have its bit. Same slack as gen G when l = G - 1.
//              Lines touched: each probed slice is its own cache miss; counted for a scan that
//              anchors at every k-th slice and extends a run only around set anchors.
//   apbf-blk   the same slices inside one 512-bit line per key (k + l = 8 or 16 slices of 64 or 32
//              bits): one line per lookup; per-line loads are Poisson, hence more bits.
//
// FPRs are exact for the flat layouts (independent slices: the probability of a run of k set
// slices, by dynamic programming over the slice fills at the worst moment, just before a
// rotation) and Monte Carlo over per-line generation loads for apbf-blk.
//
// Usage: windowed_study [fpr ...]   (default 0.01 0.001)
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "bloomery/plan.h"

namespace {

constexpr double kWindow = 1e7;  // bits/key barely depend on W this large

// Probability that a sequence of independent slices, slice i set with probability fill[i],
// contains a run of at least k set slices.
double RunProbability(const std::vector<double>& fill, int k) {
  std::vector<double> run(k, 0.0);  // run[j]: no run of k yet, current run length j
  run[0] = 1.0;
  double found = 0;
  for (double f : fill) {
    std::vector<double> next(k, 0.0);
    for (int j = 0; j < k; ++j) {
      next[0] += run[j] * (1 - f);
      if (j + 1 == k) {
        found += run[j] * f;
      } else {
        next[j + 1] += run[j] * f;
      }
    }
    run = next;
  }
  return found;
}

// Keys slice i (0 = newest) has received just before a rotation, in units of g.
double SliceGenerations(int i, int k) { return i < k ? i + 1 : k; }

double FlatApbfFpr(int k, int l, double slice_bits, double g) {
  std::vector<double> fill(k + l);
  for (int i = 0; i < k + l; ++i) {
    fill[i] = 1 - std::exp(-SliceGenerations(i, k) * g / slice_bits);
  }
  return RunProbability(fill, k);
}

// Expected slices probed for an absent key by the anchored scan (Monte Carlo).
double FlatApbfProbes(int k, int l, double slice_bits, double g, std::mt19937_64& rng) {
  const int n = k + l;
  std::vector<double> fill(n);
  for (int i = 0; i < n; ++i) fill[i] = 1 - std::exp(-SliceGenerations(i, k) * g / slice_bits);
  std::uniform_real_distribution<double> u(0, 1);
  constexpr int kTrials = 20000;
  uint64_t probes = 0;
  std::vector<int> bit(n);
  for (int t = 0; t < kTrials; ++t) {
    for (int i = 0; i < n; ++i) bit[i] = -1;  // unknown
    auto probe = [&](int i) {
      if (bit[i] < 0) {
        bit[i] = u(rng) < fill[i] ? 1 : 0;
        ++probes;
      }
      return bit[i] == 1;
    };
    for (int anchor = k - 1; anchor < n + k - 1; anchor += k) {
      const int a = anchor < n ? anchor : n - 1;
      if (!probe(a)) continue;
      int lo = a, hi = a;
      while (lo > 0 && hi - lo + 1 < k && probe(lo - 1)) --lo;
      while (hi + 1 < n && hi - lo + 1 < k && probe(hi + 1)) ++hi;
      if (hi - lo + 1 >= k) break;  // a false positive: stop
    }
  }
  return static_cast<double>(probes) / kTrials;
}

struct Best {
  int k = 0;
  double bits_per_key = INFINITY;
  double fpr = 0;
};

Best BestFlatApbf(int l, double p) {
  const double g = kWindow / (l + 1);
  Best best;
  for (int k = 1; k <= 40; ++k) {
    double lo = 1, hi = 1e4 * g;  // slice bits
    if (FlatApbfFpr(k, l, hi, g) > p) continue;
    for (int it = 0; it < 100; ++it) {
      const double mid = std::sqrt(lo * hi);
      (FlatApbfFpr(k, l, mid, g) <= p ? hi : lo) = mid;
    }
    const double bpk = (k + l) * hi / kWindow;
    if (bpk < best.bits_per_key) best = {k, bpk, FlatApbfFpr(k, l, hi, g)};
  }
  return best;
}

// apbf-blk: `lines` lines of k + l slices of 512 / (k + l) bits; FPR averaged over lines.
double BlockedApbfFpr(int k, int l, double lines, double g, std::mt19937_64& rng) {
  const int n = k + l;
  const double slice_bits = 512.0 / n;
  std::poisson_distribution<int> load(g / lines);
  constexpr int kSamples = 20000;
  std::vector<int> gen(n);
  std::vector<double> fill(n);
  double sum = 0;
  for (int s = 0; s < kSamples; ++s) {
    for (int a = 0; a < n; ++a) gen[a] = load(rng);  // keys of the generation of age a here
    for (int i = 0; i < n; ++i) {
      int keys = 0;
      for (int a = (i < k ? 0 : i - k + 1); a <= i; ++a) keys += gen[a];
      fill[i] = 1 - std::pow(1 - 1 / slice_bits, keys);
    }
    sum += RunProbability(fill, k);
  }
  return sum / kSamples;
}

Best BestBlockedApbf(int l, double p, std::mt19937_64& rng) {
  const double g = kWindow / (l + 1);
  Best best;
  for (int n : {8, 16}) {
    const int k = n - l;
    if (k < 1) continue;
    double lo = 1, hi = 64 * kWindow;  // lines
    if (BlockedApbfFpr(k, l, hi, g, rng) > p) continue;
    for (int it = 0; it < 40; ++it) {
      const double mid = std::sqrt(lo * hi);
      (BlockedApbfFpr(k, l, mid, g, rng) <= p ? hi : lo) = mid;
    }
    const double bpk = 512 * hi / kWindow;
    if (bpk < best.bits_per_key) best = {k, bpk, p};
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<double> fprs;
  for (int i = 1; i < argc; ++i) fprs.push_back(std::atof(argv[i]));
  if (fprs.empty()) fprs = {0.01, 0.001};
  std::mt19937_64 rng(42);
  for (double p : fprs) {
    std::printf("p = %g over the whole window\n", p);
    std::printf("%-6s %-8s | %-30s | %-34s | %s\n", "slack", "kept", "gen G: bits/key, k, lines",
                "apbf k,l: bits/key, probes/absent", "apbf-blk: bits/key, k, lines");
    for (int generations : {2, 3, 4, 5, 8, 16, 32}) {
      const double f = 1 - std::pow(1 - p, 1.0 / generations);
      const auto plan = bloomery::PlanFor(static_cast<uint64_t>(kWindow / generations), f);
      if (!plan.ok()) return 1;
      const double gen_bpk = generations * static_cast<double>(plan->bits) / kWindow;
      const int l = generations - 1;
      const Best apbf = BestFlatApbf(l, p);
      const double probes = FlatApbfProbes(apbf.k, l, apbf.bits_per_key * kWindow / (apbf.k + l),
                                           kWindow / (l + 1), rng);
      // k + l must fit the 8 or 16 slices of a line, with k > l to be worth it.
      const Best blk = l < 8 ? BestBlockedApbf(l, p, rng) : Best{};
      std::printf(
          "1/%-4d %-8.3f | %6.2f  k=%-2u  %d lines          | %6.2f  k=%-2d l=%-2d %5.2f probes   "
          "|",
          generations, (generations - 1.0) / generations, gen_bpk, plan->hashes, generations,
          apbf.bits_per_key, apbf.k, l, probes);
      if (std::isinf(blk.bits_per_key)) {
        std::printf("  -\n");
      } else {
        std::printf(" %6.2f  k=%-2d 1 line\n", blk.bits_per_key, blk.k);
      }
    }
  }
  return 0;
}
