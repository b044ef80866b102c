/*
 * nn_base.h - the bottom layer: what every other layer may use, knowing no operator, no
 * tensor object and no stream.
 *
 *   - errors in CANN's format and the recent message  (status.c: nn_error)
 *   - logging and the launch trace's level            (log.c: nn_log)
 *   - dtypes, formats, fp16/bf16 <-> fp32            (dtype.c, nn_half_impl.h)
 *   - splitting independent work over threads        (parallel.c: nn_parallel_for)
 *   - strided <-> contiguous and streaming copies    (copy.c)
 *   - shape helpers                                  (shape.c: nn_numel, nn_shape_str)
 *   - CPU features and SIMD lane helpers             (cpu.c, nn_simd.h)
 *
 * Needs only the public headers (libaclnn/include).  Its .c files include their headers by
 * relative name, so a test program can compile one directly (tests/c/test_core_*).
 * All symbols here are internal (the library is built with -fvisibility=hidden); only the
 * CANN names declared in include/ are exported.
 */
#ifndef NN_BASE_H
#define NN_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
#include "aclnn/opdev/op_errno.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the definition of a public CANN symbol (the build hides everything else). */
#define NN_EXPORT __attribute__((visibility("default")))

/* ------------------------------------------------------------------------------------------ */
/* Errors: a per-thread "recent error" text in CANN's format, read by aclGetRecentErrMsg.      */
/* ------------------------------------------------------------------------------------------ */

/* Records `fmt` as the newest recent-error message of this thread and returns `code`, so that
 * a check reads `return nn_error(ACLNN_ERR_PARAM_INVALID, "aclnnIm2col: kernelSize ...");`.
 * The text gets CANN's prefix: `[PID:n] YYYY-MM-DD-hh:mm:ss.mmm.uuu <Title>(<EZcode>): `
 * where the title/code follow the status class (16xxxx -> AclNN_Parameter_Error(EZ1001),
 * 36xxxx -> AclNN_Runtime_Error(EZ9903), 56xxxx -> AclNN_Inner_Error(EZ9999), ACL runtime
 * 1xxxxx -> Acl_Parameter_Error(EH0001), other runtime codes -> Acl_Runtime_Error(EE9999)).
 * The message is also logged at ERROR level. Messages are joined newest first with '\n'. */
int nn_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int nn_verror(int code, const char *fmt, va_list args);

/* Takes (returns and clears) this thread's recent-error text; NULL when there is none.  The
 * pointer stays valid until the next nn_error_take on this thread. */
const char *nn_error_take(void);

/* Copies this thread's pending message (without clearing it) into buf; "" when none. */
void nn_error_peek(char *buf, size_t buf_size);

/* Adds an already-formatted full message (prefix included) as this thread's newest one; used
 * to hand a stream worker's error to the thread that synchronizes. */
void nn_error_push_raw(const char *message);
/* Calls `observer` with the code and the text of every error nn_error records from now on (NULL:
 * none).  The checking mode reports failed calls through it (check.c); base knows no more. */
void nn_error_set_observer(void (*observer)(int code, const char *text));

/* ------------------------------------------------------------------------------------------ */
/* Logging (ASCEND_GLOBAL_LOG_LEVEL, ASCEND_SLOG_PRINT_TO_STDOUT / ASCEND_LOG_PRINT_TO_STDOUT)  */
/* ------------------------------------------------------------------------------------------ */

enum { NN_LOG_DEBUG = 0, NN_LOG_INFO = 1, NN_LOG_WARNING = 2, NN_LOG_ERROR = 3, NN_LOG_NULL = 4 };

bool nn_log_enabled(int level);
void nn_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* mkdir -p (mode 0750) of a path the function may modify while it walks it (restored on
 * return); false when a directory cannot be made (errno says why). */
bool nn_make_dirs(char *path);
/* write(2) until all `bytes` are written (EINTR retried); false on an error (errno says which). */
bool nn_write_all(int fd, const void *data, size_t bytes);

/* ------------------------------------------------------------------------------------------ */
/* Data types                                                                                  */
/* ------------------------------------------------------------------------------------------ */

/* Element size in bytes of the dtypes tensors may hold; 0 for dtypes a tensor cannot hold
 * (ACL_STRING, ACL_DT_UNDEFINED, unknown values). */
size_t nn_dtype_size(aclDataType dtype);
/* "FLOAT", "FLOAT16", "BFLOAT16", ... as CANN prints them; "UNKNOWN" otherwise. */
const char *nn_dtype_name(aclDataType dtype);
bool nn_dtype_is_known(aclDataType dtype);
const char *nn_format_name(aclFormat format);
bool nn_format_is_known(aclFormat format);
/* The formats that exist only on the NPU (CANN's IsPrivateFormat: NC1HWC0, FRACTAL_Z,
 * NC1HWC0_C04, FRACTAL_NZ, NDC1HWC0, FRACTAL_Z_3D, FRACTAL_NZ_C0_x), which these operators
 * reject; unknown values count as private too, so they are rejected rather than guessed at. */
bool nn_format_is_private(aclFormat format);

/* ceil(a / b) for a >= 0, b > 0, without the overflow of (a + b - 1) / b when b is huge (a
 * stride of INT64_MAX is a valid attribute). */
static inline int64_t nn_ceil_div(int64_t a, int64_t b)
{
    return a > 0 ? (a - 1) / b + 1 : 0;
}

/* floor(a / b) for b > 0 (C's '/' truncates toward zero). */
static inline int64_t nn_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* IEEE conversions, round to nearest even, Inf/NaN preserved (unlike the public
 * aclFloatToFloat16, which saturates as CANN documents). */
float nn_f16_to_f32(uint16_t h);
uint16_t nn_f32_to_f16(float f);
float nn_bf16_to_f32(uint16_t b);
uint16_t nn_f32_to_bf16(float f);
/* Row conversions; use F16C / AVX-512 when the CPU has them (chosen once at run time). */
void nn_f16_to_f32_n(const uint16_t *src, float *dst, size_t n);
void nn_f32_to_f16_n(const float *src, uint16_t *dst, size_t n);
void nn_bf16_to_f32_n(const uint16_t *src, float *dst, size_t n);
void nn_f32_to_bf16_n(const float *src, uint16_t *dst, size_t n);
/* Saturation mode (nn_overflow_saturates): round to nearest even, then an Inf result becomes
 * the largest finite value of its sign and a NaN result +0 (nn_half_impl.h holds the rule). */
uint16_t nn_f32_to_f16_sat(float f);
void nn_f32_to_f16_sat_n(const float *src, uint16_t *dst, size_t n);
/* The same rule applied in place to fp16 / bf16 results already rounded (the executor's
 * post-pass over computed outputs). */
void nn_f16_saturate_n(uint16_t *h, size_t n);
void nn_bf16_saturate_n(uint16_t *b, size_t n);
/* A FLOAT / FLOAT16 / BFLOAT16 row to fp32 and back (round to nearest even); fp32 is copied
 * (nothing to do when src and dst are the same buffer). */
static inline void nn_to_f32_n(aclDataType dtype, const void *src, float *dst, size_t n)
{
    if (dtype == ACL_FLOAT16) {
        nn_f16_to_f32_n((const uint16_t *)src, dst, n);
    } else if (dtype == ACL_BF16) {
        nn_bf16_to_f32_n((const uint16_t *)src, dst, n);
    } else if ((const void *)dst != src) {
        memcpy(dst, src, n * sizeof(float));
    }
}

static inline void nn_from_f32_n(aclDataType dtype, const float *src, void *dst, size_t n)
{
    if (dtype == ACL_FLOAT16) {
        nn_f32_to_f16_n(src, (uint16_t *)dst, n);
    } else if (dtype == ACL_BF16) {
        nn_f32_to_bf16_n(src, (uint16_t *)dst, n);
    } else if ((const void *)dst != (const void *)src) {
        memcpy(dst, src, n * sizeof(float));
    }
}

/* ------------------------------------------------------------------------------------------ */
/* CPU features (cpu.c): the one table every kernel choice reads                               */
/* ------------------------------------------------------------------------------------------ */

/* What this CPU can run and the environment allows, decided once per process:
 * ACLNN_NO_SIMD=1 turns every field off (portable loops everywhere), ACLNN_NO_AVX512=1 the
 * AVX-512 ones (the AVX2 tier), ACLNN_NO_AVX512FP16=1 avx512fp16 alone.  A kernel file compiled for an instruction set is called only
 * when its field is true. */
typedef struct nn_cpu_features {
    bool avx;        /* AVX: 256-bit (streaming) stores */
    bool avx2;       /* AVX2 and F16C: the second tier of fast paths */
    bool avx512;     /* AVX-512 F, BW, VL and DQ (implies avx2) */
    bool avx512bf16; /* avx512 and AVX512-BF16 (vcvtne2ps2bf16) */
    bool avx512fp16; /* avx512 and AVX512-FP16 (vcmpph), unless ACLNN_NO_AVX512FP16=1 */
} nn_cpu_features;

const nn_cpu_features *nn_cpu_features_get(void);
/* Shorthands for the fields. */
bool nn_cpu_avx(void);
bool nn_cpu_avx2(void);
bool nn_cpu_avx512(void);
bool nn_cpu_avx512bf16(void);
bool nn_cpu_avx512fp16(void);
/* "avx512", "avx2" or "portable": the best tier the table allows (for the launch trace). */
const char *nn_cpu_tier_name(void);

/* ------------------------------------------------------------------------------------------ */
/* Threads                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* Threads the pool uses: ACLNN_NUM_THREADS if set (>= 1), else the cores this process may use. */
int nn_num_threads(void);

/* Calls fn(ctx, begin, end) over disjoint ranges covering [0, n), each at least `grain` long
 * (except possibly the last), spread over the pool; returns when all are done.  Ranges must be
 * independent: the split depends on the thread count, so a kernel must never let it change a
 * result.  Safe to call from several streams at once (a busy pool runs the work inline). */
typedef void (*nn_range_fn)(void *ctx, int64_t begin, int64_t end);
void nn_parallel_for(int64_t n, int64_t grain, nn_range_fn fn, void *ctx);

/* Small work runs on the calling thread alone.  Waking a pool worker costs ~20 us on a VM, and
 * far more when the worker's CPU is taken - by PyTorch's OpenMP threads, say, which spin between
 * their own ops: examples/train_cnn.py's converted model, whose calls each move 0.1-1.1 MB, ran
 * slower with 2 threads than with 1 while torch.nn's step halved.  So a launch that moves less
 * than NN_SMALL_WORK_BYTES (ACLNN_SMALL_WORK_BYTES overrides it; 0: always use the pool) keeps
 * its kernel on its own thread: nn_parallel_small_work(bytes) says whether a launch moving
 * `bytes` is small; nn_parallel_set_serial(true) makes the calling thread's nn_parallel_for
 * calls run inline until set back (returns the previous setting).  Ranges are independent, so a
 * job run inline gives the same bytes. */
#define NN_SMALL_WORK_BYTES (2 << 20)
bool nn_parallel_small_work(int64_t bytes);
bool nn_parallel_set_serial(bool serial);

/* Work claimed in chunks from a shared counter, for kernels that ignore nn_parallel_for's
 * fixed ranges: every thread calls nn_claim_next until it returns false, so a pool worker that
 * wakes late (a busy host, another library's spinning threads) still takes its share instead of
 * leaving the caller a fixed half.  Only for work whose items do not depend on who computes
 * them.  nn_claims_init picks chunks of about 1/per_thread of a thread's share, >= min_chunk. */
typedef struct nn_claims {
    int64_t total, chunk;
    int64_t next; /* next unclaimed chunk (atomic) */
} nn_claims;

static inline void nn_claims_init(nn_claims *c, int64_t total, int64_t per_thread, int64_t min_chunk)
{
    const int64_t threads = nn_num_threads() > 0 ? nn_num_threads() : 1;
    const int64_t share = total / (threads * per_thread);
    c->total = total;
    c->chunk = share > min_chunk ? share : (min_chunk > 0 ? min_chunk : 1);
    c->next = 0;
}

/* The next unclaimed chunk [*first, *last) of [0, total); false when none is left. */
static inline bool nn_claim_next(nn_claims *c, int64_t *first, int64_t *last)
{
    const int64_t claim = __atomic_fetch_add(&c->next, 1, __ATOMIC_RELAXED);
    if (claim >= nn_ceil_div(c->total, c->chunk)) return false;
    *first = claim * c->chunk;
    *last = *first + c->chunk < c->total ? *first + c->chunk : c->total;
    return true;
}

/* The same idea with shrinking ("guided") chunks: about 1/(4 * threads) of what is left, in
 * multiples of `unit` items, so the threads finish within a small chunk of each other however
 * late a pool worker woke.  The last `unit` items are left to the thread that called
 * nn_guided_claims_init (the one that launched the job): the other threads have then already
 * left when it finishes, so it does not go to sleep waiting for them (a wake-up costs tens of
 * microseconds on a busy host). */
typedef struct nn_guided_claims {
    int64_t total, unit, threads;
    int64_t next;        /* first unclaimed item (atomic) */
    unsigned long owner; /* the launching thread (pthread_t) */
} nn_guided_claims;

void nn_guided_claims_init(nn_guided_claims *c, int64_t total, int64_t unit);
/* The next chunk [*first, *last) for the calling thread; false when it should stop. */
bool nn_guided_claim_next(nn_guided_claims *c, int64_t *first, int64_t *last);

/* ------------------------------------------------------------------------------------------ */
/* Strided <-> contiguous copies (element size 1, 2, 4, 8 or 16 bytes)                         */
/* ------------------------------------------------------------------------------------------ */

/* dst (contiguous, numel elements) <- src viewed through dims/strides (in elements). */
void nn_copy_to_contiguous(void *dst, const void *src, size_t elem_size, uint64_t ndim,
                           const int64_t *dims, const int64_t *strides);
/* dst viewed through dims/strides <- src (contiguous). */
void nn_copy_from_contiguous(void *dst, const void *src, size_t elem_size, uint64_t ndim,
                             const int64_t *dims, const int64_t *strides);

/* Streaming (non-temporal) stores for outputs written exactly once (copy.c).  An ordinary store
 * to an uncached line first reads that line from memory; streaming stores skip that read and
 * leave the caches to the kernel's inputs, so a large write-once output costs its bytes once.
 *   if (nn_use_streaming_stores(output_bytes)) build each output row (or a small block) in a
 *   cache-resident buffer and hand it to nn_copy_row_nt(dst, buffer, bytes);
 * and end every parallel range that streamed with nn_streaming_fence().  The copies are bit
 * copies, so results do not depend on the choice. */
/* True when an output of `output_bytes` should be streamed: at least 16 MiB (far beyond the
 * caches), or as ACLNN_STREAMING_STORES=0/1 forces (read once; for experiments).  Always false
 * on CPUs without non-temporal stores. */
bool nn_use_streaming_stores(uint64_t output_bytes);
/* nn_use_streaming_stores for a pure copy (ReplicationPad2d's forward), and only when the
 * output is also at least twice the last-level cache.  Below that, ordinary stores leave part
 * of the output in that cache for its reader and cost less than streaming it: on an AMD EPYC
 * Zen 4 with a 32 MiB L3 the 17-35 MB pad outputs took 1.5x as long streamed
 * (docs/kernels_pad_upsample.md). */
bool nn_use_streaming_stores_past_cache(uint64_t output_bytes);
/* The last-level cache one core shares (CPU 0's, from sysfs), in bytes; 0 when unknown. */
uint64_t nn_last_level_cache_bytes(void);
/* memcpy(dst, src, bytes) with non-temporal stores for the part of dst aligned to the vector
 * width (AVX-512, AVX or SSE2, chosen at run time); the unaligned head and tail and copies under
 * 256 bytes use ordinary stores.  dst and src must not overlap; src may be unaligned. */
void nn_copy_row_nt(void *dst, const void *src, size_t bytes);
/* Orders this thread's earlier non-temporal stores before its later stores (sfence); call it
 * at the end of each kernel range that used nn_copy_row_nt. */
void nn_streaming_fence(void);

/* ------------------------------------------------------------------------------------------ */
/* The emulated product (soc.c)                                                                */
/* ------------------------------------------------------------------------------------------ */

/* SoC families, in CANN's op::SocVersion order (ASCEND950 = ASCEND910_95 sits after 910_93). */
typedef enum nn_soc {
    NN_SOC_INVALID = -1, /* ACLNN_SOC_VERSION names no SoC we know */
    NN_SOC_ASCEND910 = 0, /* Atlas training series */
    NN_SOC_ASCEND910B,    /* Atlas A2 training/inference (the default) */
    NN_SOC_ASCEND910_93,  /* Atlas A3 training/inference */
    NN_SOC_ASCEND950,     /* Ascend 950PR/950DT */
    NN_SOC_ASCEND310P,    /* Atlas inference series */
    NN_SOC_COUNT
} nn_soc;

#define NN_SOC_KNOWN_NAMES                                                                        \
    "known: Ascend310P, Ascend910, Ascend910B, Ascend910_93, Ascend950 (alias Ascend910_95), or a " \
    "card's name such as Ascend310P3, Ascend910A, Ascend910B2, Ascend910_9391, Ascend950PR_9599"

/* The family the operators follow now (read once per phase 1; ACLNN_SOC_VERSION on first use). */
nn_soc nn_soc_current(void);
/* What aclrtGetSocName reports; NULL when ACLNN_SOC_VERSION is unknown. */
const char *nn_soc_reported_name(void);
/* The family of a SoC name (a family, a card's name, or the "<family>_CPU" names libaclnn
 * reported once), or NN_SOC_INVALID. */
nn_soc nn_soc_family_of(const char *name);
/* "Ascend910", "Ascend310P", ...: CANN's ToString(SocVersion), used in its messages. */
const char *nn_soc_family_name(nn_soc soc);
/* ACLNN_SUCCESS, or ACLNN_ERR_PARAM_INVALID with a message when ACLNN_SOC_VERSION is unknown. */
int nn_soc_check(const char *fn);

/* The card's overflow mode (soc.c; docs/precision.md, "Overflow mode").  Ascend910 and
 * Ascend310P have only saturation mode; A2/A3 start in INF/NaN mode and switch with
 * aclrtSetDeviceSatMode, which the runtime pushes here (base knows no runtime); Ascend950 has
 * only INF/NaN mode.  nn_overflow_saturates: the device's mode now - the current product only
 * saturates, or it can and the device was switched to saturation (what aclrtGetDeviceSatMode
 * reports).  Streams copy the device's mode when they are created, as on the card; the executor
 * freezes the product's modes at phase 1 and takes the stream's at each phase-2 call
 * (nn_launch.saturation), which is what a kernel should follow. */
bool nn_overflow_saturates(void);
/* Whether the current product has only saturation mode (Ascend910, Ascend310P). */
bool nn_overflow_saturation_only(void);
/* Whether any of n values of a floating dtype (float, float16, bfloat16, double) is Inf or NaN;
 * false for other dtypes (dtype.c). */
bool nn_any_nonfinite(const void *values, aclDataType dtype, size_t n);
/* Whether the current product accepts the INF/NaN (true) or saturation (false) mode: Ascend950
 * has only INF/NaN mode, Ascend910/310P only saturation, A2/A3 both. */
bool nn_overflow_mode_supported(bool saturation);
/* aclrtSetDeviceSatMode's record, and the record itself (false: INF/NaN, the default). */
void nn_overflow_set_device_saturation(bool saturation);
bool nn_overflow_device_saturation(void);

/* ------------------------------------------------------------------------------------------ */
/* Shapes (shape.c)                                                                            */
/* ------------------------------------------------------------------------------------------ */

/* Most dimensions a tensor may have (the same limit as CANN's shape type). */
#define NN_MAX_DIMS 25

/* Shape helpers for checks and messages.  nn_numel is 1 for ndim 0, and -1 when a dim is
 * negative or the product overflows int64 (tensors are validated at creation, so an operand
 * never gives -1). */
int64_t nn_numel(uint64_t ndim, const int64_t *dims);
/* Formats "[2, 3, 4]" into buf (truncated to buf_size). Returns buf. */
const char *nn_shape_str(char *buf, size_t buf_size, uint64_t ndim, const int64_t *dims);
/* Row-major contiguity as opbase tests it: size-1 dims are skipped, a view with a 0 dim (no
 * elements) is contiguous whatever its strides. */
bool nn_view_is_contiguous(uint64_t ndim, const int64_t *dims, const int64_t *strides);

/* ---- sorted arrays (sorted.c) -------------------------------------------------------------- */

/* Arrays of records kept in increasing order of their first member, a uintptr_t key, and
 * searched by bisection: the registries (allocations, registered host ranges, live handles,
 * live executors), which are read far more often than changed.  The caller owns the array
 * and its lock. */

/* Index of the first record whose key is > key (count when none is). */
size_t nn_sorted_upper_bound(const void *records, size_t count, size_t record_size, uintptr_t key);
/* Inserts *record at index, growing the array by doubling (first to min_capacity records).
 * Returns the array, moved when it grew, or NULL with nothing changed when the allocation fails. */
void *nn_sorted_insert(void *records, size_t *count, size_t *capacity, size_t min_capacity,
                       size_t record_size, size_t index, const void *record);
/* Removes the record at index. */
void nn_sorted_remove(void *records, size_t *count, size_t record_size, size_t index);

#ifdef __cplusplus
}
#endif

#endif /* NN_BASE_H */
