/*
 * launch_dump.c - writes a launch's dump files (docs/runtime.md, "Dumps").
 *
 * Each tensor is a NumPy .npy file (format version 1.0): the tensor's logical shape, C order,
 * its dtype as NumPy names it.  bf16, which NumPy has no code for, is written as the 2-byte
 * opaque type '|V2' (numpy.load gives a void array; `.view(ml_dtypes.bfloat16)` reads it) and
 * named "bfloat16" in the index.  Files are named <launch>_<operator>_input_<i>.npy and
 * ..._output_<i>.npy, <launch> being the launch's number in 6 digits and <i> the argument's place
 * among the operator's inputs (or outputs) in its CANN prototype order.  index.jsonl gets one
 * JSON line per launch: number, operator, stream, device, product, status, and for every tensor
 * argument its file (null when dump_mode left it out), dtype and shape.
 *
 * With dump_data "stats" a launch writes <launch>_<operator>.csv rows instead (dump_stats.c).
 *
 * aclDumpOpTensors, the aclnn API's own "dump these tensors", writes the same files for the
 * tensors it is given, as a task of its stream, named by its opName.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check/nn_check.h"
#include "exec/nn_executor_impl.h"
#include "exec/nn_dump_sink.h"
#include "exec/nn_dump_stats.h"
#include "exec/nn_launch_dump.h"

typedef struct {
    aclDataType dtype;
    const char *descr; /* the .npy header's 'descr' */
    const char *name;  /* NumPy's (or ml_dtypes') name, for the index */
} npy_type;

static const npy_type k_npy_types[] = {
    {ACL_FLOAT, "<f4", "float32"},     {ACL_FLOAT16, "<f2", "float16"}, {ACL_BF16, "|V2", "bfloat16"},
    {ACL_DOUBLE, "<f8", "float64"},    {ACL_INT8, "|i1", "int8"},       {ACL_UINT8, "|u1", "uint8"},
    {ACL_INT16, "<i2", "int16"},       {ACL_UINT16, "<u2", "uint16"},   {ACL_INT32, "<i4", "int32"},
    {ACL_UINT32, "<u4", "uint32"},     {ACL_INT64, "<i8", "int64"},     {ACL_UINT64, "<u8", "uint64"},
    {ACL_BOOL, "|b1", "bool"},         {ACL_COMPLEX64, "<c8", "complex64"},
    {ACL_COMPLEX128, "<c16", "complex128"},
};

/* The dtype's .npy description; an unlisted one is '|V<bytes>' named by its ACL name. */
static npy_type npy_type_of(aclDataType dtype, char *opaque, size_t opaque_size)
{
    for (size_t i = 0; i < sizeof k_npy_types / sizeof k_npy_types[0]; i++)
        if (k_npy_types[i].dtype == dtype)
            return k_npy_types[i];
    snprintf(opaque, opaque_size, "|V%zu", nn_dtype_size(dtype));
    return (npy_type){dtype, opaque, nn_dtype_name(dtype)};
}

/* ---- .npy ---------------------------------------------------------------------------------- */

/* The .npy v1.0 preamble and header, padded with spaces to a multiple of 64 bytes and ended by
 * '\n', as numpy.lib.format writes it. Returns its length. */
static size_t npy_header(char *out, size_t size, const char *descr, uint64_t ndim, const int64_t *dims)
{
    char shape[NN_MAX_DIMS * 24 + 8];
    size_t used = (size_t)snprintf(shape, sizeof shape, "(");
    for (uint64_t d = 0; d < ndim; d++)
        used += (size_t)snprintf(shape + used, sizeof shape - used, "%lld,%s", (long long)dims[d],
                                 d + 1 < ndim ? " " : "");
    if (ndim > 1)
        used--; /* "(2, 3)" rather than "(2, 3,)"; a 1-d shape keeps "(3,)" */
    snprintf(shape + used, sizeof shape - used, ")");
    char dict[sizeof shape + 96];
    int dict_len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                            descr, shape);
    size_t total = 10 + (size_t)dict_len + 1;
    size_t padded = (total + 63) / 64 * 64;
    if (padded > size)
        return 0;
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    uint16_t header_len = (uint16_t)(padded - 10);
    out[8] = (char)(header_len & 0xFF);
    out[9] = (char)(header_len >> 8);
    memcpy(out + 10, dict, (size_t)dict_len);
    memset(out + 10 + dict_len, ' ', padded - total);
    out[padded - 1] = '\n';
    return padded;
}

/* The operand's elements in row-major order: the buffer the kernel used, or (an operand of a
 * launch with nothing to compute, which keeps the caller's strided view) a gathered copy. */
static const void *operand_bytes(const nn_operand *op, void **gathered)
{
    size_t elem = nn_dtype_size(op->dtype);
    *gathered = NULL;
    if (op->numel == 0 || op->data == NULL)
        return NULL;
    const char *view_start = (const char *)op->base + op->offset * (int64_t)elem;
    if (op->contiguous || op->data != view_start)
        return op->data;
    *gathered = malloc((size_t)op->numel * elem);
    if (*gathered != NULL)
        nn_copy_to_contiguous(*gathered, view_start, elem, op->ndim, op->dims, op->strides);
    return *gathered;
}

static bool write_npy(const nn_dump_launch *dump, const char *path, const nn_operand *op)
{
    char opaque[16];
    npy_type type = npy_type_of(op->dtype, opaque, sizeof opaque);
    char header[NN_MAX_DIMS * 24 + 256];
    size_t header_len = npy_header(header, sizeof header, type.descr, op->ndim, op->dims);
    if (header_len == 0)
        return false;
    void *gathered;
    const void *bytes = operand_bytes(op, &gathered);
    size_t size = (size_t)op->numel * nn_dtype_size(op->dtype);
    nn_dump_sink sink;
    nn_dump_sink_open(&sink, dump->callback, path, false);
    nn_dump_sink_write(&sink, header, header_len);
    if (size > 0 && bytes != NULL)
        nn_dump_sink_write(&sink, bytes, size);
    free(gathered);
    return nn_dump_sink_close(&sink) && (size == 0 || bytes != NULL);
}

/* ---- names --------------------------------------------------------------------------------- */

/* "input"/"output" and the argument's place among its kind (absent optional ones count). */
static int operand_ordinal(const nn_operand *operands, int index)
{
    int ordinal = 0;
    for (int i = 0; i < index; i++)
        ordinal += operands[i].is_output == operands[index].is_output;
    return ordinal;
}

/* The operator's name as a file name part: characters other than letters, digits, '.', '-'
 * and '_' become '_' (aclDumpOpTensors' opName is the caller's text). */
static void file_safe_name(char *out, size_t size, const char *name)
{
    size_t i = 0;
    for (; name[i] != '\0' && i + 1 < size; i++) {
        char c = name[i];
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '.' || c == '-' || c == '_';
        out[i] = plain && !(i == 0 && c == '.') ? c : '_';
    }
    out[i] = '\0';
}

static void tensor_file_name(char *out, size_t size, const nn_dump_launch *dump, const char *op_name,
                             const nn_operand *operands, int index)
{
    char safe[128];
    file_safe_name(safe, sizeof safe, op_name);
    snprintf(out, size, "%06llu_%s_%s_%d.npy", (unsigned long long)dump->number, safe,
             operands[index].is_output ? "output" : "input", operand_ordinal(operands, index));
}

static bool mode_wants(const nn_dump_launch *dump, const nn_operand *op)
{
    return op->handle != NULL && (op->is_output ? dump->outputs : dump->inputs);
}

/* dump_data "stats": the launch's CSV file, "<launch>_<operator>.csv". */
static void stats_file_name(char *out, size_t size, const nn_dump_launch *dump, const char *op_name)
{
    char safe[128];
    file_safe_name(safe, sizeof safe, op_name);
    snprintf(out, size, "%06llu_%s.csv", (unsigned long long)dump->number, safe);
}

/* Appends the rows of the inputs (or outputs) dump_mode asks for; the header goes with the
 * launch's first part (its inputs, or its outputs when dump_mode leaves the inputs out). */
static void write_stats_rows(const nn_dump_launch *dump, const char *op_name, const nn_operand *operands,
                             int count, bool outputs)
{
    if (outputs ? !dump->outputs : !dump->inputs)
        return;
    char name[256], path[NN_DUMP_DIR_MAX + 300], row[1024];
    stats_file_name(name, sizeof name, dump, op_name);
    snprintf(path, sizeof path, "%s/%s", dump->dir, name);
    nn_dump_sink sink;
    nn_dump_sink_open(&sink, dump->callback, path, true);
    if (!outputs || !dump->inputs) {
        nn_dump_stats_header(row, sizeof row, dump->stats);
        nn_dump_sink_write(&sink, row, strlen(row));
    }
    for (int i = 0; i < count; i++) {
        const nn_operand *op = &operands[i];
        if (op->is_output != outputs || !mode_wants(dump, op))
            continue;
        void *gathered;
        const void *bytes = operand_bytes(op, &gathered);
        nn_dump_stats_row(row, sizeof row, op, bytes, operand_ordinal(operands, i), dump->stats);
        free(gathered);
        nn_dump_sink_write(&sink, row, strlen(row));
    }
    if (!nn_dump_sink_close(&sink))
        nn_log(NN_LOG_WARNING, "%s: dump statistics \"%s\" could not be written.", op_name, path);
}

void nn_launch_dump_tensors(const nn_dump_launch *dump, const char *op_name, const nn_operand *operands,
                            int count, bool outputs)
{
    if (dump->stats != 0) {
        write_stats_rows(dump, op_name, operands, count, outputs);
        return;
    }
    for (int i = 0; i < count; i++) {
        const nn_operand *op = &operands[i];
        if (op->is_output != outputs || !mode_wants(dump, op))
            continue;
        char name[256], path[NN_DUMP_DIR_MAX + 300];
        tensor_file_name(name, sizeof name, dump, op_name, operands, i);
        snprintf(path, sizeof path, "%s/%s", dump->dir, name);
        if (!write_npy(dump, path, op))
            nn_log(NN_LOG_WARNING, "%s: dump file \"%s\" could not be written (%s).", op_name, path,
                   strerror(errno));
    }
}

/* ---- the index and the operator descriptions ------------------------------------------------ */

static void append_shape(char *out, size_t size, size_t *used, uint64_t ndim, const int64_t *dims)
{
    nn_dump_append(out, size, used, "[");
    for (uint64_t d = 0; d < ndim; d++)
        nn_dump_append(out, size, used, "%s%lld", d ? ", " : "", (long long)dims[d]);
    nn_dump_append(out, size, used, "]");
}

/* One argument as a JSON object; `file` NULL writes "file": null, `with_file` false leaves it out. */
static void append_operand(char *out, size_t size, size_t *used, const nn_operand *op, int ordinal,
                           bool with_file, const char *file)
{
    if (op->handle == NULL) {
        nn_dump_append(out, size, used, "{\"index\": %d, \"absent\": true}", ordinal);
        return;
    }
    char opaque[16];
    npy_type type = npy_type_of(op->dtype, opaque, sizeof opaque);
    nn_dump_append(out, size, used, "{\"index\": %d, ", ordinal);
    if (with_file)
        nn_dump_append(out, size, used, file ? "\"file\": \"%s\", " : "\"file\": null, ", file);
    nn_dump_append(out, size, used, "\"dtype\": \"%s\", \"acl_dtype\": \"%s\", \"format\": \"%s\", \"shape\": ",
           type.name, nn_dtype_name(op->dtype), nn_format_name(op->format));
    append_shape(out, size, used, op->ndim, op->dims);
    nn_dump_append(out, size, used, "}");
}

/* `"inputs": [...], "outputs": [...]` */
static void append_operands(char *out, size_t size, size_t *used, const nn_dump_launch *dump,
                            const char *op_name, const nn_operand *operands, int count, bool with_files)
{
    for (int kind = 0; kind < 2; kind++) {
        bool outputs = kind == 1;
        nn_dump_append(out, size, used, "%s\"%s\": [", outputs ? ", " : "", outputs ? "outputs" : "inputs");
        bool first = true;
        for (int i = 0; i < count; i++) {
            if (operands[i].is_output != outputs)
                continue;
            char name[256];
            bool written = dump != NULL && dump->stats == 0 && mode_wants(dump, &operands[i]);
            if (written)
                tensor_file_name(name, sizeof name, dump, op_name, operands, i);
            nn_dump_append(out, size, used, "%s", first ? "" : ", ");
            append_operand(out, size, used, &operands[i], operand_ordinal(operands, i), with_files,
                           written ? name : NULL);
            first = false;
        }
        nn_dump_append(out, size, used, "]");
    }
}

static pthread_mutex_t g_index_lock = PTHREAD_MUTEX_INITIALIZER;

void nn_launch_dump_end(const nn_dump_launch *dump, const char *op_name, const nn_operand *operands,
                        int count, int status)
{
    char line[16384];
    size_t used = 0;
    nn_dump_append(line, sizeof line, &used,
           "{\"launch\": %llu, \"op\": \"%s\", \"stream\": \"%s\", \"device\": %d, \"product\": \"%s\", "
           "\"status\": %d, ", (unsigned long long)dump->number, op_name, dump->stream, (int)dump->device,
           dump->product, status);
    append_operands(line, sizeof line, &used, dump, op_name, operands, count, true);
    if (dump->stats != 0) {
        char name[256];
        stats_file_name(name, sizeof name, dump, op_name);
        nn_dump_append(line, sizeof line, &used, ", \"stats\": \"%s\"", name);
    }
    nn_dump_append(line, sizeof line, &used, "}\n");
    char path[NN_DUMP_DIR_MAX + 16];
    snprintf(path, sizeof path, "%s/index.jsonl", dump->dir);
    /* One line per launch; launches on different streams finish in any order. */
    pthread_mutex_lock(&g_index_lock);
    nn_dump_sink sink;
    nn_dump_sink_open(&sink, dump->callback, path, true);
    nn_dump_sink_write(&sink, line, strlen(line));
    bool ok = nn_dump_sink_close(&sink);
    pthread_mutex_unlock(&g_index_lock);
    if (!ok)
        nn_log(NN_LOG_WARNING, "%s: dump index \"%s\" could not be written.", op_name, path);
}

/* FNV-1a: names one description file per operator signature. */
static uint64_t fnv1a(const char *text)
{
    uint64_t hash = 0xcbf29ce484222325ull;
    for (; *text; text++)
        hash = (hash ^ (unsigned char)*text) * 0x100000001b3ull;
    return hash;
}

/* aclopStartDumpArgs: one file per operator and signature (dtypes, formats, shapes), as CANN
 * writes one per shape; a signature already described is not written again. */
static void write_operator_description(const nn_dump_launch *dump, const char *op_name,
                                       const nn_operand *operands, int count)
{
    char text[16384];
    size_t used = 0;
    nn_dump_append(text, sizeof text, &used, "{\"op\": \"%s\", \"product\": \"%s\", ", op_name, dump->product);
    append_operands(text, sizeof text, &used, NULL, op_name, operands, count, false);
    nn_dump_append(text, sizeof text, &used, "}\n");
    char path[NN_DUMP_DIR_MAX + 300];
    snprintf(path, sizeof path, "%s/%s_%016llx.json", dump->args_dir, op_name,
             (unsigned long long)fnv1a(text));
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
    if (fd < 0) {
        if (errno != EEXIST)
            nn_log(NN_LOG_WARNING, "%s: operator description \"%s\" could not be written (%s).", op_name,
                   path, strerror(errno));
        return;
    }
    if (!nn_write_all(fd, text, used))
        nn_log(NN_LOG_WARNING, "%s: operator description \"%s\" could not be written.", op_name, path);
    close(fd);
}

nn_dump_launch *nn_launch_dump_begin(const char *op_name, const nn_operand *operands, int count,
                                     nn_stream *stream)
{
    nn_dump_launch *dump = nn_dump_launch_new(stream);
    if (dump == NULL)
        return NULL;
    if (dump->args)
        write_operator_description(dump, op_name, operands, count);
    if (!dump->data) {
        free(dump);
        return NULL;
    }
    return dump;
}

/* ---- aclDumpOpTensors ---------------------------------------------------------------------- */

typedef struct {
    nn_dump_launch *dump;
    char op_name[128];  /* the caller's opName, made file-safe */
    int count;
    nn_operand operands[];
} tensors_task;

static int run_tensors_task(void *ctx)
{
    tensors_task *task = ctx;
    bool memcheck = nn_check_on(NN_CHECK_MEMCHECK);
    for (int i = 0; i < task->count; i++) {
        nn_operand *op = &task->operands[i];
        if (memcheck) /* the program's device addresses are not the library's under memcheck */
            op->base = nn_check_lib_addr(op->base);
        op->data = op->base == NULL ? NULL
                                    : (char *)op->base + op->offset * (int64_t)nn_dtype_size(op->dtype);
    }
    nn_launch_dump_tensors(task->dump, task->op_name, task->operands, task->count, false);
    nn_launch_dump_tensors(task->dump, task->op_name, task->operands, task->count, true);
    nn_launch_dump_end(task->dump, task->op_name, task->operands, task->count, 0);
    return 0;
}

static void release_tensors_task(void *ctx)
{
    tensors_task *task = ctx;
    free(task->dump);
    free(task);
}

/* The tensors as operands (inputs first); ACLNN_ERR_PARAM_INVALID when one is not a live tensor. */
static aclnnStatus freeze_tensors(tensors_task *task, aclTensor **tensors, size_t inputs)
{
    for (int i = 0; i < task->count; i++) {
        const aclTensor *t = tensors[i];
        char name[32];
        snprintf(name, sizeof name, "tensors[%d]", i);
        if (t != NULL) {
            aclnnStatus st = nn_handle_check("aclDumpOpTensors", name, t, NN_HANDLE_TENSOR);
            if (st != ACLNN_SUCCESS)
                return st;
        }
        nn_operand_freeze(&task->operands[i], t, (size_t)i >= inputs);
    }
    return ACLNN_SUCCESS;
}

NN_EXPORT aclnnStatus aclDumpOpTensors(const char *opType, const char *opName, aclTensor **tensors,
                                       size_t inputTensorNum, size_t outputTensorNum,
                                       aclrtStream stream)
{
    static const char api[] = "aclDumpOpTensors";
    if (opType == NULL || opName == NULL || tensors == NULL)
        return nn_error(ACLNN_ERR_PARAM_NULLPTR, "%s: %s must not be null.", api,
                        opType == NULL ? "opType" : opName == NULL ? "opName" : "tensors");
    size_t count = inputTensorNum + outputTensorNum;
    if (count < inputTensorNum || count > 4096)
        return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: %zu input and %zu output tensors; at most 4096 in all.",
                        api, inputTensorNum, outputTensorNum);
    if (!nn_dump_wanted())
        return ACLNN_SUCCESS; /* no dump configured: nothing to do, as in CANN */
    nn_stream *resolved = NULL;
    if (nn_stream_resolve_named(api, stream, &resolved) != ACL_SUCCESS)
        return ACLNN_ERR_PARAM_INVALID;
    tensors_task *task = calloc(1, sizeof *task + count * sizeof(nn_operand));
    if (task == NULL)
        return nn_error(ACLNN_ERR_INNER_NULLPTR, "%s: out of memory.", api);
    task->count = (int)count;
    file_safe_name(task->op_name, sizeof task->op_name, opName);
    aclnnStatus st = freeze_tensors(task, tensors, inputTensorNum);
    if (st != ACLNN_SUCCESS) {
        free(task);
        return st;
    }
    task->dump = nn_dump_launch_new(resolved);
    if (task->dump == NULL || !task->dump->data) {
        release_tensors_task(task); /* only aclopStartDumpArgs is on: no data dump */
        return ACLNN_SUCCESS;
    }
    aclError rt = nn_stream_submit(resolved, run_tensors_task, release_tensors_task, task);
    return rt == ACL_SUCCESS ? ACLNN_SUCCESS : ACLNN_ERR_RUNTIME_ERROR;
}
