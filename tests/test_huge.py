"""64-bit indexing end to end: ReplicationPad2d on an INT8 tensor of more than 2^31 elements.

self [1, 1, 46341, 46341] (2 147 488 281 elements, > 2^31) padded by [1, 1, 1, 1] gives
out [1, 1, 46343, 46343] (2 147 673 649 elements). About 4.3 GB of memory in all. The C program
checks every border cell, every cell of rows and columns around the 2^31-th element of both
tensors, and a pseudo-random sample of interior cells against the obvious formula
out[i][j] = self[clamp(i - 1)][clamp(j - 1)].
"""
import subprocess

import support

PROGRAM = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "acl/acl.h"
#include "aclnnop/aclnn_replication_pad2d.h"

#define H 46341LL
#define W 46341LL
#define HO (H + 2)
#define WO (W + 2)

static uint8_t pattern(int64_t i, int64_t j) { return (uint8_t)((i * 7 + j * 13 + (i >> 8) * 3) & 0xff); }
static int64_t clamp(int64_t v, int64_t hi) { return v < 0 ? 0 : (v > hi ? hi : v); }

static int64_t bad = 0;
/* One output cell, read as a CANN program must read device memory: with aclrtMemcpy. */
static void check(const uint8_t *out, int64_t i, int64_t j)
{
    uint8_t want = pattern(clamp(i - 1, H - 1), clamp(j - 1, W - 1)), got = 0;
    if (aclrtMemcpy(&got, 1, out + i * WO + j, 1, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS) bad++;
    if (got != want && bad++ < 10)
        printf("out[%lld][%lld] = %d, want %d\n", (long long)i, (long long)j, got, want);
}

int main(void)
{
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) return 2;
    aclrtStream stream;
    aclrtCreateStream(&stream);
    void *in_dev = NULL, *out_dev = NULL;
    if (aclrtMalloc(&in_dev, (size_t)(H * W), ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
        aclrtMalloc(&out_dev, (size_t)(HO * WO), ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
        printf("allocation failed: %s\n", aclGetRecentErrMsg());
        return 2;
    }
    /* filled through a staging block of rows (a whole 2 GB host copy is not needed) */
    enum { ROWS = 1024 };
    uint8_t *stage = malloc((size_t)(ROWS * W));
    if (stage == NULL) return 2;
    for (int64_t first = 0; first < H; first += ROWS) {
        const int64_t rows = H - first < ROWS ? H - first : ROWS;
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < W; j++)
                stage[i * W + j] = pattern(first + i, j);
        if (aclrtMemcpy((uint8_t *)in_dev + first * W, (size_t)((H - first) * W), stage,
                        (size_t)(rows * W), ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS) return 2;
    }
    free(stage);
    const int64_t in_dims[4] = {1, 1, H, W}, out_dims[4] = {1, 1, HO, WO}, pads[4] = {1, 1, 1, 1};
    aclTensor *self = aclCreateTensor(in_dims, 4, ACL_INT8, NULL, 0, ACL_FORMAT_NCHW, in_dims, 4, in_dev);
    aclTensor *out = aclCreateTensor(out_dims, 4, ACL_INT8, NULL, 0, ACL_FORMAT_NCHW, out_dims, 4, out_dev);
    aclIntArray *padding = aclCreateIntArray(pads, 4);
    uint64_t ws_size = 0;
    aclOpExecutor *ex = NULL;
    aclnnStatus st = aclnnReplicationPad2dGetWorkspaceSize(self, padding, out, &ws_size, &ex);
    if (st != ACLNN_SUCCESS) { printf("phase 1: %d %s\n", st, aclGetRecentErrMsg()); return 1; }
    void *ws = NULL;
    if (ws_size > 0 && aclrtMalloc(&ws, ws_size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return 2;
    st = aclnnReplicationPad2d(ws, ws_size, ex, stream);
    if (st != ACLNN_SUCCESS) { printf("phase 2: %d %s\n", st, aclGetRecentErrMsg()); return 1; }
    if (aclrtSynchronizeStream(stream) != ACL_SUCCESS) { printf("sync: %s\n", aclGetRecentErrMsg()); return 1; }

    const uint8_t *o = out_dev;
    int64_t checked = 0;
    for (int64_t j = 0; j < WO; j++) { check(o, 0, j); check(o, 1, j); check(o, HO - 2, j); check(o, HO - 1, j); checked += 4; }
    for (int64_t i = 0; i < HO; i++) { check(o, i, 0); check(o, i, 1); check(o, i, WO - 2); check(o, i, WO - 1); checked += 4; }
    /* the rows around linear element 2^31 of the output and of the input */
    const int64_t marks[2] = {(1LL << 31) / WO, ((1LL << 31) / W) + 1};
    for (int m = 0; m < 2; m++)
        for (int64_t i = marks[m] - 1; i <= marks[m] + 1 && i < HO; i++)
            for (int64_t j = 0; j < WO; j++) { check(o, i, j); checked++; }
    uint64_t seed = 12345;
    for (int k = 0; k < 2000000; k++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        check(o, (int64_t)((seed >> 33) % (uint64_t)HO), (int64_t)((seed >> 7) % (uint64_t)WO));
        checked++;
    }
    printf("checked %lld cells, %lld wrong\n", (long long)checked, (long long)bad);
    aclDestroyTensor(self);
    aclDestroyTensor(out);
    aclDestroyIntArray(padding);
    if (ws) aclrtFree(ws);
    aclrtFree(in_dev);
    aclrtFree(out_dev);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return bad != 0;
}
"""


def test_replication_pad2d_int8_beyond_2_pow_31_elements(tmp_path, monkeypatch):
    monkeypatch.delenv("ACLNN_TEST_SANITIZE", raising=False)  # a plain build: see the module docstring
    source = tmp_path / "huge_pad.c"
    source.write_text(PROGRAM)
    exe = support.compile_program(source, out_dir=tmp_path, extra_flags=["-O2"])
    result = support.run_program(exe, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert ", 0 wrong" in result.stdout, result.stdout
