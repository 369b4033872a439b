#include "advantage_reference.h"

#include <cmath>

namespace grpo::reference {

namespace {

std::vector<double> scorable(const float* rewards, const std::vector<int64_t>& members, int32_t nan_policy) {
  std::vector<double> values;
  for (int64_t i : members) {
    if (!std::isnan(rewards[i])) values.push_back(rewards[i]);
    else if (nan_policy == GRPO_ADV_NAN_AS_ZERO) values.push_back(0.0);
  }
  return values;
}

void mean_std(const std::vector<double>& v, double* mean, double* std) {
  double sum = 0.0, squares = 0.0;
  for (double x : v) sum += x;
  *mean = sum / v.size();
  for (double x : v) squares += (x - *mean) * (x - *mean);
  *std = v.size() >= 2 ? std::sqrt(squares / (v.size() - 1)) : NAN;
}

}  // namespace

void normalize_groups(const float* rewards, int64_t n, const std::vector<std::vector<int64_t>>& groups,
                      const grpo_advantage_options& o, double* out) {
  std::vector<int64_t> all(n);
  for (int64_t i = 0; i < n; ++i) all[i] = i;
  double batch_mean, batch_std;
  mean_std(scorable(rewards, all, o.nan_rewards), &batch_mean, &batch_std);
  for (const auto& members : groups) {
    const std::vector<double> v = scorable(rewards, members, o.nan_rewards);
    double mean, std;
    mean_std(v, &mean, &std);
    if (o.scale == GRPO_ADV_SCALE_BATCH) std = batch_std;
    for (int64_t i : members) {
      const double r = std::isnan(rewards[i]) && o.nan_rewards == GRPO_ADV_NAN_AS_ZERO ? 0.0 : rewards[i];
      double a;
      if (std::isnan(r)) a = 0.0;
      else if (v.size() < 2) a = o.singleton == GRPO_ADV_SINGLETON_ZERO ? 0.0
                               : o.singleton == GRPO_ADV_SINGLETON_NAN ? NAN
                               : o.scale == GRPO_ADV_SCALE_NONE        ? r
                                                                       : r / (1.0 + o.std_epsilon);
      else {
        a = o.scale == GRPO_ADV_SCALE_NONE ? r - mean : (r - mean) / (std + o.std_epsilon);
        if (!std::isfinite(a)) a = 0.0;
      }
      out[i] = a;
    }
  }
}

}  // namespace grpo::reference
