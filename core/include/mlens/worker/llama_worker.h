// The llama.cpp worker process: the other end of WorkerSession (worker_session.h).
//
// Contract: llama_worker_main(argc, argv) is the whole program `mlens-llama-worker --channel FD`.
// It serves requests read from the Unix socket FD one at a time: a load with load_model_session,
// and each operation of AllOps (operations.h) with its worker function, which runs the in-process
// core/infer code (tokenize, generate_from_tokens, capture_layers, compare_ab, ...); it
// streams llama.cpp's log lines and progress while a request runs (the progress at least once a
// second, so that the client can tell a busy worker from a hung one), and answers each request
// with one final frame. SIGUSR1 cancels the request in progress. It exits 0 when the socket
// closes, and within 50 ms when its parent process ends during a request (not PR_SET_PDEATHSIG,
// which fires when the parent's spawning *thread* ends, as a GUI job thread does). Before
// llama.cpp opens a file it checks
// that the file is still the regular file the client examined (same device, inode, size and
// modification time); otherwise it answers ErrorCode::E_FILE_CHANGED.
#pragma once

namespace mlens {

int llama_worker_main(int argc, char** argv);

}  // namespace mlens
