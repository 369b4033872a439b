#include "lora.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "counter_rng.h"
#include "gemm/gemm.h"
#include "runtime/error.h"
#include "runtime/thread_pool.h"

namespace grpo::model {

namespace {

constexpr const char* kModuleNames[kLoraModules] = {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                                                    "mlp.gate_proj",    "mlp.up_proj",      "mlp.down_proj"};

// [in, out] of module m's weight.
std::array<int64_t, 2> module_shape(const Config& c, int m) {
  const int64_t H = c.hidden, I = c.intermediate;
  const std::array<std::array<int64_t, 2>, kLoraModules> shapes = {
      {{H, c.q_dim()}, {H, c.kv_dim()}, {H, c.kv_dim()}, {c.q_dim(), H}, {H, I}, {H, I}, {I, H}}};
  return shapes[m];
}

// dst [n] = src ⊙ mask / (1 − p): element i is dropped when its uniform number (seed, stream, i) is below p, as
// torch's dropout scales the kept ones (x · (1 / (1 − p))). dst may be src.
void drop(const Adapter& a, const float* src, int64_t n, float* dst) {
  const float keep_scale = 1.0f / (1.0f - a.dropout);
  parallel_for(n, 16384, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      dst[i] = uniform_at(a.seed, a.stream, static_cast<uint64_t>(i)) < a.dropout ? 0.0f : src[i] * keep_scale;
  });
}

// x itself without dropout, else dropout(x) in `buffer` [n].
const float* dropped_input(const Adapter& a, const float* x, int64_t n, std::vector<float>& buffer) {
  if (a.dropout == 0.0f) return x;
  buffer.resize(static_cast<size_t>(n));
  drop(a, x, n, buffer.data());
  return buffer.data();
}

void check_settings(const Config& c, const grpo_lora_config& s) {
  if (s.rank < 1) fail(GRPO_ERR_VALUE_RANGE, "lora rank must be >= 1 (got %lld)", static_cast<long long>(s.rank));
  const int64_t smallest = std::min({c.hidden, c.intermediate, c.q_dim(), c.kv_dim()});
  if (s.rank > smallest)
    fail(GRPO_ERR_VALUE_RANGE, "lora rank %lld is larger than the smallest adapted dimension %lld", static_cast<long long>(s.rank),
         static_cast<long long>(smallest));
  if (!(s.scale > 0.0f) || !std::isfinite(s.scale)) fail(GRPO_ERR_VALUE_RANGE, "lora scale must be finite and > 0 (got %g)", s.scale);
  if (!(s.dropout >= 0.0f && s.dropout < 1.0f)) fail(GRPO_ERR_VALUE_RANGE, "lora dropout must be in [0, 1) (got %g)", s.dropout);
  if (s.targets == 0 || s.targets >= (1u << kLoraModules))
    fail(GRPO_ERR_VALUE_RANGE, "lora targets must be a non-empty set of the 7 module bits (got %u)", s.targets);
}

void add_slot(Layout& l, const std::string& name, int64_t rows, int64_t cols) {
  l.slots.push_back({name, rows, cols, l.total, true, false});
  l.total += rows * cols;
}

}  // namespace

Lora make_lora(const Config& c, const grpo_lora_config& settings) {
  check_settings(c, settings);
  Lora l;
  l.settings = settings;
  const int64_t r = settings.rank;
  for (int64_t layer = 0; layer < c.layers; ++layer) {
    std::array<int64_t, kLoraModules> a{}, b{};
    for (int m = 0; m < kLoraModules; ++m) {
      a[m] = b[m] = -1;
      if (!(settings.targets & (1u << m))) continue;
      const auto [in, out] = module_shape(c, m);
      const std::string base = "model.layers." + std::to_string(layer) + "." + kModuleNames[m];
      a[m] = l.layout.total;
      add_slot(l.layout, base + ".lora_A.weight", r, in);
      b[m] = l.layout.total;
      add_slot(l.layout, base + ".lora_B.weight", out, r);
    }
    l.a_offset.push_back(a);
    l.b_offset.push_back(b);
  }
  l.params.assign(static_cast<size_t>(l.layout.total), 0.0f);
  l.grads.assign(l.params.size(), 0.0f);
  // A: PEFT's kaiming_uniform_(a = √5) on [r, in]: gain √(2 / (1 + 5)), bound gain·√(3 / in) = 1 / √in. B stays zero.
  for (size_t s = 0; s < l.layout.slots.size(); s += 2) {
    const TensorSlot& slot = l.layout.slots[s];
    const float bound = 1.0f / std::sqrt(static_cast<float>(slot.cols));
    float* A = l.params.data() + slot.offset;
    parallel_for(slot.size(), 65536, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) A[i] = (2.0f * uniform_at(settings.seed, s, static_cast<uint64_t>(i)) - 1.0f) * bound;
    });
  }
  return l;
}

uint64_t lora_forward_key(const Lora& l, int64_t step) {
  constexpr uint64_t kDropoutStreams = 0x4C6F524144726F70ull;  // apart from the initialisation's streams
  return hash_at(l.settings.seed, kDropoutStreams + static_cast<uint64_t>(step), static_cast<uint64_t>(l.forwards));
}

LayerAdapters layer_adapters(const Lora& l, int64_t layer, bool train, uint64_t key, float* grads) {
  LayerAdapters out{};
  for (int m = 0; m < kLoraModules; ++m) {
    const int64_t a = l.a_offset[layer][m], b = l.b_offset[layer][m];
    if (a < 0) continue;
    Adapter& ad = out[m];
    ad.A = l.params.data() + a;
    ad.B = l.params.data() + b;
    if (grads) ad.dA = grads + a, ad.dB = grads + b;
    ad.rank = l.settings.rank;
    ad.scale = l.settings.scale;
    ad.dropout = train ? l.settings.dropout : 0.0f;
    ad.seed = key;
    ad.stream = static_cast<uint64_t>(layer * kLoraModules + m);
  }
  return out;
}

void adapter_forward(const Adapter& a, const float* x, int64_t T, int64_t in, int64_t out, float* u, float* y) {
  if (T == 0) return;
  std::vector<float> dropped;
  const float* xd = dropped_input(a, x, T * in, dropped);
  gemm(false, true, T, a.rank, in, 1.0f, xd, in, a.A, in, 0.0f, u, a.rank);
  gemm(false, true, T, out, a.rank, a.scale, u, a.rank, a.B, a.rank, 1.0f, y, out);
}

void adapter_backward(const Adapter& a, const float* x, const float* u, const float* dy, int64_t T, int64_t in, int64_t out,
                      float* dx) {
  if (T == 0) return;
  const int64_t r = a.rank;
  gemm(true, false, out, r, T, a.scale, dy, out, u, r, 1.0f, a.dB, r);
  std::vector<float> du(static_cast<size_t>(T * r));  // [T, r] = scale · dy·B
  gemm(false, false, T, r, out, a.scale, dy, out, a.B, r, 0.0f, du.data(), r);
  std::vector<float> dropped;
  const float* xd = dropped_input(a, x, T * in, dropped);
  gemm(true, false, r, in, T, 1.0f, du.data(), r, xd, in, 1.0f, a.dA, in);
  if (!dx) return;
  if (a.dropout == 0.0f) return gemm(false, false, T, in, r, 1.0f, du.data(), r, a.A, in, 1.0f, dx, in);
  // the gradient at dropout(x), then through the same mask
  gemm(false, false, T, in, r, 1.0f, du.data(), r, a.A, in, 0.0f, dropped.data(), in);
  drop(a, dropped.data(), T * in, dropped.data());
  parallel_for(T * in, 16384, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) dx[i] += dropped[i];
  });
}

}  // namespace grpo::model
