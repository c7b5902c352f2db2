// mlens-llama-worker: the process in which llama.cpp runs for mlens and modellens (llama_worker.h).
#include "mlens/infer/llama_worker.h"

int main(int argc, char** argv) { return mlens::llama_worker_main(argc, argv); }
