// Per-thread scratch objects (decode and count buffers) that never end the program when memory
// runs out. Internal to core.
//
// A C++ thread_local object with a destructor has that destructor registered with glibc at the
// object's first use in each thread, with an allocation that, when it fails (an address-space
// limit reached by the buffers of a statistics pass), ends the program ("failed to register TLS
// destructor: out of memory") instead of throwing. Scratch objects are kept here instead.
//
// Contract: thread_scratch<T>(tag) is the calling thread's T for `tag`'s type (a lambda
// expression, `[] {}`, so that each place of use has objects of its own), default-constructed at
// its first use in the thread, the same object on every later call in that thread. It is
// destroyed when the thread ends; the program's first thread keeps its objects until the program
// ends. A failure to construct or to keep it throws std::bad_alloc (or what T's constructor
// throws), never more.
#pragma once

#include <new>

namespace mlens {

namespace detail {

// Makes `object` the calling thread's to keep, destroyed by `destroy` when the thread ends;
// destroys it and throws std::bad_alloc when it cannot be kept.
void keep_thread_scratch(void* object, void (*destroy)(void*));

}  // namespace detail

template <class T, class Tag>
T& thread_scratch(Tag) {
    // A pointer: trivially destructible, so glibc registers nothing for it.
    thread_local T* mine = nullptr;
    if (!mine) {
        T* made = new T();
        detail::keep_thread_scratch(made, [](void* p) { delete static_cast<T*>(p); });
        mine = made;
    }
    return *mine;
}

}  // namespace mlens
