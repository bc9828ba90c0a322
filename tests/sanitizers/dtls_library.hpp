#pragma once
// The two sanitizer probes' shared start: open the small library with a dynamic-TLS variable
// (tests/sanitizers/dtls_library.cpp) and find its dtls_address(), which returns the address of
// that thread's block. Prints dlerror() and returns nullptr when either fails.
#include <dlfcn.h>

#include <cstdio>

using DtlsAddress = void** (*)();

inline DtlsAddress open_dtls_library(const char* path) {
  void* lib = dlopen(path, RTLD_NOW);
  void* symbol = lib ? dlsym(lib, "dtls_address") : nullptr;
  if (!symbol) {
    std::fprintf(stderr, "%s\n", dlerror());
    return nullptr;
  }
  return reinterpret_cast<DtlsAddress>(symbol);
}
