#include "kernels/cpu/onednn_cpu.h"

#include <dlfcn.h>
#include <omp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "kernels/errors.h"
#include "kernels/parallel.h"

namespace rpt::kernels {
namespace {

std::string_view isa_name(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::sse41:
      return "sse41";
    case dnnl::cpu_isa::avx:
      return "avx";
    case dnnl::cpu_isa::avx2:
      return "avx2";
    case dnnl::cpu_isa::avx2_vnni:
      return "avx2_vnni";
    case dnnl::cpu_isa::avx512_mic:
      return "avx512_mic";
    case dnnl::cpu_isa::avx512_mic_4ops:
      return "avx512_mic_4ops";
    case dnnl::cpu_isa::avx512_core:
      return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "unknown";
  }
}

}  // namespace

const dnnl::engine& onednn_cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

void use_one_openmp_thread() {
  thread_local const bool single_threaded = [] {
    omp_set_num_threads(1);
    return true;
  }();
  (void)single_threaded;
}

OneOpenMpThread::OneOpenMpThread() : previous_(omp_get_max_threads()) { omp_set_num_threads(1); }

OneOpenMpThread::~OneOpenMpThread() { omp_set_num_threads(previous_); }

void* onednn_internal_function(const char* mangled_name) {
  return dlsym(RTLD_DEFAULT, mangled_name);
}

void check_status(dnnl_status_t status, const char* action, const char* what, int columns, int k) {
  RPT_CHECK(status == dnnl_success, RuntimeFailure, "oneDNN cannot ", action, " a packed ", columns,
            " x ", k, " ", what, " block (status ", static_cast<int>(status), ")");
}

std::string onednn_version_name() {
  const dnnl_version_t* version = dnnl_version();
  return "onednn-" + std::to_string(version->major) + "." + std::to_string(version->minor) + "." +
         std::to_string(version->patch);
}

std::string onednn_isa_name() { return std::string(isa_name(dnnl::get_effective_cpu_isa())); }

std::vector<std::size_t> PackedBlockBuffer::offsets(
    int n, int block_columns, const std::function<std::size_t(int columns)>& bytes) {
  const OneOpenMpThread one_thread;  // oneDNN sizes the layout for the threads that pack it
  std::vector<std::size_t> out{0};
  for (int first = 0; first < n; first += block_columns) {
    const std::size_t size = bytes(std::min(block_columns, n - first));
    out.push_back(out.back() + (size + kPackAlignment - 1) / kPackAlignment * kPackAlignment);
  }
  return out;
}

namespace {

std::byte* map_zeroed(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* address =
      ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  RPT_CHECK(address != MAP_FAILED, RuntimeFailure, "cannot map ", bytes,
            " bytes for packed weights: ", std::strerror(errno));
  // Advice: a huge page would make a whole 2 MiB resident, the padding with it.
  ::madvise(address, bytes, MADV_NOHUGEPAGE);
  return static_cast<std::byte*>(address);
}

std::size_t page_size() {
  static const auto bytes = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return bytes;
}

}  // namespace

PackedBlockBuffer::PackedBlockBuffer(std::vector<std::size_t> offsets)
    : offsets_(std::move(offsets)), storage_(map_zeroed(offsets_.back()), Unmap{offsets_.back()}) {}

void PackedBlockBuffer::Unmap::operator()(std::byte* address) const {
  if (address != nullptr) ::munmap(address, bytes);
}

std::size_t PackedBlockBuffer::resident_bytes() const {
  if (bytes() == 0) return 0;
  const std::size_t page = page_size();
  std::vector<unsigned char> resident((bytes() + page - 1) / page);
  RPT_CHECK(::mincore(storage_.get(), bytes(), resident.data()) == 0, RuntimeFailure,
            "mincore failed on packed weights: ", std::strerror(errno));
  std::size_t pages = 0;
  for (const unsigned char flags : resident) pages += flags & 1u;
  return pages * page;
}

int packed_block_columns(int n) {
  constexpr int kMultiple = 64;
  constexpr int kNarrowest = 256;
  const int threads = cpu_threads();
  const int share = (n + threads - 1) / threads;
  return std::max(kNarrowest, (share + kMultiple - 1) / kMultiple * kMultiple);
}

}  // namespace rpt::kernels
