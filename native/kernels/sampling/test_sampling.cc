// Sampling kernel against the sort-based double-precision reference: exact support and probabilities
// on random rows and parameters (with tied logits), draws inside the support, determinism across
// thread counts, Philox known answers, edge cases and typed errors.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "check.h"
#include "grpo/sampling.h"
#include "sampling_reference.h"

using grpo::test::random_floats;

namespace {

void philox_known_answers() {
  // Random123 kat_vectors for philox4x32_10.
  const uint32_t counters[3][4] = {{0, 0, 0, 0}, {~0u, ~0u, ~0u, ~0u}, {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}};
  const uint32_t keys[3][2] = {{0, 0}, {~0u, ~0u}, {0xa4093822, 0x299f31d0}};
  const uint32_t expected[3][4] = {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
                                   {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
                                   {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}};
  for (int i = 0; i < 3; ++i) {
    uint32_t out[4];
    grpo_philox4x32_10(counters[i], keys[i], out);
    CHECK(std::memcmp(out, expected[i], sizeof out) == 0);
  }
}

// Per-row parameters drawn at random, with masks and histories.
struct Batch {
  int64_t rows, vocab;
  std::vector<float> logits, temperature, top_p, min_p, repetition, presence, frequency;
  std::vector<int32_t> top_k, history, offsets;
  std::vector<uint32_t> allow;
  grpo_sampling_params params() const {
    return {temperature.data(), top_k.data(), top_p.data(), min_p.data(), repetition.data(), presence.data(),
            frequency.data(), allow.data(), history.data(), offsets.data(), 1234, 7, 0};
  }
};

Batch random_batch(int64_t rows, int64_t vocab, uint32_t seed, bool ties) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  Batch b;
  b.rows = rows;
  b.vocab = vocab;
  b.logits = random_floats(rows * vocab, 2.0f, seed);
  if (ties)
    for (float& v : b.logits) v = std::round(v * 2.0f) / 2.0f;
  const int32_t ks[] = {0, 1, 3, 50, static_cast<int32_t>(vocab)};
  const float ps[] = {1.0f, 0.9f, 0.5f, 0.99f, 0.2f};
  b.allow.assign(rows * ((vocab + 31) / 32), ~0u);
  b.offsets.push_back(0);
  for (int64_t r = 0; r < rows; ++r) {
    b.temperature.push_back(0.5f + unit(rng));
    b.top_k.push_back(ks[rng() % 5]);
    b.top_p.push_back(ps[rng() % 5]);
    b.min_p.push_back(rng() % 3 == 0 ? 0.05f : 0.0f);
    b.repetition.push_back(rng() % 2 ? 1.3f : 1.0f);
    b.presence.push_back(rng() % 2 ? 0.5f : 0.0f);
    b.frequency.push_back(rng() % 2 ? 0.2f : 0.0f);
    for (int i = 0; i < 20; ++i) b.history.push_back(static_cast<int32_t>(rng() % vocab));
    b.offsets.push_back(static_cast<int32_t>(b.history.size()));
    for (int64_t t = 0; t < vocab; ++t)
      if (t != 0 && rng() % 10 == 0) b.allow[r * ((vocab + 31) / 32) + t / 32] &= ~(1u << (t % 32));
  }
  return b;
}

void probs_match_reference(int64_t rows, int64_t vocab, uint32_t seed, bool ties) {
  const Batch b = random_batch(rows, vocab, seed, ties);
  const grpo_sampling_params params = b.params();
  std::vector<float> probs(rows * vocab), logp(rows), logp_raw(rows);
  std::vector<int32_t> tokens(rows);
  std::vector<double> ref(rows * vocab), raw(rows * vocab);
  CHECK(grpo_sampling_probs(b.logits.data(), rows, vocab, &params, probs.data()) == GRPO_OK);
  CHECK(grpo_sample(b.logits.data(), rows, vocab, &params, tokens.data(), logp.data(), logp_raw.data()) == GRPO_OK);
  grpo::reference::sampling_probs(b.logits.data(), rows, vocab, params, ref.data(), raw.data());
  int support_mismatches = 0;
  for (int64_t i = 0; i < rows * vocab; ++i) support_mismatches += (probs[i] > 0.0f) != (ref[i] > 0.0);
  CHECK(support_mismatches == 0);
  grpo::test::close("probs", probs.data(), ref.data(), probs.size(), 1e-6, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    CHECK(ref[r * vocab + tokens[r]] > 0.0);
    CHECK(std::fabs(logp[r] - std::log(ref[r * vocab + tokens[r]])) < 1e-5);
    CHECK(std::fabs(logp_raw[r] - raw[r * vocab + tokens[r]]) < 1e-5);
  }
}

std::vector<int32_t> sample_tokens(const std::vector<float>& logits, int64_t rows, int64_t vocab,
                                   const grpo_sampling_params& params) {
  std::vector<int32_t> tokens(rows, -1);
  CHECK(grpo_sample(logits.data(), rows, vocab, &params, tokens.data(), nullptr, nullptr) == GRPO_OK);
  return tokens;
}

void greedy_and_top1_are_argmax() {
  const int64_t rows = 16, vocab = 1000;
  const std::vector<float> logits = random_floats(rows * vocab, 3.0f, 5);
  std::vector<float> zero(rows, 0.0f);
  std::vector<int32_t> one(rows, 1);
  grpo_sampling_params greedy{}, top1{};
  greedy.temperature = zero.data();
  top1.top_k = one.data();
  const auto a = sample_tokens(logits, rows, vocab, greedy), b = sample_tokens(logits, rows, vocab, top1);
  for (int64_t r = 0; r < rows; ++r) {
    const auto row = logits.begin() + r * vocab;
    const int32_t argmax = static_cast<int32_t>(std::max_element(row, row + vocab) - row);
    CHECK(a[r] == argmax && b[r] == argmax);
  }
}

void deterministic_across_threads() {
  const Batch b = random_batch(64, 5000, 9, false);
  const grpo_sampling_params params = b.params();
  grpo_set_num_threads(1);
  const auto one = sample_tokens(b.logits, b.rows, b.vocab, params);
  grpo_set_num_threads(2);
  const auto two = sample_tokens(b.logits, b.rows, b.vocab, params), again = sample_tokens(b.logits, b.rows, b.vocab, params);
  CHECK(one == two && two == again);
  grpo_sampling_params next = params;
  next.step += 1;
  CHECK(sample_tokens(b.logits, b.rows, b.vocab, next) != two);
  grpo_set_num_threads(0);
}

// Rows [first, first + n) sampled on their own with first_row = first draw what they draw in the whole batch.
void first_row_matches_the_whole_batch(int64_t first, int64_t n) {
  const Batch b = random_batch(12, 3000, 17, false);
  const auto whole = sample_tokens(b.logits, b.rows, b.vocab, b.params());
  const int64_t words = (b.vocab + 31) / 32;
  std::vector<int32_t> offsets;
  for (int64_t r = first; r <= first + n; ++r) offsets.push_back(b.offsets[r] - b.offsets[first]);
  const grpo_sampling_params part{b.temperature.data() + first, b.top_k.data() + first, b.top_p.data() + first,
                                  b.min_p.data() + first, b.repetition.data() + first, b.presence.data() + first,
                                  b.frequency.data() + first, b.allow.data() + first * words,
                                  b.history.data() + b.offsets[first], offsets.data(), 1234, 7, static_cast<uint64_t>(first)};
  const std::vector<float> logits(b.logits.begin() + first * b.vocab, b.logits.begin() + (first + n) * b.vocab);
  const auto got = sample_tokens(logits, n, b.vocab, part);
  CHECK(std::equal(got.begin(), got.end(), whole.begin() + first));
  grpo_sampling_params own = part;
  own.first_row = 0;  // the same rows as a batch of their own draw other tokens
  CHECK(sample_tokens(logits, n, b.vocab, own) != got);
}

void edge_cases() {
  grpo_sampling_params plain{};
  CHECK(sample_tokens({3.0f}, 1, 1, plain)[0] == 0);  // V = 1
  std::vector<int32_t> big_k{1 << 30};
  grpo_sampling_params huge_k{};
  huge_k.top_k = big_k.data();
  const std::vector<float> row = random_floats(100, 1.0f, 3);
  CHECK(sample_tokens(row, 1, 100, huge_k) == sample_tokens(row, 1, 100, plain));  // top-k >= V is off
  std::vector<uint32_t> allow(4, 0u);
  allow[2] = 1u << 5;  // only token 69 of 100 is allowed
  grpo_sampling_params masked{};
  masked.allow_bits = allow.data();
  CHECK(sample_tokens(row, 1, 100, masked)[0] == 69);
  std::vector<float> neg_inf(100, -INFINITY);
  neg_inf[42] = -5.0f;
  CHECK(sample_tokens(neg_inf, 1, 100, plain)[0] == 42);
  std::vector<float> huge(100, -1e30f);
  huge[17] = 1e30f;
  huge[18] = 1e30f;
  const int32_t token = sample_tokens(huge, 1, 100, plain)[0];
  CHECK(token == 17 || token == 18);
}

bool fails_with(const std::vector<float>& logits, int64_t rows, int64_t vocab, const grpo_sampling_params& params,
                grpo_status status, const char* words) {
  std::vector<int32_t> tokens(rows);
  const grpo_status got = grpo_sample(logits.data(), rows, vocab, &params, tokens.data(), nullptr, nullptr);
  const bool named = std::string(grpo_last_error()).find(words) != std::string::npos;
  if (got != status || !named) std::fprintf(stderr, "status %d, message: %s\n", got, grpo_last_error());
  return got == status && named;
}

void typed_errors() {
  std::vector<float> logits = random_floats(300, 1.0f, 4);
  grpo_sampling_params plain{};
  logits[150] = NAN;
  CHECK(fails_with(logits, 3, 100, plain, GRPO_ERR_NON_FINITE, "row 1"));
  logits[150] = INFINITY;
  CHECK(fails_with(logits, 3, 100, plain, GRPO_ERR_NON_FINITE, "row 1"));
  logits[150] = 0.0f;
  std::vector<uint32_t> allow(3 * 4, ~0u);
  for (int w = 8; w < 12; ++w) allow[w] = 0u;
  grpo_sampling_params masked{};
  masked.allow_bits = allow.data();
  CHECK(fails_with(logits, 3, 100, masked, GRPO_ERR_VALUE_RANGE, "row 2"));
  std::vector<float> top_p{0.5f, 1.5f, 0.9f};
  grpo_sampling_params bad_p{};
  bad_p.top_p = top_p.data();
  CHECK(fails_with(logits, 3, 100, bad_p, GRPO_ERR_VALUE_RANGE, "top_p[1]"));
  std::vector<int32_t> history{5, 100}, offsets{0, 1, 2, 2};
  grpo_sampling_params bad_history{};
  bad_history.history = history.data();
  bad_history.history_offsets = offsets.data();
  CHECK(fails_with(logits, 3, 100, bad_history, GRPO_ERR_INDEX_RANGE, "history[1]"));
  grpo_sampling_params past_the_counter{};
  past_the_counter.first_row = (uint64_t{1} << 32) - 2;  // rows 2^32 - 2 .. 2^32: one past the 32-bit row counter
  CHECK(fails_with(logits, 3, 100, past_the_counter, GRPO_ERR_VALUE_RANGE, "first_row + rows"));
  CHECK(grpo_sample(logits.data(), 3, 100, nullptr, nullptr, nullptr, nullptr) == GRPO_ERR_INVALID_ARGUMENT);
}

}  // namespace

int main() {
  philox_known_answers();
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    probs_match_reference(40, 777, seed, false);
    probs_match_reference(40, 777, seed + 10, true);
    probs_match_reference(6, 40000, seed + 20, seed == 2);
  }
  probs_match_reference(200, 7, 31, true);
  greedy_and_top1_are_argmax();
  deterministic_across_threads();
  first_row_matches_the_whole_batch(5, 7);
  first_row_matches_the_whole_batch(11, 1);
  edge_cases();
  typed_errors();
  return grpo::test::report("test_sampling");
}
