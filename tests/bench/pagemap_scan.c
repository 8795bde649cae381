/*
 * What the kernel charges for the scan that resets a guest's linear memory after every
 * call (docs/performance.md, "The floor under a fresh instance").
 *
 * wasmtime 48 resets a pooled memory slot with one PAGEMAP_SCAN ioctl over the memory's
 * accessible bytes, asking for the pages written since the slot's image was mapped
 * (`reset_with_pagemap`, the same arguments as here), then restores those pages. This
 * program lays out memory as the math toolbox's is after a call (a Rust guest: its 1 MiB
 * stack first, then 52 KiB of data mapped privately from an image, then 12 KiB of heap;
 * one stack page, one data page and three heap pages written) and times the scan alone.
 *
 *   cc -O2 tests/bench/pagemap_scan.c -o /tmp/pagemap_scan && /tmp/pagemap_scan 1024
 *
 * The argument is the stack's size in KiB: the scanned length. Linux 6.7 or later.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* From linux/fs.h (6.7), which older distributions' headers lack. */
struct page_region {
    uint64_t start, end, categories;
};
struct pm_scan_arg {
    uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages, category_inverted, category_mask,
        category_anyof_mask, return_mask;
};
#define PAGE_IS_WRITTEN (1 << 1)
#define PAGE_IS_FILE (1 << 2)
#define PAGE_IS_PRESENT (1 << 3)
#define PAGE_IS_PFNZERO (1 << 5)
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv) {
    size_t stack = (argc > 1 ? strtoul(argv[1], NULL, 10) : 1024) * 1024;
    size_t data = 52 * 1024, heap = 12 * 1024, len = stack + data + heap;
    int pagemap = open("/proc/self/pagemap", O_RDONLY);
    int image = memfd_create("image", 0);
    if (pagemap < 0 || image < 0 || ftruncate(image, data) != 0) {
        perror("setup");
        return 1;
    }
    char *source = mmap(NULL, data, PROT_READ | PROT_WRITE, MAP_SHARED, image, 0);
    memset(source, 7, data);
    /* A slot starts on a 2 MiB boundary, as the pool's do. */
    char *reserved = mmap(NULL, len + (2 << 20), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *memory = (char *)(((uintptr_t)reserved + (2 << 20) - 1) & ~(uintptr_t)((2 << 20) - 1));
    if (mmap(memory + stack, data, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, image, 0) == MAP_FAILED) {
        perror("mmap the image");
        return 1;
    }
    volatile char sum = 0;
    for (size_t offset = 0; offset < data; offset += 4096) sum += memory[stack + offset];
    memory[stack - 100] = 1;
    memory[stack + 3 * 4096] = 1;
    for (int page = 0; page < 3; page++) memory[stack + data + page * 4096] = 1;

    struct page_region regions[32];
    struct pm_scan_arg scan = {
        .size = sizeof scan,
        .start = (uintptr_t)memory,
        .end = (uintptr_t)memory + len,
        .vec = (uintptr_t)regions,
        .vec_len = 32,
        .max_pages = (2 << 20) / 4096,
        .category_inverted = PAGE_IS_PFNZERO | PAGE_IS_FILE,
        .category_mask = PAGE_IS_WRITTEN | PAGE_IS_PRESENT | PAGE_IS_PFNZERO | PAGE_IS_FILE,
    };
    const int scans = 200000;
    long found = 0;
    double started = now_ns();
    for (int i = 0; i < scans; i++) {
        long regions_found = ioctl(pagemap, PAGEMAP_SCAN, &scan);
        if (regions_found < 0) {
            perror("PAGEMAP_SCAN");
            return 1;
        }
        found += regions_found;
    }
    double elapsed = now_ns() - started;
    printf("%zu KiB scanned: %.0f ns per scan, %ld written regions found\n", len / 1024, elapsed / scans,
           found / scans);
    return 0;
}
