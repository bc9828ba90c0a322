// Opened with dlopen() by dtls_tracer.cpp and leak_found.cpp: 24 bytes of dynamic TLS, like
// libLLVM-15's (which Mesa's llvmpipe loads). glibc >= 2.25 malloc()s such a block on the
// thread's first access, from the dynamic linker.
thread_local void* dtls_words[3];

extern "C" void** dtls_address() { return dtls_words; }
