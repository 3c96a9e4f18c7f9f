/* Blocked N-d permutation kernel for strider.host.
 *
 * Plain C (no Python.h, no NumPy headers): the package loads it with ctypes and
 * passes raw pointers, extents and byte strides. The caller (blocking.py) has
 * already coalesced the dims and chosen the tiles; see that module for the plan.
 *
 * Layout of a call, all dims in OUTPUT order (outermost first):
 *   n[k]   extent, is[k] input byte stride, os[k] output byte stride,
 *   elem   bytes per element (the last dim's output stride),
 *   a      the tile dim A (the input's fastest dim) or -1 ("rows" mode),
 *   ta, tb tile extents along A and along the last dim B.
 * The work is the set of tiles (A and B cut into ta/tb pieces, every other dim
 * one index at a time), numbered in output order; threads take contiguous chunks
 * of that numbering, so each writes stretches of the output.
 */
#include <stdint.h>
#include <string.h>
#include <pthread.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define STRIDER_X86 1
#endif

#define MAXD 64
#define MAXT 64

typedef struct {
    const char *src;
    char *dst;
    int nd, a, simd;
    int64_t elem, ta, tb;
    int64_t n[MAXD], is[MAXD], os[MAXD];
    int64_t ext[MAXD]; /* iteration extents: tile counts for A and B */
} plan_t;

/* Threads take chunks of tiles from a shared counter, so a thread that the OS
 * preempts (a busy machine) delays nobody: the others take its share. */
typedef struct {
    const plan_t *p;
    int64_t nwork, chunk;
    int64_t next; /* atomic */
} job_t;

/* ---- scalar tiles: out[i, j] = in[i, j], i along A (rows of the output), j along B ---- */

#define SCALAR_TILE(NAME, T)                                                             \
    static void NAME(const char *s, char *d, int64_t na, int64_t nb, int64_t isa,        \
                     int64_t isb, int64_t osa) {                                         \
        for (int64_t i = 0; i < na; i++) {                                               \
            const char *sp = s + i * isa;                                                \
            char *dp = d + i * osa;                                                      \
            for (int64_t j = 0; j < nb; j++) {                                           \
                T v;                                                                     \
                memcpy(&v, sp + j * isb, sizeof(T));                                     \
                memcpy(dp + j * (int64_t)sizeof(T), &v, sizeof(T));                      \
            }                                                                            \
        }                                                                                \
    }

typedef struct { uint64_t lo, hi; } b16_t;
SCALAR_TILE(tile_1, uint8_t)
SCALAR_TILE(tile_2, uint16_t)
SCALAR_TILE(tile_4, uint32_t)
SCALAR_TILE(tile_8, uint64_t)
SCALAR_TILE(tile_16, b16_t)

static void tile_any(const char *s, char *d, int64_t na, int64_t nb, int64_t isa,
                     int64_t isb, int64_t osa, int64_t elem) {
    for (int64_t i = 0; i < na; i++) {
        const char *sp = s + i * isa;
        char *dp = d + i * osa;
        if (isb == elem) {
            memcpy(dp, sp, (size_t)(nb * elem));
        } else {
            for (int64_t j = 0; j < nb; j++) memcpy(dp + j * elem, sp + j * isb, (size_t)elem);
        }
    }
}

static void tile_scalar(const char *s, char *d, int64_t na, int64_t nb, int64_t isa,
                        int64_t isb, int64_t osa, int64_t elem) {
    if (isb == elem) { /* rows contiguous on both sides */
        for (int64_t i = 0; i < na; i++) memcpy(d + i * osa, s + i * isa, (size_t)(nb * elem));
        return;
    }
    switch (elem) {
    case 1: tile_1(s, d, na, nb, isa, isb, osa); break;
    case 2: tile_2(s, d, na, nb, isa, isb, osa); break;
    case 4: tile_4(s, d, na, nb, isa, isb, osa); break;
    case 8: tile_8(s, d, na, nb, isa, isb, osa); break;
    case 16: tile_16(s, d, na, nb, isa, isb, osa); break;
    default: tile_any(s, d, na, nb, isa, isb, osa, elem);
    }
}

#ifdef STRIDER_X86
/* ---- AVX2 tiles: input contiguous along A (isa == elem), output contiguous along B ----
 * Micro-kernels read 32 bytes from each of 16 (8) input rows and write 64 bytes
 * (a cache line) to each of 8 (4) output rows. Shuffles move bits, never convert.
 * Streaming stores and software prefetch of the tile were measured on the 2-core
 * development VM and lost or tied against plain stores with 256x256-float tiles. */

#define AVX2 __attribute__((target("avx2")))

AVX2 static inline void st256(char *p, __m256 v) { _mm256_storeu_ps((float *)p, v); }

AVX2 static inline void tr8x8_ps(const char *s, int64_t isb, char *d, int64_t osa) {
    __m256 r0 = _mm256_loadu_ps((const float *)(s + 0 * isb));
    __m256 r1 = _mm256_loadu_ps((const float *)(s + 1 * isb));
    __m256 r2 = _mm256_loadu_ps((const float *)(s + 2 * isb));
    __m256 r3 = _mm256_loadu_ps((const float *)(s + 3 * isb));
    __m256 r4 = _mm256_loadu_ps((const float *)(s + 4 * isb));
    __m256 r5 = _mm256_loadu_ps((const float *)(s + 5 * isb));
    __m256 r6 = _mm256_loadu_ps((const float *)(s + 6 * isb));
    __m256 r7 = _mm256_loadu_ps((const float *)(s + 7 * isb));
    __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
    __m256 u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
    __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
    __m256 u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
    __m256 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
    __m256 u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
    __m256 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
    __m256 u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
    st256(d + 0 * osa, _mm256_permute2f128_ps(u0, u4, 0x20));
    st256(d + 1 * osa, _mm256_permute2f128_ps(u1, u5, 0x20));
    st256(d + 2 * osa, _mm256_permute2f128_ps(u2, u6, 0x20));
    st256(d + 3 * osa, _mm256_permute2f128_ps(u3, u7, 0x20));
    st256(d + 4 * osa, _mm256_permute2f128_ps(u0, u4, 0x31));
    st256(d + 5 * osa, _mm256_permute2f128_ps(u1, u5, 0x31));
    st256(d + 6 * osa, _mm256_permute2f128_ps(u2, u6, 0x31));
    st256(d + 7 * osa, _mm256_permute2f128_ps(u3, u7, 0x31));
}

AVX2 static inline void tr4x4_pd(const char *s, int64_t isb, char *d, int64_t osa) {
    __m256d r0 = _mm256_loadu_pd((const double *)(s + 0 * isb));
    __m256d r1 = _mm256_loadu_pd((const double *)(s + 1 * isb));
    __m256d r2 = _mm256_loadu_pd((const double *)(s + 2 * isb));
    __m256d r3 = _mm256_loadu_pd((const double *)(s + 3 * isb));
    __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
    __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
    st256(d + 0 * osa, _mm256_castpd_ps(_mm256_permute2f128_pd(t0, t2, 0x20)));
    st256(d + 1 * osa, _mm256_castpd_ps(_mm256_permute2f128_pd(t1, t3, 0x20)));
    st256(d + 2 * osa, _mm256_castpd_ps(_mm256_permute2f128_pd(t0, t2, 0x31)));
    st256(d + 3 * osa, _mm256_castpd_ps(_mm256_permute2f128_pd(t1, t3, 0x31)));
}

/* One tile with AVX2 micro-kernels; B outer so each group of input rows is streamed
 * along A while its output lines are completed in one go. Ragged edges: scalar. */
AVX2 static inline void micro_avx2(const char *sp, int64_t isb, char *dp, int64_t osa,
                                   int64_t elem) {
    if (elem == 4) {
        tr8x8_ps(sp, isb, dp, osa);
        tr8x8_ps(sp + 8 * isb, isb, dp + 32, osa);
    } else {
        tr4x4_pd(sp, isb, dp, osa);
        tr4x4_pd(sp + 4 * isb, isb, dp + 32, osa);
    }
}

/* One tile with AVX2 micro-kernels, output rows outer so each output row is written
 * as one sequential run; the tile's input rows stay in L2 meanwhile. Edges: scalar. */
AVX2 static void tile_avx2(const char *s, char *d, int64_t na, int64_t nb, int64_t isb,
                           int64_t osa, int64_t elem) {
    const int64_t mi = elem == 4 ? 8 : 4;   /* micro rows along A */
    const int64_t mj = 2 * mi;              /* micro columns along B: 64 bytes */
    int64_t nb_full = nb - nb % mj, na_full = na - na % mi;
    for (int64_t i = 0; i < na_full; i += mi)
        for (int64_t j = 0; j < nb_full; j += mj)
            micro_avx2(s + i * elem + j * isb, isb, d + i * osa + j * elem, osa, elem);
    if (nb_full < nb)
        tile_scalar(s + nb_full * isb, d + nb_full * elem, na_full, nb - nb_full, elem, isb,
                    osa, elem);
    if (na_full < na)
        tile_scalar(s + na_full * elem, d + na_full * osa, na - na_full, nb, elem, isb, osa,
                    elem);
}
#endif

/* ---- the work loop ---- */

static void run_range(const plan_t *p, int64_t w0, int64_t w1) {
    int64_t idx[MAXD];
    const int nd = p->nd, last = nd - 1, a = p->a;
    int64_t rem = w0;
    for (int k = nd - 1; k >= 0; k--) {
        idx[k] = rem % p->ext[k];
        rem /= p->ext[k];
    }
    const int64_t elem = p->elem, isb = p->is[last];
    for (int64_t w = w0; w < w1; w++) {
        const char *s = p->src;
        char *d = p->dst;
        int64_t na = 1, nb;
        for (int k = 0; k < nd; k++) {
            int64_t step = (k == a) ? p->ta : (k == last) ? p->tb : 1;
            s += idx[k] * step * p->is[k];
            d += idx[k] * step * p->os[k];
        }
        nb = p->n[last] - idx[last] * p->tb;
        if (nb > p->tb) nb = p->tb;
        if (a < 0) {
            tile_scalar(s, d, 1, nb, 0, isb, 0, elem);
        } else {
            na = p->n[a] - idx[a] * p->ta;
            if (na > p->ta) na = p->ta;
#ifdef STRIDER_X86
            if (p->simd >= 1 && (elem == 4 || elem == 8) && p->is[a] == elem)
                tile_avx2(s, d, na, nb, isb, p->os[a], elem);
            else
#endif
                tile_scalar(s, d, na, nb, p->is[a], isb, p->os[a], elem);
        }
        for (int k = nd - 1; k >= 0; k--) { /* odometer step, output order */
            if (++idx[k] < p->ext[k]) break;
            idx[k] = 0;
        }
    }
}

static void *run_job(void *arg) {
    job_t *j = (job_t *)arg;
    for (;;) {
        int64_t w0 = __atomic_fetch_add(&j->next, j->chunk, __ATOMIC_RELAXED);
        if (w0 >= j->nwork) break;
        run_range(j->p, w0, w0 + j->chunk < j->nwork ? w0 + j->chunk : j->nwork);
    }
    return NULL;
}

/* The best SIMD level this CPU offers: 0 none, 1 AVX2. */
int strider_simd_level(void) {
#ifdef STRIDER_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) return 1;
#endif
    return 0;
}

/* Run a plan; returns 0 on success, a negative code for an argument it cannot take. */
int strider_permute(const char *src, char *dst, int nd, const int64_t *n, const int64_t *is,
                    const int64_t *os, int64_t elem, int a, int64_t ta, int64_t tb,
                    int nthreads, int simd) {
    plan_t p;
    if (nd < 1 || nd > MAXD || elem < 1 || ta < 1 || tb < 1 || a >= nd - 1) return -1;
    if (simd > strider_simd_level()) simd = strider_simd_level();
    p.src = src; p.dst = dst; p.nd = nd; p.a = a; p.elem = elem;
    p.ta = ta; p.tb = tb; p.simd = simd;
    int64_t nwork = 1;
    for (int k = 0; k < nd; k++) {
        if (n[k] < 1) return 0;
        p.n[k] = n[k]; p.is[k] = is[k]; p.os[k] = os[k];
        int64_t t = (k == a) ? ta : (k == nd - 1) ? tb : 1;
        p.ext[k] = (n[k] + t - 1) / t;
        nwork *= p.ext[k];
    }
    if (nthreads < 1) nthreads = 1;
    if (nthreads > MAXT) nthreads = MAXT;
    if (nthreads > nwork) nthreads = (int)nwork;
    pthread_t th[MAXT];
    int started[MAXT];
    job_t job;
    job.p = &p;
    job.nwork = nwork;
    job.chunk = nwork / (16 * (int64_t)nthreads);
    if (job.chunk < 1) job.chunk = 1;
    job.next = 0;
    for (int t = 1; t < nthreads; t++)
        started[t] = pthread_create(&th[t], NULL, run_job, &job) == 0;
    run_job(&job); /* returns once every chunk is taken, even if no thread started */
    for (int t = 1; t < nthreads; t++)
        if (started[t]) pthread_join(th[t], NULL);
    return 0;
}
