// The CPU GEMM at the demo models' shapes (y = x W^T, d_model 256, d_ff 1024, 8,000-token
// vocabulary), one thread: OpenBLAS, BLIS's small-matrix path, gemm_cpu (which picks between
// them by row count), and int8_linear_cpu (oneDNN u8 x s8, activations quantized per call and
// outputs dequantized: the whole int8 layer, counted in the same multiply-adds). Rows: 4 = one
// sentence at beam 4, 16, 32, 128 = 32 sentences.
// Run: build/bench/gemm_bench --benchmark_min_time=0.5 --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <vector>

#include "kernels/cpu/small_gemm_cpu.h"
#include "kernels/gemm.h"
#include "kernels/int8_gemm.h"
#include "kernels/parallel.h"

namespace rpt::kernels {
namespace {

enum Library { kOpenBlas, kBlisSmall, kGemmCpu, kInt8 };
constexpr const char* kLibraryNames[] = {"openblas", "blis", "gemm_cpu", "int8"};

void BM_Gemm(benchmark::State& state) {
  const auto library = static_cast<Library>(state.range(0));
  const int m = static_cast<int>(state.range(1));
  const int n = static_cast<int>(state.range(2));
  const int k = static_cast<int>(state.range(3));
  set_cpu_threads(1);
  std::vector<float> x(static_cast<std::size_t>(m) * k, 0.01f);
  std::vector<float> w(static_cast<std::size_t>(n) * k, 0.02f);
  std::vector<float> y(static_cast<std::size_t>(m) * n);
  const GemmArgs args{.transpose_b = true, .m = m, .n = n, .k = k, .a = x.data(), .lda = k,
                      .b = w.data(), .ldb = k, .c = y.data(), .ldc = n};
  const auto int8_weights = Int8Weights::quantize(w.data(), n, k);
  for (auto _ : state) {
    switch (library) {
      case kOpenBlas:
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, x.data(), k,
                    w.data(), k, 0.0f, y.data(), n);
        break;
      case kBlisSmall:
        small_gemm_cpu(args);
        break;
      case kGemmCpu:
        gemm_cpu(args);
        break;
      case kInt8:
        int8_linear_cpu({.input = x.data(), .rows = m, .weights = int8_weights.get(),
                         .output = y.data()});
        break;
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["FLOP/s"] = benchmark::Counter(
      2.0 * m * n * k * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate,
      benchmark::Counter::kIs1000);
  state.SetLabel(kLibraryNames[library]);
}

void shapes(benchmark::internal::Benchmark* bench) {
  bench->ArgNames({"library", "m", "n", "k"});
  for (const int m : {4, 16, 32, 128}) {
    for (const auto& [n, k] : {std::pair{768, 256}, std::pair{1024, 256}, std::pair{256, 1024},
                               std::pair{8000, 256}}) {
      for (const Library library : {kOpenBlas, kBlisSmall, kGemmCpu, kInt8}) {
        bench->Args({library, m, n, k});
      }
    }
  }
}

BENCHMARK(BM_Gemm)->Apply(shapes);

}  // namespace
}  // namespace rpt::kernels

BENCHMARK_MAIN();
