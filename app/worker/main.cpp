// mlens-llama-worker: the process in which llama.cpp runs for mlens and modellens (llama_worker.h).
#include "mlens/worker/llama_worker.h"

#if defined(__SANITIZE_ADDRESS__)
// A SIGBUS here is a model file truncated under llama.cpp's mapping, which the worker exists to
// survive: the worker ends on the signal itself, so its client names it the same way in a
// sanitizer build as in a release build, instead of AddressSanitizer's report and exit status 1.
extern "C" const char* __asan_default_options() { return "handle_sigbus=0"; }
#endif

int main(int argc, char** argv) { return mlens::llama_worker_main(argc, argv); }
