// cpu_prefill_bound: see prefill_bound.h.
#include "cli/prefill_bound.h"

#include <map>

#include "backend/cpu/compute_peak.h"
#include "cli/model_info.h"
#include "core/cpu_features.h"

namespace met {

PrefillBound cpu_prefill_bound(std::span<const GgufTensorInfo> tensors, const ModelHParams& hparams,
                               int num_threads) {
  const Isa isa = selected_isa();
  std::map<cpu::MacKind, double> macs;  // by the instruction that runs them
  PrefillBound b;
  for (const auto& [type, n] : matmul_macs_per_token(tensors, &hparams)) {
    macs[cpu::mac_kind_of(type, isa)] += static_cast<double>(n);
    b.macs_per_token += static_cast<double>(n);
  }
  double seconds = 0, most = 0;
  for (const auto& [kind, n] : macs) {
    const double rate = cpu::measure_mac_rate(kind, isa, num_threads);
    if (rate <= 0) return b;
    seconds += n / rate;
    if (n > most) {
      most = n;
      b.instruction = std::string(cpu::mac_instruction(kind, isa));
      b.mac_rate = rate;
    }
  }
  if (seconds > 0) b.ceiling_tok_s = 1.0 / seconds;
  return b;
}

}  // namespace met
