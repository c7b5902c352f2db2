#include "thread_scratch.h"

#include <pthread.h>

#include <cstdlib>
#include <utility>
#include <vector>

namespace mlens::detail {

namespace {

// The objects one thread keeps, destroyed in the reverse order of their making.
struct ThreadScratch {
    std::vector<std::pair<void*, void (*)(void*)>> objects;
    ~ThreadScratch() {
        for (auto it = objects.rbegin(); it != objects.rend(); ++it) it->second(it->first);
    }
};

void destroy_thread_scratch(void* scratch) { delete static_cast<ThreadScratch*>(scratch); }

// The key under which each thread's ThreadScratch is kept: its destructor runs as the thread
// ends. Created while the program starts (below), when few keys exist (the first 32 keep their
// values in the thread itself, so setting one allocates nothing).
pthread_key_t scratch_key() {
    static const pthread_key_t key = [] {
        pthread_key_t k;
        if (pthread_key_create(&k, destroy_thread_scratch) != 0) std::abort();
        return k;
    }();
    return key;
}

// The program's first thread does not end as other threads do: its objects last until the
// program ends, held here (where leak checkers see them), so that nothing a static destructor
// calls can find one destroyed.
const pthread_t g_first_thread = [] {
    scratch_key();
    return pthread_self();
}();

}  // namespace

void* g_first_thread_scratch = nullptr;  // not static: the store to it is kept

void keep_thread_scratch(void* object, void (*destroy)(void*)) {
    try {
        auto* scratch = static_cast<ThreadScratch*>(pthread_getspecific(scratch_key()));
        if (!scratch) {
            scratch = new ThreadScratch();
            if (pthread_setspecific(scratch_key(), scratch) != 0) {
                delete scratch;
                throw std::bad_alloc();
            }
            if (pthread_equal(pthread_self(), g_first_thread)) g_first_thread_scratch = scratch;
        }
        scratch->objects.emplace_back(object, destroy);
    } catch (...) {
        destroy(object);
        throw;
    }
}

}  // namespace mlens::detail
