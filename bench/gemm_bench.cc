// The CPU GEMM at the demo models' shapes, 1 or 2 rpt threads: gemm_cpu (BLIS's unpacked path for
// every m, batch-invariant), the dispatch it replaced ("previous": BLIS's default path for at most
// 8 rows, or 32 when k <= 512, else OpenBLAS), each library alone, and int8_linear_cpu (oneDNN
// u8 x s8, activations quantized per call and outputs dequantized: the whole int8 layer, counted in
// the same multiply-adds), and packed_f32 (packed_linear_cpu: oneDNN's packed sgemm, rpt's float32
// linear layers on AVX-512; skipped elsewhere). All but gemm_cpu and int8 are split over the
// threads as gemm_cpu was. Shapes: y = x W^T (d_model 256, d_ff 1024, 8,000-token vocabulary) and
// the relative-position terms of attention (rows x heads queries against 2k+1 = 33 buckets of
// head_dim 64). Rows: 4 = one sentence at beam 4, 16, 32, 128 = 32 sentences, 512 = a batch's
// encoder tokens. Run: build/bench/gemm_bench --benchmark_min_time=0.2 --benchmark_repetitions=3
//        --benchmark_enable_random_interleaving=true --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <vector>

#include "kernels/gemm.h"
#include "kernels/int8_gemm.h"
#include "kernels/packed_sgemm.h"
#include "kernels/parallel.h"

namespace rpt::kernels {

void blis_default_sgemm(const GemmArgs& args);  // bench/blis_default_sgemm.cc

namespace {

enum Library { kGemmCpu, kPrevious, kOpenBlas, kBlisDefault, kInt8, kPackedFloat32 };

// OpenBLAS runs inside rpt's chunks, one thread each, like every library here.
const bool kOpenBlasSerial = [] {
  openblas_set_num_threads(1);
  return true;
}();
constexpr const char* kLibraryNames[] = {"gemm_cpu", "previous", "openblas",
                                         "blis",     "int8",     "packed_f32"};

void openblas_sgemm(const GemmArgs& args) {
  cblas_sgemm(CblasRowMajor, args.transpose_a ? CblasTrans : CblasNoTrans,
              args.transpose_b ? CblasTrans : CblasNoTrans, args.m, args.n, args.k, args.alpha,
              args.a, args.lda, args.b, args.ldb, args.beta, args.c, args.ldc);
}

// gemm_cpu before batch invariance: the library chosen per block by its row count.
void previous_sgemm(const GemmArgs& args) {
  const bool small_rows = args.m <= 8 || (args.m <= 32 && args.k <= 512);
  small_rows ? blis_default_sgemm(args) : openblas_sgemm(args);
}

// `sgemm` over gemm_cpu's thread blocks (columns split anywhere, as before).
void split(const GemmArgs& args, void (*sgemm)(const GemmArgs&)) {
  parallel_gemm_blocks(args.m, args.n, args.k, [&](long m0, long m1, long n0, long n1) {
    GemmArgs part = args;
    part.m = static_cast<int>(m1 - m0);
    part.n = static_cast<int>(n1 - n0);
    part.a = args.a + m0 * args.lda;
    part.b = args.transpose_b ? args.b + n0 * args.ldb : args.b + n0;
    part.c = args.c + m0 * args.ldc + n0;
    sgemm(part);
  });
}

void BM_Gemm(benchmark::State& state) {
  const auto library = static_cast<Library>(state.range(0));
  const int m = static_cast<int>(state.range(1));
  const int n = static_cast<int>(state.range(2));
  const int k = static_cast<int>(state.range(3));
  const bool transpose_b = state.range(4) != 0;
  set_cpu_threads(static_cast<int>(state.range(5)));
  std::vector<float> x(static_cast<std::size_t>(m) * k, 0.01f);
  std::vector<float> w(static_cast<std::size_t>(n) * k, 0.02f);
  std::vector<float> y(static_cast<std::size_t>(m) * n);
  const GemmArgs args{.transpose_b = transpose_b,
                      .m = m,
                      .n = n,
                      .k = k,
                      .a = x.data(),
                      .lda = k,
                      .b = w.data(),
                      .ldb = transpose_b ? k : n,
                      .c = y.data(),
                      .ldc = n};
  const auto int8_weights = library == kInt8 ? Int8Weights::quantize(w.data(), n, k) : nullptr;
  if (library == kPackedFloat32 && !float32_linear_packed()) {
    state.SkipWithError("float32 linear layers are not packed on this CPU");
    return;
  }
  const auto packed =
      library == kPackedFloat32 ? PackedFloat32Weights::pack(w.data(), n, k) : nullptr;
  for (auto _ : state) {
    switch (library) {
      case kGemmCpu:
        gemm_cpu(args);
        break;
      case kPrevious:
        split(args, previous_sgemm);
        break;
      case kOpenBlas:
        split(args, openblas_sgemm);
        break;
      case kBlisDefault:
        split(args, blis_default_sgemm);
        break;
      case kInt8:
        int8_linear_cpu(
            {.input = x.data(), .rows = m, .weights = int8_weights.get(), .output = y.data()});
        break;
      case kPackedFloat32:
        packed_linear_cpu({.input = x.data(),
                           .input_stride = k,
                           .rows = m,
                           .weights = packed.get(),
                           .output = y.data(),
                           .output_stride = n});
        break;
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["FLOP/s"] =
      benchmark::Counter(2.0 * m * n * k * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
  state.SetLabel(kLibraryNames[library]);
}

struct Shape {
  int n, k;
  bool transpose_b;  // y = x W^T (linear layers, attention keys) or y = x W (attention values)
  bool linear;       // int8 has a layer for it
};

void shapes(benchmark::internal::Benchmark* bench) {
  bench->ArgNames({"library", "m", "n", "k", "tb", "threads"});
  const Shape all[] = {{768, 256, true, true},  {256, 256, true, true},  {1024, 256, true, true},
                       {256, 1024, true, true}, {8000, 256, true, true}, {33, 64, true, false},
                       {64, 33, false, false}};
  for (const int threads : {1, 2}) {
    for (const int m : {4, 16, 32, 128, 512}) {
      for (const Shape& s : all) {
        for (const Library library :
             {kGemmCpu, kPrevious, kOpenBlas, kBlisDefault, kInt8, kPackedFloat32}) {
          if ((library == kInt8 || library == kPackedFloat32) && !s.linear) continue;
          bench->Args({library, m, s.n, s.k, s.transpose_b, threads});
        }
      }
    }
  }
}

BENCHMARK(BM_Gemm)->Apply(shapes);

// The decoder's attention per row and head: `positions` cached keys (or encoder memory) x 64,
// rows 256 floats apart (d_model): dot products with the query (tv 0) or the weighted sum of
// the values (tv 1), gemv_cpu against OpenBLAS's sgemv.
void BM_Gemv(benchmark::State& state) {
  const bool openblas = state.range(0) != 0;
  const int positions = static_cast<int>(state.range(1));
  const bool transpose = state.range(2) != 0;
  constexpr int kHeadDim = 64, kStride = 256;
  std::vector<float> a(static_cast<std::size_t>(positions) * kStride, 0.01f);
  std::vector<float> x(std::max(positions, kHeadDim), 0.02f), y(x.size());
  for (auto _ : state) {
    if (openblas) {
      cblas_sgemv(CblasRowMajor, transpose ? CblasTrans : CblasNoTrans, positions, kHeadDim, 1.0f,
                  a.data(), kStride, x.data(), 1, 0.0f, y.data(), 1);
    } else {
      gemv_cpu({.transpose_a = transpose,
                .rows = positions,
                .cols = kHeadDim,
                .a = a.data(),
                .lda = kStride,
                .x = x.data(),
                .y = y.data()});
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.SetLabel(openblas ? "openblas" : "gemv_cpu");
}

BENCHMARK(BM_Gemv)
    ->ArgNames({"openblas", "positions", "tv"})
    ->ArgsProduct({{0, 1}, {5, 17, 33, 65, 101}, {0, 1}});

}  // namespace
}  // namespace rpt::kernels

BENCHMARK_MAIN();
