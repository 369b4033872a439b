#include "amx.h"

#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace grpo {

namespace {

#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__)
constexpr long kArchReqXcompPerm = 0x1023;  // <asm/prctl.h>
constexpr long kXfeatureXtiledata = 18;

bool cpu_and_os_have_tiles() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 27))) return false;  // OSXSAVE: xgetbv is usable
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  const unsigned amx_tile = 1u << 24, amx_bf16 = 1u << 22;
  if ((edx & (amx_tile | amx_bf16)) != (amx_tile | amx_bf16)) return false;
  unsigned xcr0_low, xcr0_high;
  __asm__ volatile("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  const unsigned tile_config = 1u << 17, tile_data = 1u << 18;
  return (xcr0_low & (tile_config | tile_data)) == (tile_config | tile_data);
}

bool probe() { return cpu_and_os_have_tiles() && syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0; }
#else
bool probe() { return false; }
#endif

}  // namespace

bool amx_bf16_usable() {
  static const bool usable = probe();
  return usable;
}

}  // namespace grpo
