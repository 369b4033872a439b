#include "sampling_select.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "sampling_passes.h"

namespace grpo::sampling {

namespace {

uint32_t float_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float bits_float(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// Tail statistics at a w-bit boundary; F = 0 above 1.0, the largest weight.
struct Bound {
  uint32_t bits;
  TailStats stats;
};

double measure_of(const TailStats& stats, Measure measure) {
  return measure == Measure::kCount ? static_cast<double>(stats.count) : stats.mass;
}

double measure_of(const Candidate& c, Measure measure) { return measure == Measure::kCount ? 1.0 : c.w; }

// Windows up to this size are resolved by selection; a counting pass costs about n / 100 selection steps.
int64_t window_limit(int64_t n) { return std::max<int64_t>(256, n / 128); }

// Whether chunk c of tail_at_least holds a block maximum >= pivot.
bool chunk_reaches(const SearchInput& in, int32_t c, float pivot) {
  const float* bound = in.block_max + 4 * c;
  return std::max(std::max(bound[0], bound[1]), std::max(bound[2], bound[3])) >= pivot;
}

// Narrows [lo, hi) on w bits while F(lo) >= target > F(hi) and the window is large. A pass counts the
// pivot and both pivots the next step can take (bisection two levels at a time, the same steps as one by
// one). A chunk below lo stays below every later pivot, so each pass reads only the chunks that reach lo.
void bisect(const SearchInput& in, Bound& lo, Bound& hi, std::vector<int32_t>& chunks) {
  static_assert(kTailPivots == 3, "a pivot and its two children");
  chunks.clear();
  for (int32_t c = 0; c < in.n / kTailChunk; ++c)
    if (chunk_reaches(in, c, bits_float(lo.bits))) chunks.push_back(c);
  uint32_t hint = in.first_pivot > 0.0f ? float_bits(in.first_pivot) : 0;
  Bound ahead[2] = {};  // the children of the last pass's pivot
  bool have_ahead = false;
  while (lo.stats.count - hi.stats.count > window_limit(in.n) && hi.bits - lo.bits > 1) {
    const bool use_hint = hint > lo.bits && hint < hi.bits;
    const uint32_t mid = use_hint ? hint : lo.bits + (hi.bits - lo.bits) / 2;
    hint = 0;
    TailStats stats;
    if (have_ahead && (ahead[0].bits == mid || ahead[1].bits == mid)) {
      stats = (ahead[0].bits == mid ? ahead[0] : ahead[1]).stats;
      have_ahead = false;
    } else {
      const uint32_t below = lo.bits + (mid - lo.bits) / 2, above = mid + (hi.bits - mid) / 2;
      const float pivots[kTailPivots] = {bits_float(mid), bits_float(below), bits_float(above)};
      TailStats out[kTailPivots];
      tail_at_least(in.w, in.block_max, chunks.data(), static_cast<int64_t>(chunks.size()), in.n, pivots, out);
      stats = out[0], ahead[0] = Bound{below, out[1]}, ahead[1] = Bound{above, out[2]}, have_ahead = true;
    }
    const bool reached = measure_of(stats, in.measure) >= in.target;
    (reached ? lo : hi) = Bound{mid, stats};
    if (reached)
      chunks.erase(std::remove_if(chunks.begin(), chunks.end(),
                                  [&](int32_t c) { return !chunk_reaches(in, c, bits_float(mid)); }),
                   chunks.end());
  }
}

// Appends the tokens with lo <= w < hi, reading only the blocks whose maximum reaches lo.
void gather(const SearchInput& in, float lo, float hi, std::vector<Candidate>& out) {
  out.clear();
  for (int64_t begin = 0, b = 0; begin < in.n; begin += kMaxBlock, ++b) {
    if (in.block_max[b] < lo) continue;
    const int64_t end = std::min(in.n, begin + kMaxBlock);
    for (int64_t i = begin; i < end; ++i)
      if (in.w[i] >= lo && in.w[i] < hi) out.push_back({in.y[i], in.w[i], static_cast<int32_t>(i)});
  }
}

// The k-th largest block maximum (k <= number of blocks).
float kth_block_max(const SearchInput& in, int64_t k, std::vector<float>& scratch) {
  scratch.assign(in.block_max, in.block_max + (in.n + kMaxBlock - 1) / kMaxBlock);
  std::nth_element(scratch.begin(), scratch.begin() + (k - 1), scratch.end(), std::greater<float>());
  return scratch[k - 1];
}

double measure_sum(const Candidate* begin, const Candidate* end, Measure measure) {
  double sum = 0.0;
  for (const Candidate* c = begin; c != end; ++c) sum += measure_of(*c, measure);
  return sum;
}

// Largest y among [begin, end) with base + F_window(y) >= target (three-way quickselect, expected linear).
// If rounding leaves the target unreached, the smallest y of the window (the most inclusive cut).
float weighted_select(Candidate* begin, Candidate* end, double base, double target, Measure measure) {
  float answer = begin->y;
  while (begin != end) {
    const float pivot = begin[(end - begin) / 2].y;
    Candidate* above_end = std::partition(begin, end, [pivot](const Candidate& c) { return c.y > pivot; });
    const double above = measure_sum(begin, above_end, measure);
    if (base + above >= target) {
      end = above_end;
      continue;
    }
    Candidate* equal_end = std::partition(above_end, end, [pivot](const Candidate& c) { return c.y == pivot; });
    base += above + measure_sum(above_end, equal_end, measure);
    answer = pivot;
    if (base >= target) return pivot;
    begin = equal_end;
  }
  return answer;
}

// w of the tokens at y = cut; those below it with the same w (a rounding merge of exp) are dropped.
// `above` holds the count and mass of the tokens above the window.
Cut weight_cut(const std::vector<Candidate>& window, float cut, TailStats above, float* w) {
  Cut result{0.0f, above.count, above.mass};
  for (const Candidate& c : window)
    if (c.y == cut) result.threshold = c.w;
  for (const Candidate& c : window) {
    if (c.y >= cut) result.kept += 1, result.mass += c.w;
    else if (c.w >= result.threshold) w[c.index] = 0.0f;
  }
  return result;
}

}  // namespace

Cut threshold_search(const SearchInput& in, SearchScratch& scratch) {
  Bound lo{std::max(1u, float_bits(in.floor)), TailStats{in.positive, in.mass}};  // >= the smallest positive float
  Bound hi{float_bits(1.0f) + 1u, TailStats{0, 0.0}};  // above every weight
  const int64_t blocks = (in.n + kMaxBlock - 1) / kMaxBlock;
  if (in.measure == Measure::kCount && in.target * 8 <= blocks)
    lo.bits = float_bits(kth_block_max(in, static_cast<int64_t>(in.target), scratch.block_order));
  else
    bisect(in, lo, hi, scratch.chunks);
  std::vector<Candidate>& window = scratch.window;
  gather(in, bits_float(lo.bits), bits_float(hi.bits), window);
  const float cut = weighted_select(window.data(), window.data() + window.size(), measure_of(hi.stats, in.measure),
                                    in.target, in.measure);
  return weight_cut(window, cut, hi.stats, in.w);
}

}  // namespace grpo::sampling
