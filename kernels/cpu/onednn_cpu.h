// What rpt's CPU kernels share of oneDNN (libdnnl.so.2): the engine, single-threaded use from
// rpt's own threads, the version and dispatched ISA for descriptions, the lookup of its internal
// packed-GEMM entry points, and how wide a packed block of output features is.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

namespace rpt::kernels {

const dnnl::engine& onednn_cpu_engine();

// Each rpt thread calls oneDNN single-threaded on its own chunk (kernels/parallel.h): oneDNN's
// OpenMP team would otherwise start on every pool thread and oversubscribe the cores.
void use_one_openmp_thread();

// Runs a scope with oneDNN's OpenMP limited to one thread: packed data is laid out for the
// threads that pack it (oneDNN splits it per thread), and rpt's calls are single-threaded.
class OneOpenMpThread {
 public:
  OneOpenMpThread();
  ~OneOpenMpThread();
  OneOpenMpThread(const OneOpenMpThread&) = delete;
  OneOpenMpThread& operator=(const OneOpenMpThread&) = delete;

 private:
  int previous_;
};

// A function of libdnnl.so.2 by its mangled name (which spells the parameter types: a oneDNN
// whose signatures differ has none of them); nullptr when absent.
void* onednn_internal_function(const char* mangled_name);

// Throws RuntimeFailure naming `action` (size, pack) of a `what` block unless it succeeded.
void check_status(dnnl_status_t status, const char* action, const char* what, int columns, int k);

// oneDNN's internal packed GEMMs (dnnl::impl::cpu, src/cpu/gemm/gemm_pack.hpp in its sources):
// column-major like BLAS, C[M, N] = A[M, K] B[K, N], A packed once by `pack` into a buffer
// `get_size` sizes, then `compute` with A given as "P". One struct per element type.
template <class Source, class Destination, class Compute>
struct PackedGemmFunctions {
  using GetSize = dnnl_status_t (*)(const char* identifier, const char* transa, const char* transb,
                                    const dnnl_dim_t* m, const dnnl_dim_t* n, const dnnl_dim_t* k,
                                    const dnnl_dim_t* lda, const dnnl_dim_t* ldb, std::size_t* size,
                                    bool* pack);
  using Pack = dnnl_status_t (*)(const char* identifier, const char* transa, const char* transb,
                                 const dnnl_dim_t* m, const dnnl_dim_t* n, const dnnl_dim_t* k,
                                 const dnnl_dim_t* lda, const dnnl_dim_t* ldb, const Source* src,
                                 Destination* dst);
  GetSize get_size = nullptr;
  Pack pack = nullptr;
  Compute compute = nullptr;

  // Looked up by their mangled names, once per type; nullptr when any is missing.
  static const PackedGemmFunctions* find(const char* get_size_name, const char* pack_name,
                                         const char* compute_name) {
    static const std::optional<PackedGemmFunctions> found = [&] {
      PackedGemmFunctions functions;
      functions.get_size = reinterpret_cast<GetSize>(onednn_internal_function(get_size_name));
      functions.pack = reinterpret_cast<Pack>(onednn_internal_function(pack_name));
      functions.compute = reinterpret_cast<Compute>(onednn_internal_function(compute_name));
      const bool all = functions.get_size != nullptr && functions.pack != nullptr &&
                       functions.compute != nullptr;
      return all ? std::optional<PackedGemmFunctions>(functions) : std::nullopt;
    }();
    return found ? &*found : nullptr;
  }

  // Bytes of A [columns, k] packed for `rows` rows of B (the layout does not depend on them),
  // transposed as rpt stores weights ([columns, k] row-major); throws RuntimeFailure.
  std::size_t packed_bytes(int columns, int k, dnnl_dim_t rows, const char* what) const {
    const dnnl_dim_t m = columns, depth = k;
    std::size_t size = 0;
    bool worth_packing = false;
    check_status(get_size("A", "T", "N", &m, &rows, &depth, &depth, &depth, &size, &worth_packing),
                 "size", what, columns, k);
    return size;
  }

  // A [columns, k] packed into `out`; throws RuntimeFailure.
  void pack_block(const Source* values, int columns, int k, dnnl_dim_t rows, Destination* out,
                  const char* what) const {
    const dnnl_dim_t m = columns, depth = k;
    check_status(pack("A", "T", "N", &m, &rows, &depth, &depth, &depth, values, out), "pack", what,
                 columns, k);
  }
};

// "onednn-2.6.3".
std::string onednn_version_name();
// The ISA oneDNN dispatches to on this CPU, ONEDNN_MAX_CPU_ISA applied, e.g. "avx512_core".
std::string onednn_isa_name();

// Output features per packed block: one block for each thread's share of a matrix's columns (in
// multiples of 64, at least 256), so that a thread's share is one product call: oneDNN spends
// microseconds setting up each call, a cost that weighs at few rows (docs/PERFORMANCE.md "rpt vs
// CTranslate2 after the unpadded encoder", "int8 products in one call per thread"). Narrower
// blocks than 256 would cost the packed layout's per-block headers a quarter or more of a
// 256-wide matrix's bytes.
int packed_block_columns(int n);

// oneDNN aligns to 4 KiB inside a packed block; each block starts at such a boundary.
inline constexpr std::size_t kPackAlignment = 4096;

// A matrix's column blocks packed in oneDNN's layout, one after another in one buffer, each at a
// kPackAlignment boundary. The buffer is mapped, not allocated: its pages read as zeros and take
// memory only once written. oneDNN sizes a packed matrix in whole sub-blocks (float32 on
// avx512_core: output features to a multiple of 48 in sub-blocks of at most 9,984, inputs in
// sub-blocks of 384, so k = 1024 takes 1152), but packing writes the matrix's own values only:
// the padding never becomes resident (docs/PERFORMANCE.md "Packed weights: the layout's padding
// left unwritten"). Huge pages are declined for it, which would make the padding resident.
class PackedBlockBuffer {
 public:
  // Where each block of an n-wide matrix in blocks of `block_columns` starts, from the bytes a
  // block of `columns` output features takes; the buffer's size last.
  static std::vector<std::size_t> offsets(int n, int block_columns,
                                          const std::function<std::size_t(int columns)>& bytes);

  // Throws RuntimeFailure when the buffer cannot be mapped.
  explicit PackedBlockBuffer(std::vector<std::size_t> offsets);

  std::byte* block(int b) const { return storage_.get() + offsets_[static_cast<std::size_t>(b)]; }
  int blocks() const { return static_cast<int>(offsets_.size()) - 1; }
  // The layout's size: address space, of which only the written pages are resident.
  std::size_t bytes() const { return offsets_.back(); }
  // The buffer's pages in memory now (mincore): after packing, those the packing wrote.
  std::size_t resident_bytes() const;

 private:
  struct Unmap {
    std::size_t bytes;
    void operator()(std::byte* address) const;
  };

  std::vector<std::size_t> offsets_;  // [blocks + 1]
  std::unique_ptr<std::byte[], Unmap> storage_;
};

}  // namespace rpt::kernels
