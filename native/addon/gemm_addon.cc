// Binding of the GEMM: C is a caller-allocated typed array written in place (lib/kernels/gemm.ts).
#include <string>

#include "gemm/gemm_bf16.h"
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

// The layout of C = alpha·op(A)·op(B) + beta·C: { transA, transB, m, n, k, alpha, beta, lda, ldb, ldc }.
struct Layout {
  bool ta, tb;
  int64_t M, N, K, lda, ldb, ldc;
  float alpha, beta;
};

void read_layout(Fields& f, Layout& l) {
  l.ta = f.boolean("transA");
  l.tb = f.boolean("transB");
  l.M = f.integer("m");
  l.N = f.integer("n");
  l.K = f.integer("k");
  l.alpha = f.f32("alpha");
  l.beta = f.f32("beta");
  l.lda = f.integer("lda");
  l.ldb = f.integer("ldb");
  l.ldc = f.integer("ldc");
}

// (A, B, C, layout, async)
Napi::Value gemm_with(const Napi::CallbackInfo& info, SgemmFn sgemm) {
  Napi::Env env = info.Env();
  auto A = view_arg<float>(info, 0, "A");
  auto B = view_arg<float>(info, 1, "B");
  auto C = view_arg<float>(info, 2, "C");
  const Layout l = read_struct<Layout>(info[3], "layout", read_layout);
  expect_holds(env, A, l.ta ? l.K : l.M, l.ta ? l.M : l.K, l.lda, "A");
  expect_holds(env, B, l.tb ? l.N : l.K, l.tb ? l.K : l.N, l.ldb, "B");
  expect_holds(env, C, l.M, l.N, l.ldc, "C");
  CallMemory memory(bool_arg(info, 4, "async"));
  memory.inputs(A, B);
  memory.output(C, "C");
  return dispatch(info, std::move(memory),
                  [=] { return sgemm(l.ta, l.tb, l.M, l.N, l.K, l.alpha, A.data, l.lda, B.data, l.ldb, l.beta, C.data, l.ldc); });
}

Napi::Value gemm(const Napi::CallbackInfo& info) { return gemm_with(info, &grpo_sgemm); }
Napi::Value gemm_bf16(const Napi::CallbackInfo& info) { return gemm_with(info, &grpo_sgemm_bf16); }
Napi::Value gemm_bf16_native(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), grpo_sgemm_bf16_native() != 0);
}
// For benchmarks and tests, beside the C ABI's yes/no (a name query there would grow the ABI).
Napi::Value gemm_bf16_kernel(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), grpo::gemm_bf16_kernel()); }

}  // namespace

void register_gemm(Napi::Env env, Napi::Object exports) {
  exports.Set("gemm", Napi::Function::New(env, gemm));
  exports.Set("gemmBf16", Napi::Function::New(env, gemm_bf16));
  exports.Set("gemmBf16Native", Napi::Function::New(env, gemm_bf16_native));
  exports.Set("gemmBf16Kernel", Napi::Function::New(env, gemm_bf16_kernel));
}

}  // namespace grpo::addon
