/* A plain C program embedding the core library through the C ABI (what other trainers do). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "grpo/logprob.h"

int main(void) {
  const float logits[6] = {2.0f, 1.0f, 0.0f, 0.0f, 0.0f, NAN}; /* [2, 3]; row 1 holds NaN */
  const int32_t targets[2] = {0, 1};
  float logp[2] = {0};
  grpo_logprob_options options = {1.0f, -100};
  int failures = 0;

  if (grpo_logprob_forward(logits, targets, 1, 3, &options, logp, NULL) != GRPO_OK) failures++;
  if (fabsf(logp[0] - -0.4076060f) > 1e-6f) failures++; /* TRL fixture, T = 1 */
  options.temperature = 0.7f;
  if (grpo_logprob_forward(logits, targets, 1, 3, &options, logp, NULL) != GRPO_OK) failures++;
  if (fabsf(logp[0] - -0.2601184f) > 1e-6f) failures++; /* TRL fixture, T = 0.7 */
  if (grpo_logprob_forward(logits, targets, 2, 3, &options, logp, NULL) != GRPO_ERR_NON_FINITE) failures++;
  if (strstr(grpo_last_error(), "row 1") == NULL) failures++;

  printf("c_abi_logprob: %s (%d failures; cpu path %s)\n", failures ? "FAILED" : "passed", failures, grpo_cpu_path());
  return failures ? 1 : 0;
}
