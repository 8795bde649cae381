//! The memory allocator a toolhost process runs on: jemalloc, with the host's options.
//!
//! The memory allocator a toolhost process runs on: jemalloc, set up by
//! [`use_host_allocator!`](crate::use_host_allocator) in the binary (and in the tests
//! and benchmarks, so that they measure what the binary does).
//!
//! Compiling components allocates and frees heavily on many threads at once: the
//! compile pool's, the loading threads, the runtime's workers. glibc's malloc serialized
//! them on its arena locks: a cold start of 100 components took 2.4 s, the 18 MB Python
//! component 1.3 s, against 1.8 s and 0.9 s on jemalloc (docs/performance.md). jemalloc
//! keeps what a thread frees in caches of its own and gives freed pages back to the
//! operating system from a background thread, so an idle host does not keep the
//! compile's garbage resident.

/// The allocator type, for `#[global_allocator]`.
pub use tikv_jemallocator::Jemalloc;

/// jemalloc's options, read once when it starts (`malloc_conf`, NUL-terminated):
/// - one background thread gives freed pages back, so an idle process, which allocates
///   nothing, does not keep them;
/// - freed pages go back after a second (`dirty_decay_ms`; at once, `0`, made a cold
///   start twice as slow), and at once past that stage (`muzzy_decay_ms:0`: lazily
///   freed pages would still count as resident);
/// - four arenas per CPU, jemalloc's default: one per CPU (`percpu_arena`) kept 0.5 MB
///   less idle, but jemalloc refuses it in a process pinned to fewer CPUs than the
///   machine has, as containers and `taskset` pin;
/// - a mistake in these options stops the process at start rather than being ignored.
#[doc(hidden)]
pub const MALLOC_CONF: &[u8] = b"background_thread:true,max_background_threads:1,dirty_decay_ms:1000,muzzy_decay_ms:0,\
abort_conf:true\0";

/// Makes jemalloc, with the host's options, the global allocator of the program that
/// invokes it (once, at the top level of a binary or of a library its binaries link).
/// A program that embeds toolhost may choose its own allocator instead; compiling
/// components is then slower on glibc's.
#[macro_export]
macro_rules! use_host_allocator {
    () => {
        #[global_allocator]
        static GLOBAL_ALLOCATOR: $crate::allocator::Jemalloc = $crate::allocator::Jemalloc;

        /// jemalloc reads its options through this symbol (`const char *`).
        #[used]
        #[unsafe(export_name = "_rjem_malloc_conf")]
        static JEMALLOC_CONF: &u8 = &$crate::allocator::MALLOC_CONF[0];
    };
}

/// Gives back at once the pages jemalloc holds freed in its arenas, rather than after
/// `dirty_decay_ms`: for the end of a load, which frees megabytes of buffers at once.
/// Does nothing when jemalloc is not the program's allocator.
pub(crate) fn purge_arenas() {
    // `MALLCTL_ARENAS_ALL`: every arena.
    control(c"arena.4096.purge");
}

/// Returns what this thread's cache holds to the arenas, where a purge can give it back.
/// For a thread of the blocking pool after load work: such a thread frees many small
/// objects (parsed manifests, listings) into its own cache, which nothing empties while
/// it idles. A load ran on 30-odd of them at once, and their caches held ~6 MB of a
/// 100-component host's memory after its start. Does nothing when jemalloc is not the
/// program's allocator.
pub(crate) fn flush_thread_cache() {
    control(c"thread.tcache.flush");
}

/// Runs a jemalloc control that takes no value and returns none.
fn control(name: &std::ffi::CStr) {
    // SAFETY: the controls used here read and write no value; jemalloc (linked through
    // `tikv-jemallocator`) only moves or releases memory no allocation holds.
    unsafe {
        jemalloc_mallctl(name.as_ptr(), std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut(), 0);
    }
}

// jemalloc's control interface, as `tikv-jemalloc-sys` (which `tikv-jemallocator` links)
// exports it, with its symbol prefix. Declared here rather than through a direct
// dependency on that crate, which would change the symbol names of this whole crate and
// with them the binary's link order (`host/link-order.txt`).
unsafe extern "C" {
    #[link_name = "_rjem_mallctl"]
    fn jemalloc_mallctl(
        name: *const std::ffi::c_char,
        old: *mut std::ffi::c_void,
        old_len: *mut usize,
        new: *mut std::ffi::c_void,
        new_len: usize,
    ) -> std::ffi::c_int;
}
