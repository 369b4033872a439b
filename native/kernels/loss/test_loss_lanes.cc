// The vectorised clip row's plain token block (Level::kTokenPlain, loss_lanes.h) against its general token
// block (Level::kToken) on the same rows: the same gradient and lane sums, bit for bit, on this CPU's clone and,
// where cpuPath() is avx512, on the AVX-512 row. Rows of every tail length, masked-out NaN padding, ratios on
// the clip boundaries, log-ratios at ±20 (the verl clamp) and KL values at ±10 (the value limit), ±0.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "check.h"
#include "loss/loss_lanes.h"

namespace {

using grpo::loss_lanes::Lanes;
using grpo::loss_lanes::Level;
using grpo::loss_lanes::Row;
using grpo::loss_lanes::Scalars;

constexpr float kInf = std::numeric_limits<float>::infinity();

GRPO_CLONES void clone_lanes(const Row r, const Scalars s, Level level, Lanes& out) {
  grpo::loss_lanes::Sums acc = grpo::loss_lanes::empty_sums();
  if (level == Level::kTokenPlain) grpo::loss_lanes::narrow_row<Level::kTokenPlain>(r, s, 0, acc);
  else grpo::loss_lanes::narrow_row<Level::kToken>(r, s, 0, acc);
  grpo::loss_lanes::write_lanes(acc, out);
}

struct Inputs {
  std::vector<float> logp, old, ref, adv;  // [cols] each
  std::vector<uint8_t> mask;               // [cols]
};

// Random values with the adversarial ones above mixed in; masked-out positions hold NaN unless padding counts.
Inputs inputs(int64_t cols, uint32_t seed, bool padding) {
  Inputs in{grpo::test::random_floats(cols, 1.0f, seed), grpo::test::random_floats(cols, 1.0f, seed + 1),
            grpo::test::random_floats(cols, 1.0f, seed + 2), grpo::test::random_floats(cols, 1.0f, seed + 3),
            std::vector<uint8_t>(cols)};
  const float edges[] = {0.0f, -0.0f, std::log(0.8f), std::log(1.2f), 20.0f, -20.0f, 20.5f, -20.5f, 10.0f, -10.0f};
  for (int64_t t = 0; t < cols; ++t) {
    in.logp[t] -= 2.0f;
    in.mask[t] = (t * 7 + seed) % 5 != 0;
    const float edge = edges[(t + seed) % 10];
    if (t % 3 == 0) in.old[t] = in.logp[t] - edge;  // the log-ratio on an edge
    if (t % 4 == 1) in.ref[t] = in.logp[t] + edge;  // k3's x on an edge
    if (t % 11 == 2) in.adv[t] = t % 2 ? 0.0f : -0.0f;
    if (!in.mask[t] && !padding) in.logp[t] = in.old[t] = std::nanf("");
  }
  return in;
}

Scalars plain_scalars(uint32_t variant) {
  const bool verl_clamp = variant & 1, bias = variant & 2, padding = variant & 4;
  return {0.37f, 0.8f, 1.28f, kInf, kInf, variant & 8 ? 20.0f : kInf, 0.04f, -kInf, bias ? 1.0f : 0.0f,
          0.0f, 0.0f, 0.0f, 1.0f, 0.0f, verl_clamp ? 20.0f : kInf, verl_clamp ? 10.0f : kInf, variant & 8 ? 20.0f : kInf,
          padding ? 1.0f : 0.0f, padding ? 1.0f : 0.0f};
}

bool same_bits(const Lanes& a, const Lanes& b, const std::vector<float>& ga, const std::vector<float>& gb) {
  return std::memcmp(&a, &b, sizeof a) == 0 && std::memcmp(ga.data(), gb.data(), ga.size() * sizeof(float)) == 0;
}

using RowFn = void (*)(const Row, const Scalars, Level, Lanes&);

void plain_matches_general(const char* name, RowFn row) {
  int failures = 0;
  for (int64_t cols : {1, 15, 16, 17, 31, 32, 33, 64, 100, 513})
    for (uint32_t variant = 0; variant < 16; ++variant) {
      const Scalars s = plain_scalars(variant);
      const Inputs in = inputs(cols, static_cast<uint32_t>(cols) * 16 + variant, s.padding != 0.0f);
      std::vector<float> general_grad(cols), plain_grad(cols), routed(cols);
      Lanes general{}, plain{};
      const Row general_row{in.logp.data(), in.old.data(), in.ref.data(), in.adv.data(), in.logp.data(), nullptr,
                            in.mask.data(), general_grad.data(), routed.data(), cols};
      Row plain_row = general_row;
      plain_row.grad = plain_grad.data();
      row(general_row, s, Level::kToken, general);
      row(plain_row, s, Level::kTokenPlain, plain);
      if (!same_bits(general, plain, general_grad, plain_grad) && failures++ < 3)
        std::fprintf(stderr, "%s: cols %lld variant %u differ\n", name, static_cast<long long>(cols), variant);
    }
  CHECK(failures == 0);
}

}  // namespace

int main() {
  plain_matches_general("clone", clone_lanes);
#if GRPO_HAS_AVX512_CODE
  if (grpo::simd::avx512_path()) plain_matches_general("avx512", grpo::loss_lanes::row_lanes_avx512);
#endif
  return grpo::test::report("test_loss_lanes");
}
