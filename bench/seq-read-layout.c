/*
 * The loads of sysbench's `memory --memory-oper=read` loop (eight 8-byte loads
 * per turn over a page-aligned block), written two ways and timed alone, for
 * bench/seq-read-layout.sh, which builds it at several code offsets and runs
 * it beside sysbench and rtlab.
 *
 *   c    a C loop of single loads, reaching the block through a thread-local
 *        pointer, as sysbench's source has it; the compiler unrolls it eight
 *        times and enters it through a jump into the unrolled body.
 *   asm  the same eight loads per turn, written out, entered at the top.
 *
 * Usage: seq-read-layout KIB c|asm   prints MiB/s over one second.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef PAD
#define PAD 0
#endif
#define STR2(x) #x
#define STR(x) STR2(x)

static size_t words;
static __thread size_t *block;

/* Code that never runs, PAD bytes of it, so that the readers after it lie
 * elsewhere in the binary. */
#if PAD > 0
__attribute__((used, noinline)) static void pad(void)
{
    __asm__ volatile(".skip " STR(PAD) ", 0x90");
}
#endif

__attribute__((noinline)) static void read_c(void)
{
    for (size_t *p = block, *end = p + words; p < end; p++) {
        size_t v;
        __asm__ volatile("movq %1, %0" : "=r"(v) : "m"(*p) : "memory");
    }
}

__attribute__((noinline)) static void read_asm(void)
{
    size_t *p = block, *end = p + words;
    __asm__ volatile("jmp 2f\n"
                     "1:\n"
                     "mov (%0), %%rcx\n mov 8(%0), %%rcx\n"
                     "mov 16(%0), %%rcx\n mov 24(%0), %%rcx\n"
                     "mov 32(%0), %%rcx\n mov 40(%0), %%rcx\n"
                     "mov 48(%0), %%rcx\n mov 56(%0), %%rcx\n"
                     "add $64, %0\n"
                     "2:\n cmp %0, %1\n ja 1b\n"
                     : "+r"(p)
                     : "r"(end)
                     : "rcx", "memory", "cc");
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[2], "c") && strcmp(argv[2], "asm"))) {
        fprintf(stderr, "usage: %s KIB c|asm\n", argv[0]);
        return 2;
    }
    size_t bytes = strtoul(argv[1], NULL, 10) << 10;
    void (*volatile reader)(void) = argv[2][0] == 'c' ? read_c : read_asm;
    if (bytes < 64 || posix_memalign((void **)&block, 4096, bytes)) {
        fprintf(stderr, "cannot allocate a block of %s KiB\n", argv[1]);
        return 2;
    }
    memset(block, 0, bytes);
    words = bytes / sizeof(size_t) / 8 * 8;
    long events = 0;
    double t0 = now(), t;
    do {
        reader();
        events++;
    } while ((t = now() - t0) < 1.0);
    printf("%.0f\n", events * (words * sizeof(size_t) / 1048576.0) / t);
    return 0;
}
