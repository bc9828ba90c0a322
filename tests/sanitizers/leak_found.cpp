// The sanitized suite's options still find leaks: a block held only through dynamic TLS is
// reachable (not reported), a block whose last pointer is dropped is. Run by CTest, which
// expects the report of the 4321 bytes and none of the 1234. Usage: sanitizer_leak_found LIBRARY.so
#include "dtls_library.hpp"

#include <cstdio>
#include <cstdlib>

namespace {
void* volatile sink;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const DtlsAddress dtls_address = open_dtls_library(argv[1]);
  if (!dtls_address) return 2;
  dtls_address()[0] = std::malloc(1234);  // held by this thread's dynamic TLS
  sink = std::malloc(4321);
  sink = nullptr;  // leaked
  return 0;
}
