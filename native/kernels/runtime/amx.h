// Whether this process may run AMX-BF16 tile instructions. All three must hold, else the first tile
// instruction faults: the CPU has AMX-TILE and AMX-BF16 (CPUID 7.0:EDX bits 24 and 22); the OS saves the
// tile state (XCR0 bits 17 and 18); Linux granted this process the tile data state
// (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA), Linux 5.16 and later, process-wide). Checked once.
#pragma once

namespace grpo {

bool amx_bf16_usable();

}  // namespace grpo
