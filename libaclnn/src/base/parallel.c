/*
 * parallel.c - a persistent thread pool behind nn_parallel_for.
 *
 * nn_num_threads() threads in all: the caller plus (count - 1) workers created on first use and
 * kept asleep on a condition variable between jobs, so a call costs a wake-up, not a thread
 * creation.  A job is cut into `parts` equal ranges (the cut depends only on n, grain and the
 * thread count); the caller and the workers take ranges from a shared counter until none are
 * left, then the caller waits for the last one to finish.
 *
 * Before waking the workers the caller keeps them off its own CPU (steer_workers below), so a
 * scheduler that would stack a woken worker behind the caller cannot turn a 2-thread job into a
 * 1-thread one.
 *
 * Only one job uses the pool at a time.  A call that finds the pool busy - another stream's
 * kernel, or a nested call from inside a range - runs its whole range inline on its own thread,
 * which is always correct because ranges are independent.
 *
 * The workers are stopped and joined at library unload so leak checkers see no live threads.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "nn_base.h"

#define NN_MAX_THREADS 256

static pthread_once_t threads_once = PTHREAD_ONCE_INIT;
static int thread_count = 1;

static void read_thread_count(void)
{
    const char *env = getenv("ACLNN_NUM_THREADS");
    if (env != NULL && env[0] != '\0') {
        char *end;
        long value = strtol(env, &end, 10);
        if (*end == '\0' && value >= 1) {
            thread_count = value > NN_MAX_THREADS ? NN_MAX_THREADS : (int)value;
            return;
        }
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    int cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    thread_count = cores < 1 ? 1 : (cores > NN_MAX_THREADS ? NN_MAX_THREADS : cores);
}

int nn_num_threads(void)
{
    pthread_once(&threads_once, read_thread_count);
    return thread_count;
}

/* ---- the pool ------------------------------------------------------------------------------ */

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;        /* workers wait here for a new generation */
    pthread_cond_t done;        /* the caller waits here for the last range */
    pthread_t workers[NN_MAX_THREADS];
    int num_workers;
    bool started;
    bool steering;              /* steer_workers before each job (ACLNN_STEER_WORKERS=0: no) */
    bool stopping;
    uint64_t generation;        /* bumped once per job */
    bool job_open;              /* workers may still join the current job */
    int active;                 /* workers inside run_parts for the current job */

    /* The current job (written by the caller before bumping the generation). */
    nn_range_fn fn;
    void *ctx;
    int64_t n, chunk, parts;
    atomic_int_fast64_t next_part;

    /* What the workers' affinity was last set from (steer_workers): the caller's CPU and mask. */
    int steered_cpu;
    cpu_set_t steered_mask;
} nn_pool;

static nn_pool pool = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
    .done = PTHREAD_COND_INITIALIZER,
    .steered_cpu = -1,
};

/* Held by the one caller that owns the pool for a job; try-locked so a busy pool means inline. */
static pthread_mutex_t pool_owner = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

/* ---- small work stays on the calling thread (nn_base.h: nn_parallel_small_work) ------------- */

static pthread_once_t small_once = PTHREAD_ONCE_INIT;
static int64_t small_work_bytes = NN_SMALL_WORK_BYTES;
static _Thread_local bool serial_here; /* this thread's jobs run inline (a small launch) */

static void read_small_work_bytes(void)
{
    const char *env = getenv("ACLNN_SMALL_WORK_BYTES");
    if (env != NULL && env[0] != '\0') {
        char *end;
        long long value = strtoll(env, &end, 10);
        if (*end == '\0' && value >= 0)
            small_work_bytes = value;
    }
}

bool nn_parallel_small_work(int64_t bytes)
{
    pthread_once(&small_once, read_small_work_bytes);
    return bytes < small_work_bytes;
}

bool nn_parallel_set_serial(bool serial)
{
    const bool before = serial_here;
    serial_here = serial;
    return before;
}

/* Runs ranges of the current job until none are left.  The job fields are only read by a
 * thread counted in `active` (or the caller), and the caller rewrites them only after the
 * previous job is closed with active == 0, so no thread can run a stale job. */
static void run_parts(void)
{
    for (;;) {
        int64_t part = atomic_fetch_add(&pool.next_part, 1);
        if (part >= pool.parts)
            return;
        int64_t begin = part * pool.chunk;
        int64_t end = begin + pool.chunk < pool.n ? begin + pool.chunk : pool.n;
        pool.fn(pool.ctx, begin, end);
    }
}

static void *worker_main(void *unused)
{
    (void)unused;
    uint64_t seen = 0;
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        while (pool.generation == seen && !pool.stopping)
            pthread_cond_wait(&pool.wake, &pool.lock);
        if (pool.stopping)
            break;
        seen = pool.generation;
        if (!pool.job_open)
            continue; /* woke after the job was finished and closed */
        pool.active++;
        pthread_mutex_unlock(&pool.lock);
        run_parts();
        pthread_mutex_lock(&pool.lock);
        if (--pool.active == 0)
            pthread_cond_signal(&pool.done);
    }
    pthread_mutex_unlock(&pool.lock);
    return NULL;
}

static void start_pool(void)
{
    int workers = nn_num_threads() - 1;
    const char *steer = getenv("ACLNN_STEER_WORKERS");
    pthread_mutex_lock(&pool.lock);
    pool.steering = !(steer != NULL && steer[0] == '0' && steer[1] == '\0');
    for (int i = 0; i < workers; i++) {
        if (pthread_create(&pool.workers[i], NULL, worker_main, NULL) != 0)
            break; /* fewer workers just means less parallelism */
        pool.num_workers++;
    }
    pool.started = true;
    pthread_mutex_unlock(&pool.lock);
}

__attribute__((destructor)) static void stop_pool(void)
{
    pthread_mutex_lock(&pool_owner); /* waits for a job in flight */
    pthread_mutex_lock(&pool.lock);
    pool.stopping = true;
    pthread_cond_broadcast(&pool.wake);
    int workers = pool.num_workers;
    pool.num_workers = 0;
    pthread_mutex_unlock(&pool.lock);
    for (int i = 0; i < workers; i++)
        pthread_join(pool.workers[i], NULL);
    pthread_mutex_unlock(&pool_owner);
}

/* Lets the workers run on any CPU the caller may use except the one it is on.  Why: a
 * scheduler may place a woken thread on the waker's CPU rather than on one that has been idle
 * for a while (seen on a VM kernel that packs tasks onto few vCPUs: after ~5-10 ms of idling the
 * worker was queued behind the caller, which then computed for a whole time slice, ~3 ms,
 * before the worker ran - a 2-thread col2im took as long as a 1-thread one).  The caller computes
 * a share itself, so its CPU is taken anyway.  Only when there is a CPU for every worker besides
 * the caller's (an oversubscribed pool keeps every CPU), and only when the caller's CPU or mask
 * changed since the last job, so a steady caller pays one sched_getaffinity per job. */
static void steer_workers(void)
{
    const int cpu = sched_getcpu();
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (cpu < 0 || sched_getaffinity(0, sizeof mask, &mask) != 0 || !CPU_ISSET(cpu, &mask))
        return;
    if (cpu == pool.steered_cpu && CPU_EQUAL(&mask, &pool.steered_mask))
        return;
    pool.steered_cpu = cpu;
    pool.steered_mask = mask;
    cpu_set_t others = mask;
    CPU_CLR(cpu, &others);
    const cpu_set_t *target = CPU_COUNT(&others) >= pool.num_workers ? &others : &mask;
    for (int i = 0; i < pool.num_workers; i++)
        pthread_setaffinity_np(pool.workers[i], sizeof *target, target); /* best effort */
}

void nn_parallel_for(int64_t n, int64_t grain, nn_range_fn fn, void *ctx)
{
    if (n <= 0)
        return;
    if (grain < 1)
        grain = 1;
    int64_t threads = nn_num_threads();
    int64_t parts = n / grain;
    if (parts > threads)
        parts = threads;
    if (parts <= 1 || serial_here) {
        fn(ctx, 0, n);
        return;
    }
    if (pthread_mutex_trylock(&pool_owner) != 0) {
        fn(ctx, 0, n); /* pool busy (another stream, or nested): inline is always correct */
        return;
    }
    pthread_once(&pool_once, start_pool);
    if (pool.stopping || pool.num_workers == 0) {
        pthread_mutex_unlock(&pool_owner);
        fn(ctx, 0, n);
        return;
    }

    int64_t chunk = (n + parts - 1) / parts;
    parts = (n + chunk - 1) / chunk;
    pthread_mutex_lock(&pool.lock);
    pool.fn = fn;
    pool.ctx = ctx;
    pool.n = n;
    pool.chunk = chunk;
    pool.parts = parts;
    atomic_store(&pool.next_part, 0);
    pool.job_open = true;
    if (pool.steering)
        steer_workers();
    pool.generation++;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);

    run_parts();

    /* Every part has been claimed; wait for the workers still running one to leave.  (A
     * worker signals `done` when the active count drops to zero.) */
    pthread_mutex_lock(&pool.lock);
    pool.job_open = false;
    while (pool.active > 0)
        pthread_cond_wait(&pool.done, &pool.lock);
    pthread_mutex_unlock(&pool.lock);
    pthread_mutex_unlock(&pool_owner);
}

/* ---- guided claims (nn_base.h) ------------------------------------------------------------ */

void nn_guided_claims_init(nn_guided_claims *c, int64_t total, int64_t unit)
{
    c->total = total;
    c->unit = unit > 0 ? unit : 1;
    c->threads = nn_num_threads() > 0 ? nn_num_threads() : 1;
    c->next = 0;
    c->owner = (unsigned long)pthread_self();
}

bool nn_guided_claim_next(nn_guided_claims *c, int64_t *first, int64_t *last)
{
    const bool owner = pthread_equal(pthread_self(), (pthread_t)c->owner) != 0;
    int64_t start = __atomic_load_n(&c->next, __ATOMIC_RELAXED);
    for (;;) {
        const int64_t left = c->total - start;
        if (left <= 0 || (!owner && left <= c->unit))
            return false;
        int64_t take = left / (4 * c->threads) / c->unit * c->unit;
        if (take < c->unit)
            take = c->unit;
        if (take > left)
            take = left;
        if (__atomic_compare_exchange_n(&c->next, &start, start + take, false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
            *first = start;
            *last = start + take;
            return true;
        }
    }
}
