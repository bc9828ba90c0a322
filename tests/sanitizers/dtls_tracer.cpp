// Issue 13: LeakSanitizer's tracer must not crash on a dynamic TLS block at a page offset of 16.
// LLVM 14's __tls_get_addr interceptor takes the 16 bytes before such a block (ASan's chunk
// header) for a glibc 2.19 TLS header and records a bogus range for the thread; at exit the
// tracer scans it and dies ("Tracer caught signal 11", exit 134). Mesa's libLLVM-15 block lands
// there by chance (1 in 256 exits of attnlab, depending on earlier allocations). This program
// puts it there every time; tests/sanitized_suite.sh's intercept_tls_get_addr=0 must make it
// exit 0. Usage: sanitizer_dtls_tracer LIBRARY.so
#include "dtls_library.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {
void* kept[4096];  // reachable: no leak
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const DtlsAddress dtls_address = open_dtls_library(argv[1]);
  if (!dtls_address) return 2;
  // 24-byte chunks (ASan's 48-byte class) until the next one starts at a page offset of 16.
  for (int n = 0;; ++n) {
    if (n == 4096) return 2;
    kept[n] = std::malloc(24);
    if (((reinterpret_cast<std::uintptr_t>(kept[n]) + 48) & 4095) == 16) break;
  }
  void** block = dtls_address();  // ld.so mallocs the block: that next chunk
  const auto offset = reinterpret_cast<std::uintptr_t>(block) & 4095;
  std::printf("dynamic TLS block at %p, page offset %u\n", static_cast<void*>(block), static_cast<unsigned>(offset));
  if (offset != 16) {
    std::fprintf(stderr, "the block is not at page offset 16: this test no longer sets up the case\n");
    return 2;
  }
  return 0;
}
