/*
 * test_runtime_dump.c - dumps driven the way CANN's adump samples do it: aclmdlInitDump ->
 * aclmdlSetDump(acl.json) -> aclnn launches -> aclmdlFinalizeDump, acldumpGetPath,
 * aclDumpOpTensors, and aclopStartDumpArgs / aclopStopDumpArgs.  The .npy files are read back here (header and bytes)
 * and compared with the inputs given and with a PReLU loop written here; statuses are CANN's
 * (docs/runtime.md, "Dumps").
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl/acl.h"
#include "acl/acl_dump.h"
#include "aclnn/acl_meta.h"
#include "aclnnop/aclnn_prelu.h"

#include "test_util.h"

static char g_root[256];

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "cannot create %s", path);
    if (f != NULL) {
        fputs(text, f);
        fclose(f);
    }
}

/* Reads a whole file (NULL if it cannot); *size gets its length. */
static char *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = malloc((size_t)n + 1);
    if (data != NULL && fread(data, 1, (size_t)n, f) != (size_t)n) {
        free(data);
        data = NULL;
    }
    fclose(f);
    if (data != NULL) {
        data[n] = '\0';
        *size = (size_t)n;
    }
    return data;
}

/* Checks an .npy v1.0 file of float32 with the given shape text ("(2, 4)") and values. */
static void check_npy_f32(const char *path, const char *shape, const float *want, size_t count)
{
    size_t size = 0;
    char *data = read_all(path, &size);
    CHECK(data != NULL, "%s is missing", path);
    if (data == NULL)
        return;
    CHECK(size >= 10 && memcmp(data, "\x93NUMPY\x01\x00", 8) == 0, "%s: not an .npy v1.0 file", path);
    size_t header = 10 + (size_t)(unsigned char)data[8] + 256u * (unsigned char)data[9];
    CHECK(header % 64 == 0 && data[header - 1] == '\n', "%s: header of %zu bytes", path, header);
    char expected_dict[128];
    snprintf(expected_dict, sizeof expected_dict,
             "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }", shape);
    CHECK(strncmp(data + 10, expected_dict, strlen(expected_dict)) == 0, "%s: header %.80s", path, data + 10);
    CHECK(size == header + count * sizeof(float), "%s: %zu bytes", path, size);
    if (size == header + count * sizeof(float)) {
        const float *got = (const float *)(const void *)(data + header);
        for (size_t i = 0; i < count; i++)
            CHECK(got[i] == want[i], "%s[%zu] = %.9g, want %.9g", path, i, got[i], want[i]);
    }
    free(data);
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Runs aclnnPrelu on [2, 4] x [4] weights and checks what it returned. */
static void run_prelu(const float *x, const float *w, float *y)
{
    int64_t shape[] = {2, 4}, w_shape[] = {4};
    tu_tensor self = tu_make_f32(x, 8, shape, 2, NULL), weight = tu_make_f32(w, 4, w_shape, 1, NULL);
    tu_tensor out = tu_make_f32(NULL, 8, shape, 2, NULL);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    EXPECT_OK(aclnnPreluGetWorkspaceSize(self.t, weight.t, out.t, &ws, &ex));
    CHECK(tu_run(aclnnPrelu, ws, ex) == 0, "prelu phase 2 failed");
    tu_copy_back(&out, y);
    tu_free_tensor(&self);
    tu_free_tensor(&weight);
    tu_free_tensor(&out);
}

static void test_data_dump(void)
{
    char cfg[300], dir[400], path[600];
    snprintf(cfg, sizeof cfg, "%s/acl.json", g_root);
    char text[512];
    snprintf(text, sizeof text,
             "{\n  \"dump\": {\n    \"dump_path\": \"%s\",\n    \"dump_list\": [],\n"
             "    \"dump_op_switch\": \"on\",\n    \"dump_mode\": \"all\"\n  }\n}\n", g_root);
    write_text(cfg, text);

    EXPECT(aclmdlSetDump(cfg), ACL_ERROR_DUMP_NOT_RUN, "aclmdlInitDump");
    CHECK(acldumpGetPath(DATA_DUMP) == NULL, "no path before a dump is set");
    EXPECT_OK(aclmdlInitDump());
    EXPECT(aclmdlInitDump(), ACL_ERROR_REPEAT_INITIALIZE, "aclmdlInitDump");
    EXPECT_OK(aclmdlSetDump(cfg));
    const char *got_path = acldumpGetPath(DATA_DUMP);
    CHECK(got_path != NULL && strcmp(got_path, g_root) == 0, "acldumpGetPath = %s", got_path ? got_path : "(null)");

    float x[8] = {-2, 1, 2, -3, -4.5f, 5.25f, -6, 7}, w[4] = {0.5f, -1, 2, 0.25f}, y[8], want[8];
    run_prelu(x, w, y);
    for (int i = 0; i < 8; i++) {
        want[i] = x[i] > 0 ? x[i] : w[i % 4] * x[i];
        CHECK(y[i] == want[i], "y[%d] = %g, want %g", i, y[i], want[i]);
    }
    snprintf(dir, sizeof dir, "%s/Ascend910B/%ld", g_root, (long)getpid());
    snprintf(path, sizeof path, "%s/000001_aclnnPrelu_input_0.npy", dir);
    check_npy_f32(path, "(2, 4)", x, 8);
    snprintf(path, sizeof path, "%s/000001_aclnnPrelu_input_1.npy", dir);
    check_npy_f32(path, "(4,)", w, 4);
    snprintf(path, sizeof path, "%s/000001_aclnnPrelu_output_0.npy", dir);
    check_npy_f32(path, "(2, 4)", want, 8);
    snprintf(path, sizeof path, "%s/index.jsonl", dir);
    size_t size = 0;
    char *index = read_all(path, &size);
    CHECK(index != NULL && strstr(index, "\"launch\": 1, \"op\": \"aclnnPrelu\"") != NULL &&
          strstr(index, "\"shape\": [2, 4]") != NULL, "index: %s", index ? index : "(missing)");
    free(index);

    /* dump_mode output (the default) from now on: launch 2 writes its output only. */
    snprintf(text, sizeof text, "{\"dump\": {\"dump_path\": \"%s\", \"dump_op_switch\": \"on\"}}", g_root);
    write_text(cfg, text);
    EXPECT_OK(aclmdlSetDump(cfg));
    run_prelu(x, w, y);
    snprintf(path, sizeof path, "%s/000002_aclnnPrelu_output_0.npy", dir);
    check_npy_f32(path, "(2, 4)", want, 8);
    snprintf(path, sizeof path, "%s/000002_aclnnPrelu_input_0.npy", dir);
    CHECK(!file_exists(path), "dump_mode output wrote %s", path);

    /* aclDumpOpTensors writes the tensors it is given (here a transposed view as the output) as
     * launch 3, in stream order, under its opName made file-safe. */
    int64_t shape[] = {2, 4}, t_shape[] = {4, 2}, t_strides[] = {1, 4};
    tu_tensor plain = tu_make_f32(x, 8, shape, 2, NULL), turned = tu_make_f32(x, 8, t_shape, 2, t_strides);
    aclTensor *tensors[] = {plain.t, turned.t};
    EXPECT_OK(aclDumpOpTensors("PRelu", "layer1/prelu", tensors, 1, 1, tu_stream));
    EXPECT_OK(aclrtSynchronizeStream(tu_stream));
    float transposed[8];
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 2; c++)
            transposed[r * 2 + c] = x[c * 4 + r];
    snprintf(path, sizeof path, "%s/000003_layer1_prelu_output_0.npy", dir);
    check_npy_f32(path, "(4, 2)", transposed, 8);
    snprintf(path, sizeof path, "%s/000003_layer1_prelu_input_0.npy", dir);
    CHECK(!file_exists(path), "dump_mode output wrote %s", path);
    EXPECT(aclDumpOpTensors("PRelu", "p", NULL, 1, 1, tu_stream), ACLNN_ERR_PARAM_NULLPTR, "tensors");
    tu_free_tensor(&plain);
    tu_free_tensor(&turned);

    /* A launch captured into a model runtime instance is not dumped, neither when captured nor
     * when the model replays it (its replays would share one number); launch 4 is the next one
     * queued as usual. */
    {
        int64_t shape2[] = {2, 4}, w_shape[] = {4};
        tu_tensor self = tu_make_f32(x, 8, shape2, 2, NULL), weight = tu_make_f32(w, 4, w_shape, 1, NULL);
        tu_tensor out = tu_make_f32(NULL, 8, shape2, 2, NULL);
        uint64_t ws = 0;
        aclOpExecutor *ex = NULL;
        aclmdlRI model = NULL;
        EXPECT_OK(aclmdlRICaptureBegin(tu_stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
        EXPECT_OK(aclnnPreluGetWorkspaceSize(self.t, weight.t, out.t, &ws, &ex));
        EXPECT_OK(aclnnPrelu(NULL, ws, ex, tu_stream));
        EXPECT_OK(aclmdlRICaptureEnd(tu_stream, &model));
        EXPECT_OK(aclmdlRIExecuteAsync(model, tu_stream));
        EXPECT_OK(aclrtSynchronizeStream(tu_stream));
        float replayed[8];
        tu_copy_back(&out, replayed);
        for (int i = 0; i < 8; i++)
            CHECK(replayed[i] == want[i], "replayed y[%d] = %g, want %g", i, replayed[i], want[i]);
        EXPECT_OK(aclmdlRIDestroy(model));
        tu_free_tensor(&self);
        tu_free_tensor(&weight);
        tu_free_tensor(&out);
    }
    run_prelu(x, w, y);
    snprintf(path, sizeof path, "%s/000004_aclnnPrelu_output_0.npy", dir);
    check_npy_f32(path, "(2, 4)", want, 8);
    snprintf(path, sizeof path, "%s/000005_aclnnPrelu_output_0.npy", dir);
    CHECK(!file_exists(path), "a captured launch was dumped: %s", path);

    /* A bad config is refused and leaves the previous one in place. */
    write_text(cfg, "{\"dump\": {\"dump_op_switch\": \"on\", \"dump_mode\": \"all\"}}");
    EXPECT(aclmdlSetDump(cfg), ACL_ERROR_INVALID_DUMP_CONFIG, "dump_path");
    write_text(cfg, "{\"dump\": {\"dump_path\": ");
    EXPECT(aclmdlSetDump(cfg), ACL_ERROR_INVALID_DUMP_CONFIG, "JSON");
    EXPECT(aclmdlSetDump(NULL), ACL_ERROR_INVALID_PARAM, "dumpCfgPath");
    got_path = acldumpGetPath(DATA_DUMP);
    CHECK(got_path != NULL && strcmp(got_path, g_root) == 0, "the earlier config stays");

    EXPECT_OK(aclmdlFinalizeDump());
    EXPECT(aclmdlFinalizeDump(), ACL_ERROR_DUMP_NOT_RUN, "aclmdlFinalizeDump");
    CHECK(acldumpGetPath(DATA_DUMP) == NULL, "no path after aclmdlFinalizeDump");
    run_prelu(x, w, y);
    snprintf(path, sizeof path, "%s/000005_aclnnPrelu_output_0.npy", dir);
    CHECK(!file_exists(path), "a finalized dump wrote %s", path);
    unlink(cfg);
}

/* acldumpRegCallback: the files arrive as chunks; one output file is put back together here. */
static char g_received[4096];
static size_t g_received_size;
static int g_chunks, g_last_chunks;
static char g_wanted_file[700];

static int32_t receive_chunk(const acldumpChunk *chunk, int32_t length)
{
    CHECK(length == (int32_t)(sizeof(acldumpChunk) + chunk->bufLen), "chunk length %d", (int)length);
    g_chunks++;
    g_last_chunks += chunk->isLastChunk == 1;
    if (strcmp(chunk->fileName, g_wanted_file) == 0 && chunk->offset >= 0 &&
        (size_t)chunk->offset + chunk->bufLen <= sizeof g_received) {
        memcpy(g_received + chunk->offset, chunk->dataBuf, chunk->bufLen);
        g_received_size = (size_t)chunk->offset + chunk->bufLen;
    }
    return 0;
}

static void test_dump_callback(void)
{
    char cfg[300], text[512];
    snprintf(cfg, sizeof cfg, "%s/acl.json", g_root);
    snprintf(text, sizeof text, "{\"dump\": {\"dump_path\": \"%s\", \"dump_op_switch\": \"on\"}}", g_root);
    write_text(cfg, text);
    EXPECT(acldumpRegCallback(NULL, 0), ACL_ERROR_FAILURE, "messageCallback");
    EXPECT(acldumpRegCallback(receive_chunk, 3), ACL_ERROR_FAILURE, "flag");
    EXPECT_OK(acldumpRegCallback(receive_chunk, 0));
    EXPECT_OK(aclmdlInitDump());
    EXPECT_OK(aclmdlSetDump(cfg));
    snprintf(g_wanted_file, sizeof g_wanted_file, "%s/Ascend910B/%ld/000005_aclnnPrelu_output_0.npy", g_root,
             (long)getpid());
    float x[8] = {1, -2, 3, -4, 5, -6, 7, -8}, w[4] = {0.5f, 0.25f, 2, 4}, y[8], want[8];
    for (int i = 0; i < 8; i++)
        want[i] = x[i] > 0 ? x[i] : w[i % 4] * x[i];
    run_prelu(x, w, y);
    EXPECT_OK(aclmdlFinalizeDump());
    acldumpUnregCallback();
    CHECK(g_chunks == 2 && g_last_chunks == 2, "%d chunks, %d last: the output file and the index line", g_chunks,
          g_last_chunks);
    CHECK(!file_exists(g_wanted_file), "a callback dump wrote %s to the disk", g_wanted_file);
    char path[400];
    snprintf(path, sizeof path, "%s/received.npy", g_root);
    FILE *f = fopen(path, "wb");
    if (f != NULL) {
        fwrite(g_received, 1, g_received_size, f);
        fclose(f);
    }
    check_npy_f32(path, "(2, 4)", want, 8);
    unlink(path);
    unlink(cfg);
}

static void test_dump_args(void)
{
    char args[300];
    snprintf(args, sizeof args, "%s/args/sub", g_root);
    EXPECT(aclopStartDumpArgs(0, args), ACL_ERROR_FAILURE, "dumpType");
    EXPECT(aclopStartDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS, NULL), ACL_ERROR_FAILURE, "path");
    EXPECT_OK(aclopStartDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS, args));
    EXPECT(aclopStartDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS, args), ACL_ERROR_FAILURE, "already");
    float x[8] = {0}, w[4] = {1, 1, 1, 1}, y[8];
    run_prelu(x, w, y);
    run_prelu(x, w, y); /* the same signature: described once */
    EXPECT_OK(aclopStopDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS));
    DIR *d = opendir(args);
    CHECK(d != NULL, "%s was not made", args);
    int files = 0;
    struct dirent *entry;
    while (d != NULL && (entry = readdir(d)) != NULL) {
        if (entry->d_name[0] == '.')
            continue;
        files++;
        CHECK(strncmp(entry->d_name, "aclnnPrelu_", 11) == 0, "unexpected file %s", entry->d_name);
        char path[700];
        snprintf(path, sizeof path, "%s/%s", args, entry->d_name);
        size_t size = 0;
        char *text = read_all(path, &size);
        CHECK(text != NULL && strstr(text, "\"op\": \"aclnnPrelu\"") != NULL &&
              strstr(text, "\"shape\": [2, 4]") != NULL, "description: %s", text ? text : "(missing)");
        free(text);
        unlink(path);
    }
    if (d != NULL)
        closedir(d);
    CHECK(files == 1, "%d descriptions, expected 1", files);
    rmdir(args);
}

/* Removes the dump tree this program wrote (two levels of directories, files in the last). */
static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *entry;
    while (d != NULL && (entry = readdir(d)) != NULL) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        char child[700];
        snprintf(child, sizeof child, "%s/%s", path, entry->d_name);
        if (unlink(child) != 0)
            remove_tree(child);
    }
    if (d != NULL)
        closedir(d);
    rmdir(path);
}

int main(void)
{
    EXPECT(aclmdlInitDump(), ACL_ERROR_UNINITIALIZE, "aclInit");
    snprintf(g_root, sizeof g_root, "/tmp/test_runtime_dump_XXXXXX");
    if (mkdtemp(g_root) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    if (tu_open_device() != 0)
        return 1;
    test_data_dump();
    test_dump_callback();
    test_dump_args();
    tu_close_device();
    remove_tree(g_root);
    return tu_finish("test_runtime_dump");
}
