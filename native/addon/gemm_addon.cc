// Binding of the GEMM: C is a caller-allocated typed array written in place (lib/kernels/gemm.ts).
#include <string>

#include "grpo/gemm.h"
#include "napi_util.h"
#include "registry.h"

namespace grpo::addon {

namespace {

// Throws unless `view` holds `rows` rows of `width` floats spaced `ld` apart.
void expect_holds(Napi::Env env, const View<float>& view, int64_t rows, int64_t width, int64_t ld, const char* name) {
  const int64_t needed = rows > 0 && width > 0 ? (rows - 1) * ld + width : 0;
  if (ld < width || view.length < needed)
    throw_status(env, GRPO_ERR_SHAPE, std::string(name) + " has " + std::to_string(view.length) + " elements, needs " +
                                          std::to_string(needed) + " (ld " + std::to_string(ld) + ")");
}

using SgemmFn = grpo_status (*)(int, int, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t,
                                float, float*, int64_t);

// (transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, async)
Napi::Value gemm_with(const Napi::CallbackInfo& info, SgemmFn sgemm) {
  Napi::Env env = info.Env();
  const bool ta = bool_arg(info, 0, "transA"), tb = bool_arg(info, 1, "transB");
  const int64_t M = int_arg(info, 2, "M"), N = int_arg(info, 3, "N"), K = int_arg(info, 4, "K");
  const float alpha = static_cast<float>(number_arg(info, 5, "alpha")), beta = static_cast<float>(number_arg(info, 10, "beta"));
  auto A = view_arg<float>(info, 6, "A");
  auto B = view_arg<float>(info, 8, "B");
  auto C = view_arg<float>(info, 11, "C");
  const int64_t lda = int_arg(info, 7, "lda"), ldb = int_arg(info, 9, "ldb"), ldc = int_arg(info, 12, "ldc");
  expect_holds(env, A, ta ? K : M, ta ? M : K, lda, "A");
  expect_holds(env, B, tb ? N : K, tb ? K : N, ldb, "B");
  expect_holds(env, C, M, N, ldc, "C");
  CallMemory memory(bool_arg(info, 13, "async"));
  memory.inputs(A, B);
  memory.output(C, "C");
  return dispatch(info, std::move(memory),
                  [=] { return sgemm(ta, tb, M, N, K, alpha, A.data, lda, B.data, ldb, beta, C.data, ldc); });
}

Napi::Value gemm(const Napi::CallbackInfo& info) { return gemm_with(info, &grpo_sgemm); }
Napi::Value gemm_bf16(const Napi::CallbackInfo& info) { return gemm_with(info, &grpo_sgemm_bf16); }
Napi::Value gemm_bf16_native(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), grpo_sgemm_bf16_native() != 0);
}

}  // namespace

void register_gemm(Napi::Env env, Napi::Object exports) {
  exports.Set("gemm", Napi::Function::New(env, gemm));
  exports.Set("gemmBf16", Napi::Function::New(env, gemm_bf16));
  exports.Set("gemmBf16Native", Napi::Function::New(env, gemm_bf16_native));
}

}  // namespace grpo::addon
