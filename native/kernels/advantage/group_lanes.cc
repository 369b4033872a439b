#include "group_lanes.h"

#include <cstring>

namespace grpo {

namespace {

typedef float Floats4 __attribute__((vector_size(16)));

GRPO_INLINE Floats4 load4(const float* p) {
  Floats4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

GRPO_INLINE void store4(float* p, Floats4 v) { std::memcpy(p, &v, sizeof v); }

// Rows r[0..3] of a 4 × 4 tile become its columns (8 shuffles, on every SIMD path).
GRPO_INLINE void transpose4(Floats4 r[4]) {
  const Floats4 low01 = __builtin_shufflevector(r[0], r[1], 0, 4, 1, 5), high01 = __builtin_shufflevector(r[0], r[1], 2, 6, 3, 7);
  const Floats4 low23 = __builtin_shufflevector(r[2], r[3], 0, 4, 1, 5), high23 = __builtin_shufflevector(r[2], r[3], 2, 6, 3, 7);
  r[0] = __builtin_shufflevector(low01, low23, 0, 1, 4, 5), r[1] = __builtin_shufflevector(low01, low23, 2, 3, 6, 7);
  r[2] = __builtin_shufflevector(high01, high23, 0, 1, 4, 5), r[3] = __builtin_shufflevector(high01, high23, 2, 3, 6, 7);
}

}  // namespace

namespace {

// out [cols, rows] ← in [rows, cols] in 4 × 4 tiles, the rows and columns past the last whole tile one by one.
GRPO_INLINE void transpose(const float* in, int64_t rows, int64_t cols, float* out) {
  const int64_t whole_rows = rows - rows % 4, whole_cols = cols - cols % 4;
  for (int64_t c = 0; c < whole_cols; c += 4)
    for (int64_t r = 0; r < whole_rows; r += 4) {
      Floats4 tile[4];  // rows r..r+3 of columns c..c+3, then columns c..c+3 of rows r..r+3
      for (int i = 0; i < 4; ++i) tile[i] = load4(in + (r + i) * cols + c);
      transpose4(tile);
      for (int i = 0; i < 4; ++i) store4(out + (c + i) * rows + r, tile[i]);
    }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = r < whole_rows ? whole_cols : 0; c < cols; ++c) out[c * rows + r] = in[r * cols + c];
}

}  // namespace

GRPO_CLONES bool lane_values(const float* block, int64_t size, int32_t nan_policy, float* values, float* scored) {
  transpose(block, kGroupLanes, size, values);
  int32_t nans = 0;
  for (int64_t i = 0; i < size * kGroupLanes; ++i) {
    const float v = values[i];
    nans += v != v;
    values[i] = v == v ? v : 0.0f;
  }
  if (nans == 0 || nan_policy == GRPO_ADV_NAN_AS_ZERO) return true;
  for (int64_t j = 0; j < size; ++j)  // rare: NaN rewards excluded
    for (int l = 0; l < kGroupLanes; ++l) scored[j * kGroupLanes + l] = block[l * size + j] == block[l * size + j];
  return false;
}

namespace {

// lane_moments; kAllScored: every reward counts, so `scored` is not read (the same sums, fewer operations).
template <bool kAllScored>
GRPO_INLINE void moments(const float* values, const float* scored, int64_t size, GroupMoments& m, int64_t first, int lanes) {
  double sum[kGroupLanes] = {}, valid[kGroupLanes] = {}, squares[kGroupLanes] = {}, mean[kGroupLanes];
  for (int64_t j = 0; j < size; ++j)
    for (int l = 0; l < kGroupLanes; ++l) {
      sum[l] += static_cast<double>(values[j * kGroupLanes + l]);
      if (!kAllScored) valid[l] += static_cast<double>(scored[j * kGroupLanes + l]);
    }
  for (int l = 0; l < kGroupLanes; ++l) {
    if (kAllScored) valid[l] = static_cast<double>(size);
    mean[l] = mean_of(sum[l], valid[l]);
  }
  for (int64_t j = 0; j < size; ++j)
    for (int l = 0; l < kGroupLanes; ++l) {
      const double deviation = static_cast<double>(values[j * kGroupLanes + l]) - mean[l];
      const double square = deviation * deviation;
      squares[l] += kAllScored ? square : square * static_cast<double>(scored[j * kGroupLanes + l]);
    }
  for (int l = 0; l < lanes; ++l) {
    m.sum[first + l] = sum[l], m.valid[first + l] = valid[l];
    m.mean[first + l] = mean[l], m.squares[first + l] = squares[l];
  }
}

// lane_advantages' first step, into scratch [size, kGroupLanes]. kAllScored as in moments(); kAllNormalised
// (with kAllScored, groups of 2 or more): no group takes the singleton policy.
template <bool kAllScored, bool kAllNormalised>
GRPO_INLINE void advantages(const float* values, const float* scored, int64_t size, const double* mean,
                            const double* inverse, const double* valid, const grpo_advantage_options& o, float* scratch) {
  const grpo_advantage_options options = o;  // a local: the stores cannot change it, its tests leave the loop
  for (int64_t j = 0; j < size; ++j)
    for (int l = 0; l < kGroupLanes; ++l) {
      const double v = static_cast<double>(values[j * kGroupLanes + l]);
      const double a = kAllNormalised ? scaled_advantage(v, mean[l], inverse[l])
                                      : advantage_of(v, mean[l], inverse[l], valid[l] >= 2.0, singleton_advantage(v, options));
      scratch[j * kGroupLanes + l] = static_cast<float>(kAllScored ? a : pick(scored[j * kGroupLanes + l] != 0.0f, a, 0.0));
    }
}

}  // namespace

// The sums run as group_moments' (an unscored reward adds 0.0 to the sum and the squares), so the bits agree;
// products with `scored` rather than selects keep the loops free of control flow. (A group with no scored
// reward gets NaN squares here, 0 there: nothing reads them, its std is NaN and the batch skips it.)
GRPO_CLONES void lane_moments(const float* values, const float* scored, int64_t size, GroupMoments& m, int64_t first,
                              int lanes) {
  if (scored) return moments<false>(values, scored, size, m, first, lanes);
  moments<true>(values, nullptr, size, m, first, lanes);
}

GRPO_CLONES void lane_advantages(const float* values, const float* scored, int64_t size, const double* mean,
                                 const double* inverse, const double* valid, const grpo_advantage_options& o,
                                 float* scratch, float* out) {
  if (scored)
    advantages<false, false>(values, scored, size, mean, inverse, valid, o, scratch);
  else if (size < 2)
    advantages<true, false>(values, nullptr, size, mean, inverse, valid, o, scratch);
  else
    advantages<true, true>(values, nullptr, size, mean, inverse, valid, o, scratch);
  transpose(scratch, size, kGroupLanes, out);
}

}  // namespace grpo
