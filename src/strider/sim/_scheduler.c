/* The scheduler core's event loop, compiled (strider.sim.scheduler.run_in_order).
 *
 * Plain C (no Python.h, no NumPy headers), loaded with ctypes by strider.sim._native.
 * It is the Python loop of run_in_order statement for statement: the same events in
 * the same order, the same float operations in the same order (built with
 * -ffp-contract=off, so no fused multiply-adds), hence bit-identical start and end
 * times. tests/test_scheduler_native.py holds the two to each other on random work.
 *
 * The caller prepares the static structure with NumPy, as the Python loop does:
 *   queue[n + E]   every engine's instructions in program order, each queue ended by
 *                  the sentinel n (which never becomes ready); pos[E] where each
 *                  engine's next instruction is (updated in place);
 *   dep_at[n + 1], dependents[]  each instruction's dependents (CSR, by id);
 *   ndeps[n + 1]   unfinished dependencies (the sentinel's: 1; updated in place);
 *   wait_sem[n], wait_count[n]   a Wait's semaphore (-1: none) and count;
 *   signal_sem[n]  a Signal's semaphore (-1: none);
 *   window[2n]     (lead, interval) of a windowed PE instruction; has_window[n];
 *   demand[n]      DRAM bytes per cycle of a DMA (NULL: no shared DRAM).
 * Outputs: start, end, hold, frees, ends (frees/ends preset to occupancy/latency),
 * finished, sem_count[n_sem], and, when events is not NULL, every start (k) and
 * finish (-1 - k) in time order, their count in *n_events.
 * Returns the number of instructions that finished, or -1 when out of memory.
 *
 * strider_dependents builds dep_at and dependents from each instruction's deps.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct { double t; int64_t k; } Entry;
typedef struct { Entry *a; int64_t n, cap; } Heap;

static int before(const Entry *x, const Entry *y) {
    return x->t < y->t || (x->t == y->t && x->k < y->k);
}

static int heap_push(Heap *h, double t, int64_t k) {
    if (h->n == h->cap) {
        int64_t cap = h->cap ? 2 * h->cap : 64;
        Entry *a = (Entry *)realloc(h->a, (size_t)cap * sizeof(Entry));
        if (!a) return -1;
        h->a = a;
        h->cap = cap;
    }
    int64_t i = h->n++;
    Entry e = {t, k};
    while (i > 0) {
        int64_t p = (i - 1) / 2;
        if (!before(&e, &h->a[p])) break;
        h->a[i] = h->a[p];
        i = p;
    }
    h->a[i] = e;
    return 0;
}

static Entry heap_pop(Heap *h) {
    Entry top = h->a[0];
    Entry last = h->a[--h->n];
    int64_t i = 0, n = h->n;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && before(&h->a[c + 1], &h->a[c])) c++;
        if (!before(&h->a[c], &last)) break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (n) h->a[i] = last;
    return top;
}

/* engines waiting on a semaphore, in the order they found it short */
typedef struct { int32_t *a; int64_t n, cap; } List;

static int list_add(List *l, int32_t e) {
    if (l->n == l->cap) {
        int64_t cap = l->cap ? 2 * l->cap : 8;
        int32_t *a = (int32_t *)realloc(l->a, (size_t)cap * sizeof(int32_t));
        if (!a) return -1;
        l->a = a;
        l->cap = cap;
    }
    l->a[l->n++] = e;
    return 0;
}

typedef struct {
    /* the work */
    const int32_t *eng;
    const double *occ, *lat, *window, *demand;
    const uint8_t *has_window;
    const int64_t *queue, *dep_at, *dependents, *wait_count;
    const int32_t *wait_sem, *signal_sem;
    int64_t *pos, *ndeps;
    int has_waits;
    /* the results */
    double *start, *end, *hold, *frees, *ends;
    uint8_t *finished;
    int64_t *sem;
    int64_t *events, n_events;
    /* the state */
    uint8_t *busy;
    double *path_free;
    List *waiters;
    Heap heap;
    /* shared DRAM: a fluid with a virtual clock (strider.sim.dram.SharedDram) */
    Heap dram;
    double capacity, vt, vwall, speed, total_demand;
    int failed;
} Loop;

static void dram_start(Loop *s, double now, int64_t k, double demand, double duration) {
    s->vt += (now - s->vwall) * s->speed;
    s->vwall = now;
    double total = s->total_demand = s->total_demand + demand;
    s->speed = total > s->capacity ? s->capacity / total : 1.0;
    if (heap_push(&s->dram, s->vt + duration, k)) s->failed = 1;
}

static Entry dram_pop(Loop *s) {
    Entry e = heap_pop(&s->dram);
    double now = s->vwall + (e.t - s->vt) / s->speed;
    s->vt = e.t;
    s->vwall = now;
    if (!s->dram.n) {
        s->total_demand = 0.0;
        s->speed = 1.0;
    } else {
        double total = s->total_demand = s->total_demand - s->demand[e.k];
        s->speed = total > s->capacity ? s->capacity / total : 1.0;
    }
    e.t = now;
    return e;
}

static void try_start(Loop *s, int32_t e, double now) {
    if (s->busy[e]) return;
    int64_t p = s->pos[e];
    int64_t k = s->queue[p];
    if (s->ndeps[k]) return;   /* (the sentinel's too) */
    if (s->has_waits) {
        int32_t w = s->wait_sem[k];
        if (w >= 0 && s->sem[w] < s->wait_count[k]) {
            if (list_add(&s->waiters[w], e)) s->failed = 1;
            return;
        }
    }
    s->busy[e] = 1;
    s->pos[e] = p + 1;
    s->start[k] = now;
    if (s->events) s->events[s->n_events++] = k;
    double r = s->demand ? s->demand[k] : 0.0;
    if (r != 0.0) {
        dram_start(s, now, k, r, s->occ[k]);
        return;
    }
    double o = s->occ[k], t = s->lat[k];
    s->hold[k] = o;
    if (s->has_window && s->has_window[k]) {
        /* background weight load: the stream takes the moving path (take_moving_path) */
        double lead = s->window[2 * k], interval = s->window[2 * k + 1];
        double late = s->path_free[e] - (now + lead);
        double delay = late > 0.0 ? late : 0.0;
        s->path_free[e] = now + lead + delay + interval;
        o = lead + delay;
        t = t + delay;
        s->frees[k] = o;
        s->ends[k] = t;
        s->hold[k] = lead + delay + interval;
    }
    if (o < t && heap_push(&s->heap, now + o, -1 - k)) s->failed = 1;
    if (heap_push(&s->heap, now + t, k)) s->failed = 1;
}

int64_t strider_run_in_order(
    int64_t n, int32_t n_engines, int32_t n_sem, const int32_t *eng, const double *occ,
    const double *lat, const int64_t *queue, int64_t *pos, const int64_t *dep_at,
    const int64_t *dependents, int64_t *ndeps, const int32_t *wait_sem,
    const int64_t *wait_count, const int32_t *signal_sem, int has_waits, int has_signals,
    const double *window, const uint8_t *has_window, const double *demand, double capacity,
    double *start, double *end, double *hold, double *frees, double *ends,
    uint8_t *finished, int64_t *sem, int64_t *events, int64_t *n_events) {
    Loop s;
    memset(&s, 0, sizeof s);
    s.eng = eng; s.occ = occ; s.lat = lat; s.window = window; s.demand = demand;
    s.has_window = has_window; s.queue = queue; s.dep_at = dep_at;
    s.dependents = dependents; s.wait_count = wait_count; s.wait_sem = wait_sem;
    s.signal_sem = signal_sem; s.pos = pos; s.ndeps = ndeps; s.has_waits = has_waits;
    s.start = start; s.end = end; s.hold = hold; s.frees = frees; s.ends = ends;
    s.finished = finished; s.sem = sem; s.events = events;
    s.capacity = capacity; s.speed = 1.0;
    s.busy = (uint8_t *)calloc((size_t)n_engines + 1, 1);
    s.path_free = (double *)calloc((size_t)n_engines + 1, sizeof(double));
    s.waiters = (List *)calloc((size_t)n_sem + 1, sizeof(List));
    int64_t done = 0;
    if (!s.busy || !s.path_free || !s.waiters) { done = -1; goto out; }

    for (int32_t e = 0; e < n_engines; e++) try_start(&s, e, 0.0);
    while (!s.failed && (s.heap.n || s.dram.n)) {
        double now;
        int64_t k;
        if (s.dram.n && !(s.heap.n && s.heap.a[0].t <= s.vwall + (
                s.dram.a[0].t - s.vt) / s.speed)) {
            Entry d = dram_pop(&s);
            now = d.t;
            k = d.k;
            if (ends[k] > frees[k]) {  /* its bytes have moved; the DRAM latency follows */
                hold[k] = now - start[k];
                if (heap_push(&s.heap, now + ends[k] - frees[k], k)) { s.failed = 1; break; }
                k = -1 - k;
            }
        } else {
            Entry h = heap_pop(&s.heap);
            now = h.t;
            k = h.k;
        }
        if (k < 0) {  /* a pipelined instruction frees its engine before it finishes */
            int32_t e = eng[-1 - k];
            s.busy[e] = 0;
            if (!ndeps[queue[pos[e]]]) try_start(&s, e, now);
            continue;
        }
        end[k] = now;
        finished[k] = 1;
        done++;
        int32_t e = eng[k];
        if (frees[k] >= ends[k]) s.busy[e] = 0;
        if (events) events[s.n_events++] = -1 - k;
        if (has_signals && signal_sem[k] >= 0) {
            int32_t sm = signal_sem[k];
            sem[sm] += 1;
            List waiting = s.waiters[sm];   /* taken whole: a retry may queue anew */
            memset(&s.waiters[sm], 0, sizeof(List));
            for (int64_t i = 0; i < waiting.n; i++) try_start(&s, waiting.a[i], now);
            free(waiting.a);
        }
        for (int64_t i = dep_at[k]; i < dep_at[k + 1]; i++) {
            int64_t j = dependents[i];
            int64_t c = --ndeps[j];
            if (!c) {
                int32_t ej = eng[j];
                if (!s.busy[ej] && queue[pos[ej]] == j) try_start(&s, ej, now);
            }
        }
        if (!s.busy[e] && !ndeps[queue[pos[e]]]) try_start(&s, e, now);
    }
    if (s.failed) done = -1;
out:
    if (n_events) *n_events = s.n_events;
    if (s.waiters) for (int32_t i = 0; i < n_sem; i++) free(s.waiters[i].a);
    free(s.waiters);
    free(s.busy);
    free(s.path_free);
    free(s.heap.a);
    free(s.dram.a);
    (void)n;
    return done;
}

/* Each instruction's dependents as CSR (dep_at[n + 1], dependents[]) from the
 * dependencies of every instruction in id order (nd[n] of them each, one after the
 * other in flat[]): a counting sort, stable -- a dependency's dependents in id order,
 * as a stable argsort of flat gives them. A dependency outside [0, n) has no entry
 * (its instruction never becomes ready: the caller names the deadlock). Returns 0,
 * or -1 when out of memory. */
int strider_dependents(int64_t n, const int64_t *flat, const int64_t *nd, int64_t *dep_at,
                       int64_t *dependents) {
    int64_t m = 0;
    memset(dep_at, 0, (size_t)(n + 1) * sizeof(int64_t));
    for (int64_t k = 0; k < n; k++) m += nd[k];
    for (int64_t i = 0; i < m; i++)
        if (flat[i] >= 0 && flat[i] < n) dep_at[flat[i] + 1]++;
    for (int64_t k = 0; k < n; k++) dep_at[k + 1] += dep_at[k];
    int64_t *next = (int64_t *)malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
    if (!next) return -1;
    memcpy(next, dep_at, (size_t)n * sizeof(int64_t));
    int64_t i = 0;
    for (int64_t k = 0; k < n; k++)
        for (int64_t c = 0; c < nd[k]; c++, i++)
            if (flat[i] >= 0 && flat[i] < n) dependents[next[flat[i]]++] = k;
    free(next);
    return 0;
}
