/*
 * sysbench's sequential read (`memory --memory-oper=read --memory-access-mode=seq`)
 * as Debian's sysbench 1.0.20 binary runs it, timed alone, for
 * bench/seq-read-layout.sh, which builds it with the loop at several places
 * in a page of code and runs each build beside sysbench and rtlab.
 *
 * The reader is the instruction sequence of sysbench's compiled
 * `event_seq_read` (gcc 12 at -O2), transcribed: one load, the remainder of
 * the word count modulo eight reached by a chain of compares, then eight
 * 8-byte loads per turn of the loop. It is placed so that the top of the loop
 * lies LOOP_AT bytes into a 4 KiB page of code (sysbench's own lies at 0x90a,
 * ten bytes into a 64-byte line). Only the place changes from build to build,
 * never an instruction.
 *
 * Usage: seq-read-layout KIB   prints MiB/s over one second.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef LOOP_AT
#define LOOP_AT 0x90a
#endif
/* Bytes from the reader's first instruction to the loop's top, as the
 * assembler encodes the prologue below; the reader starts that far before
 * LOOP_AT (in the page before, for a loop near the start of a page). */
#define PROLOGUE 0x7f
#if LOOP_AT < 0 || LOOP_AT >= 4096
#error "LOOP_AT must lie in 0..0xfff"
#endif
#define STR2(x) #x
#define STR(x) STR2(x)

static size_t words;
static size_t *block;
/* The top of the loop, a label in the reader below. */
extern const char seq_read_loop[];

__attribute__((noinline)) static void read_block(void)
{
    size_t *p = block, *end = p + words;
    __asm__ volatile(
        "cmp %%rdx, %%rsi\n jae 9f\n"
        ".p2align 12\n .skip (" STR(LOOP_AT) " - " STR(PROLOGUE) " + 4096) %% 4096, 0x90\n"
        "mov %%rsi, %%rcx\n not %%rcx\n add %%rdx, %%rcx\n shr $3, %%rcx\n and $7, %%ecx\n"
        "mov (%%rsi), %%rax\n lea 8(%%rsi), %%rdi\n cmp %%rdi, %%rdx\n jbe 9f\n"
        "test %%rcx, %%rcx\n je 8f\n"
        "cmp $1, %%rcx\n je 1f\n cmp $2, %%rcx\n je 2f\n cmp $3, %%rcx\n je 3f\n"
        "cmp $4, %%rcx\n je 4f\n cmp $5, %%rcx\n je 5f\n cmp $6, %%rcx\n je 6f\n"
        "mov (%%rdi), %%rax\n lea 16(%%rsi), %%rdi\n"
        "6: mov (%%rdi), %%rcx\n add $8, %%rdi\n"
        "5: mov (%%rdi), %%rcx\n add $8, %%rdi\n"
        "4: mov (%%rdi), %%rcx\n add $8, %%rdi\n"
        "3: mov (%%rdi), %%rcx\n add $8, %%rdi\n"
        "2: mov (%%rdi), %%rcx\n add $8, %%rdi\n"
        "1: mov (%%rdi), %%rcx\n add $8, %%rdi\n"
        "cmp %%rdi, %%rdx\n jbe 9f\n"
        ".globl seq_read_loop\n seq_read_loop:\n"
        "8: mov (%%rdi), %%rcx\n mov 8(%%rdi), %%rcx\n mov 16(%%rdi), %%rcx\n"
        "mov 24(%%rdi), %%rcx\n mov 32(%%rdi), %%rcx\n mov 40(%%rdi), %%rcx\n"
        "mov 48(%%rdi), %%rcx\n mov 56(%%rdi), %%rcx\n"
        "add $64, %%rdi\n cmp %%rdi, %%rdx\n ja 8b\n"
        "9:\n"
        : "+S"(p)
        : "d"(end)
        : "rax", "rcx", "rdi", "memory", "cc");
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s KIB\n", argv[0]);
        return 2;
    }
    if ((uintptr_t)seq_read_loop % 4096 != LOOP_AT) {
        fprintf(stderr, "the loop lies at 0x%lx in its page, not at 0x%x: fix PROLOGUE\n",
                (unsigned long)((uintptr_t)seq_read_loop % 4096), LOOP_AT);
        return 2;
    }
    size_t bytes = strtoul(argv[1], NULL, 10) << 10;
    if (bytes < 64 || posix_memalign((void **)&block, 4096, bytes)) {
        fprintf(stderr, "cannot allocate a block of %s KiB\n", argv[1]);
        return 2;
    }
    memset(block, 0, bytes);
    words = bytes / sizeof(size_t);
    long events = 0;
    double t0 = now(), t;
    do {
        read_block();
        events++;
    } while ((t = now() - t0) < 1.0);
    printf("%.0f\n", events * (bytes / 1048576.0) / t);
    return 0;
}
