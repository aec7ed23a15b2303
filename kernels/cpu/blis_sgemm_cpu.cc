#include "kernels/cpu/blis_sgemm_cpu.h"

#include <blis.h>

#include <cstdlib>
#include <optional>
#include <string_view>

#include "kernels/cpu/cpu_features.h"
#include "kernels/errors.h"

namespace rpt::kernels {
namespace {

// The sub-configurations rpt may ask for (all in Debian's x86_64 build of BLIS) and what each
// needs of the CPU.
struct BlisConfig {
  std::string_view name;
  arch_t id;
  bool (*runs_on)(const CpuFeatures&);
};

bool has_avx2_fma(const CpuFeatures& cpu) { return cpu.avx2 && cpu.fma; }
bool has_avx(const CpuFeatures& cpu) { return cpu.avx; }
bool any_cpu(const CpuFeatures&) { return true; }

constexpr BlisConfig kConfigs[] = {
    {"haswell", BLIS_ARCH_HASWELL, has_avx2_fma},    {"zen3", BLIS_ARCH_ZEN3, has_avx2_fma},
    {"zen2", BLIS_ARCH_ZEN2, has_avx2_fma},          {"zen", BLIS_ARCH_ZEN, has_avx2_fma},
    {"sandybridge", BLIS_ARCH_SANDYBRIDGE, has_avx}, {"generic", BLIS_ARCH_GENERIC, any_cpu}};

const BlisConfig& config_named(std::string_view name) {
  for (const BlisConfig& config : kConfigs) {
    if (config.name == name) return config;
  }
  RPT_THROW(InvalidArgument, "RPT_BLIS_CONFIG=", name,
            " is not one of haswell, zen3, zen2, zen, sandybridge, generic");
}

// From the CPU's features: AVX2 and FMA get the sup kernels (zen3's on AMD, haswell's elsewhere:
// the same register blocks, each vendor's tuning), anything older the packed path.
const BlisConfig& config_for(const CpuFeatures& cpu) {
  if (has_avx2_fma(cpu)) return config_named(cpu.vendor == "AuthenticAMD" ? "zen3" : "haswell");
  return config_named(cpu.avx ? "sandybridge" : "generic");
}

const BlisConfig& chosen_config() {
  const char* forced = std::getenv("RPT_BLIS_CONFIG");
  const CpuFeatures& cpu = cpu_features();
  if (forced == nullptr || *forced == '\0') return config_for(cpu);
  const BlisConfig& config = config_named(forced);
  RPT_CHECK(config.runs_on(cpu), InvalidArgument, "RPT_BLIS_CONFIG=", forced,
            " needs vector extensions this CPU lacks (it has: ", cpu.extensions(), ")");
  return config;
}

// BLIS reads its sub-configuration from BLIS_ARCH_TYPE once, at its first call, and offers no
// other way to choose one: rpt sets it for that call and then puts back what the user had.
void initialise_blis_as(const BlisConfig& config) {
  const char* user = std::getenv("BLIS_ARCH_TYPE");
  const std::optional<std::string> saved =
      user != nullptr ? std::optional<std::string>(user) : std::nullopt;
  setenv("BLIS_ARCH_TYPE", std::to_string(static_cast<int>(config.id)).c_str(), 1);
  bli_init();
  const arch_t active = bli_arch_query_id();
  if (saved) {
    setenv("BLIS_ARCH_TYPE", saved->c_str(), 1);
  } else {
    unsetenv("BLIS_ARCH_TYPE");
  }
  RPT_CHECK(active == config.id, RuntimeFailure, "BLIS runs its ", bli_arch_string(active),
            " configuration, chosen before rpt could ask for ", config.name);
}

enum class Path { kSup, kPacked };

struct BlisSetup {
  cntx_t context;
  Path path;
  int column_multiple;
  std::string description;
};

// Whether the context has float32 sup kernels (register blocks of them: generic, sandybridge
// and skx have none).
bool has_sup_kernels(cntx_t* context) {
  return bli_cntx_get_l3_sup_blksz_def_dt(BLIS_FLOAT, BLIS_MR, context) > 0 &&
         bli_cntx_get_l3_sup_blksz_def_dt(BLIS_FLOAT, BLIS_NR, context) > 0;
}

Path chosen_path(const BlisConfig& config, bool sup_available) {
  const char* forced = std::getenv("RPT_FLOAT32_GEMM");
  const std::string_view setting = forced != nullptr ? forced : "";
  // onednn: linear layers on oneDNN's packed sgemm (kernels/packed_sgemm.h), the rest here.
  if (setting.empty() || setting == "onednn") return sup_available ? Path::kSup : Path::kPacked;
  if (setting == "packed") return Path::kPacked;
  RPT_CHECK(setting == "sup", InvalidArgument, "RPT_FLOAT32_GEMM=", setting,
            " is not one of sup, packed, onednn");
  RPT_CHECK(sup_available, InvalidArgument, "RPT_FLOAT32_GEMM=sup: BLIS's ", config.name,
            " configuration has no float32 sup kernels");
  return Path::kSup;
}

// The sup path's context is BLIS's own, changed in two ways that keep each element's sum one
// fixed sequence:
// - the thresholds below which BLIS takes its unpacked path (sup) are raised out of reach: from
//   512 rows (with n >= 200, k >= 240 on zen3) BLIS would otherwise switch to its packed path,
//   whose micro-kernel rounds differently;
// - sup's k block (KC) is raised past any k: BLIS 0.9 scales it by m and n (KC, KC/2, ... KC/5)
//   unless A is row- and B column-stored (x W^T), and each k block ends in a rounded store to C.
void make_row_invariant(cntx_t* context) {
  constexpr dim_t kNever = dim_t{1} << 40;  // KC / 5 still exceeds any int k
  for (const threshid_t threshold : {BLIS_MT, BLIS_NT, BLIS_KT}) {
    bli_blksz_set_def(kNever, BLIS_FLOAT, &context->l3_sup_thresh[threshold]);
  }
  bli_blksz_set_def(kNever, BLIS_FLOAT, &context->l3_sup_blkszs[BLIS_KC]);
  bli_blksz_set_max(kNever, BLIS_FLOAT, &context->l3_sup_blkszs[BLIS_KC]);
}

BlisSetup make_setup() {
  const BlisConfig& config = chosen_config();
  initialise_blis_as(config);
  BlisSetup setup{*bli_gks_query_cntx(), Path::kPacked, 0, ""};
  setup.path = chosen_path(config, has_sup_kernels(&setup.context));
  std::string name = std::string("blis-") + bli_info_get_version_str();
  if (setup.path == Path::kSup) {
    make_row_invariant(&setup.context);
    setup.column_multiple =
        static_cast<int>(bli_cntx_get_l3_sup_blksz_def_dt(BLIS_FLOAT, BLIS_NR, &setup.context));
    name += " sup ";
  } else {
    setup.column_multiple =
        static_cast<int>(bli_cntx_get_blksz_def_dt(BLIS_FLOAT, BLIS_NR, &setup.context));
    name += " packed ";
  }
  setup.description = name + std::string(config.name);
  return setup;
}

const BlisSetup& blis_setup() {
  static const BlisSetup setup = make_setup();
  return setup;
}

// Single-threaded (gemm_cpu's blocks are the parallelism); sup never packs (that would be
// another path), the packed path never tries sup.
rntm_t serial_runtime(Path path) {
  rntm_t runtime = BLIS_RNTM_INITIALIZER;
  bli_rntm_set_num_threads(1, &runtime);
  if (path == Path::kSup) {
    bli_rntm_set_pack_a(false, &runtime);
    bli_rntm_set_pack_b(false, &runtime);
  } else {
    bli_rntm_set_l3_sup(false, &runtime);
  }
  return runtime;
}

// C[:, column] of `args`, one BLIS dot product per row: no other row takes part.
void column_by_dots(const GemmArgs& args, int column, cntx_t* context, rntm_t* runtime) {
  if (args.k == 0) {  // C = beta C; A and B may be empty (null), so no pointer into them
    for (int i = 0; i < args.m; ++i) {
      float& c = args.c[static_cast<long>(i) * args.ldc + column];
      c = args.beta == 0.0f ? 0.0f : args.beta * c;
    }
    return;
  }
  float alpha = args.alpha;
  float beta = args.beta;
  const long b_offset = args.transpose_b ? static_cast<long>(column) * args.ldb : column;
  float* b = const_cast<float*>(args.b + b_offset);
  const inc_t b_step = args.transpose_b ? 1 : args.ldb;
  const inc_t a_step = args.transpose_a ? args.lda : 1;
  for (int i = 0; i < args.m; ++i) {
    const long a_offset = args.transpose_a ? i : static_cast<long>(i) * args.lda;
    float* a = const_cast<float*>(args.a + a_offset);
    float* c = args.c + static_cast<long>(i) * args.ldc + column;
    bli_sdotxv_ex(BLIS_NO_CONJUGATE, BLIS_NO_CONJUGATE, args.k, &alpha, a, a_step, b, b_step, &beta,
                  c, context, runtime);
  }
}

}  // namespace

void blis_sgemm_cpu(const GemmArgs& args) {
  const BlisSetup& setup = blis_setup();
  cntx_t* context = const_cast<cntx_t*>(&setup.context);
  rntm_t runtime = serial_runtime(setup.path);
  // sup hands an odd last column to gemv, whose row blocking depends on m: BLIS gets the even
  // columns, and the last one is computed row by row (on either path, so that both split alike).
  const int even_columns = args.n & ~1;
  if (even_columns > 0) {
    float alpha = args.alpha;
    float beta = args.beta;
    // BLIS takes the stored matrices' strides; m, n, k describe op(A) and op(B).
    bli_sgemm_ex(args.transpose_a ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE,
                 args.transpose_b ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, args.m, even_columns,
                 args.k, &alpha, const_cast<float*>(args.a), args.lda, 1,
                 const_cast<float*>(args.b), args.ldb, 1, &beta, args.c, args.ldc, 1, context,
                 &runtime);
  }
  if (even_columns < args.n) column_by_dots(args, args.n - 1, context, &runtime);
}

int blis_sgemm_column_multiple() { return blis_setup().column_multiple; }

std::string blis_sgemm_description() { return blis_setup().description; }

}  // namespace rpt::kernels
