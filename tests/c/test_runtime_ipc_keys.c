/*
 * test_runtime_ipc_keys.c - IPC export keys and VMM shareable handles never name the wrong
 * memory.  The exporter is this process; each importer is a forked child that imports what the
 * parent exported and exits 0 when everything it saw was right:
 *   - a block exported, freed without aclrtIpcMemClose, and a new block allocated (usually at
 *     the same address) and exported: the old key fails, the new key reads the new bytes, and
 *     the child's write reaches the parent;
 *   - a child that imported a block before the parent freed it keeps the bytes it had, and its
 *     writes do not reach the block allocated after the free (usually at the same address);
 *   - a closed key fails, even when another file took its descriptor number right after the
 *     close, and that file is left untouched; a closed key fails too while another key of the
 *     same memory lives and a third key is made after the close;
 *   - an IPC key of aclrtMapMem memory dies with aclrtIpcMemClose, and with aclrtFreePhysical;
 *   - a shareable handle fails after the exporter's aclrtFreePhysical, even with its descriptor
 *     number taken by another file; before that, both processes see each other's writes.
 * A refused import returns ACL_ERROR_RT_PARAM_INVALID (107000) with a message naming the key.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acl/acl.h"

#include "test_util.h"

#define BLOCK_BYTES ((size_t)4 << 20) /* pages of its own: exportable in place */
#define KEY_LEN 65                    /* CANN's key buffer */

/* Runs `importer(ctx)` in a forked child; true when the child exited 0. */
static int run_importer(int (*importer)(void *ctx), void *ctx, const char *what)
{
    fflush(NULL);
    pid_t child = fork();
    if (child == 0)
        _exit(importer(ctx));
    int wstatus = 0;
    waitpid(child, &wstatus, 0);
    int ok = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0;
    CHECK(ok, "%s: the importing process failed (status %d)", what, wstatus);
    return ok;
}

/* The child's verdict: its own CHECK count. */
static int child_status(void)
{
    return failures == 0 ? 0 : 3;
}

/* Expects the import of `key` to be refused with 107000 and a message naming the key. */
static void expect_key_refused(const char *key)
{
    void *ptr = NULL;
    EXPECT(aclrtIpcMemImportByKey(&ptr, key, 0), ACL_ERROR_RT_PARAM_INVALID, key);
    CHECK(ptr == NULL, "a refused import returned %p", ptr);
}

/* Imports `key`, checks byte `index` holds `expected`, writes `written` at byte 0, closes. */
static void expect_key_reads(const char *key, size_t index, unsigned expected, int written)
{
    void *ptr = NULL;
    EXPECT_OK(aclrtIpcMemImportByKey(&ptr, key, 0));
    if (ptr == NULL)
        return;
    unsigned seen = tu_dev_byte(ptr, index);
    CHECK(seen == expected, "key %s: byte %zu is %#x, expected %#x", key, index, seen, expected);
    EXPECT_OK(aclrtMemset(ptr, 1, written, 1));
    EXPECT_OK(aclrtIpcMemClose(key));
}

/* ---- a freed block's key, and the key of the block allocated after it ---------------------- */

typedef struct stale_keys {
    char old_key[KEY_LEN], new_key[KEY_LEN];
} stale_keys;

static int import_stale_and_new(void *ctx)
{
    const stale_keys *keys = ctx;
    expect_key_refused(keys->old_key);
    expect_key_reads(keys->new_key, BLOCK_BYTES - 1, 0xB2, 0xC3);
    return child_status();
}

static void test_free_kills_keys(void)
{
    /* A first block freed at once: the allocator settles, so the next two blocks usually take
     * the same address (not under memcheck, which holds freed addresses back). */
    void *settle = NULL;
    EXPECT_OK(aclrtMalloc(&settle, BLOCK_BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtFree(settle));
    stale_keys keys;
    void *old_block = NULL, *new_block = NULL;
    EXPECT_OK(aclrtMalloc(&old_block, BLOCK_BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemset(old_block, BLOCK_BYTES, 0xA1, BLOCK_BYTES));
    EXPECT_OK(aclrtIpcMemGetExportKey(old_block, BLOCK_BYTES, keys.old_key, KEY_LEN, 0));
    EXPECT_OK(aclrtFree(old_block)); /* no aclrtIpcMemClose: the key dies with the block */
    EXPECT(aclrtIpcMemSetImportPid(keys.old_key, (int32_t[]){1}, 1), ACL_ERROR_INVALID_PARAM, keys.old_key);
    EXPECT_OK(aclrtMalloc(&new_block, BLOCK_BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemset(new_block, BLOCK_BYTES, 0xB2, BLOCK_BYTES));
    EXPECT_OK(aclrtIpcMemGetExportKey(new_block, BLOCK_BYTES, keys.new_key, KEY_LEN, 0));
    CHECK(strcmp(keys.old_key, keys.new_key) != 0, "the new block got the freed block's key %s", keys.new_key);
    if (run_importer(import_stale_and_new, &keys, "freed block")) {
        unsigned first = tu_dev_byte(new_block, 0), last = tu_dev_byte(new_block, BLOCK_BYTES - 1);
        CHECK(first == 0xC3 && last == 0xB2, "the exporter sees %#x ... %#x", first, last);
    }
    EXPECT_OK(aclrtIpcMemClose(keys.new_key));
    EXPECT_OK(aclrtFree(new_block));
}

/* ---- an import that outlives the exporter's block --------------------------------------- */

/* The child imports the key, tells the parent (one byte on `to_parent`), waits for the parent
 * to free the block and allocate a new one, writes into its import, and tells the parent. */
static int import_then_write_after_free(const char *key, int to_parent, int from_parent)
{
    void *ptr = NULL;
    char token = 'i';
    EXPECT_OK(aclrtIpcMemImportByKey(&ptr, key, 0));
    CHECK(write(to_parent, &token, 1) == 1, "child: cannot signal the parent");
    CHECK(read(from_parent, &token, 1) == 1, "child: the parent did not answer");
    if (ptr != NULL) {
        unsigned seen = tu_dev_byte(ptr, 0);
        CHECK(seen == 0xD4, "the import lost the freed block's bytes: %#x", seen);
        EXPECT_OK(aclrtMemset(ptr, BLOCK_BYTES, 0xEE, BLOCK_BYTES)); /* must reach nobody */
        EXPECT_OK(aclrtIpcMemClose(key));
    }
    CHECK(write(to_parent, &token, 1) == 1, "child: cannot signal the parent");
    return child_status();
}

static void test_freed_pages_are_private(void)
{
    int to_parent[2], from_parent[2];
    CHECK(pipe(to_parent) == 0 && pipe(from_parent) == 0, "pipe failed");
    char key[KEY_LEN], token = 'p';
    void *block = NULL, *next = NULL, *large = NULL;
    /* glibc unmaps a freed block it had mapped on its own; freeing a larger one first raises
     * its mmap threshold, so the next blocks come from the heap, where a free unmaps nothing
     * and the next block takes the same pages */
    EXPECT_OK(aclrtMalloc(&large, 4 * BLOCK_BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtFree(large));
    EXPECT_OK(aclrtMalloc(&block, BLOCK_BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemset(block, BLOCK_BYTES, 0xD4, BLOCK_BYTES));
    EXPECT_OK(aclrtIpcMemGetExportKey(block, BLOCK_BYTES, key, KEY_LEN, 0));
    fflush(NULL);
    pid_t child = fork();
    if (child == 0)
        _exit(import_then_write_after_free(key, to_parent[1], from_parent[0]));
    CHECK(read(to_parent[0], &token, 1) == 1, "the child did not import");
    EXPECT_OK(aclrtFree(block));
    EXPECT_OK(aclrtMalloc(&next, BLOCK_BYTES, ACL_MEM_MALLOC_HUGE_FIRST)); /* usually at block's address */
    EXPECT_OK(aclrtMemset(next, BLOCK_BYTES, 0x0F, BLOCK_BYTES));
    CHECK(write(from_parent[1], &token, 1) == 1, "cannot signal the child");
    CHECK(read(to_parent[0], &token, 1) == 1, "the child did not write");
    int wstatus = 0;
    waitpid(child, &wstatus, 0);
    CHECK(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0, "the importing process failed (status %d)", wstatus);
    unsigned first = tu_dev_byte(next, 0), last = tu_dev_byte(next, BLOCK_BYTES - 1);
    CHECK(first == 0x0F && last == 0x0F, "the importer of a freed block wrote into the new block: %#x %#x",
          first, last);
    EXPECT_OK(aclrtFree(next));
    close(to_parent[0]);
    close(to_parent[1]);
    close(from_parent[0]);
    close(from_parent[1]);
}

/* ---- a closed key, its descriptor number taken by another file ----------------------------- */

typedef struct closed_keys {
    char closed[KEY_LEN], sibling_closed[KEY_LEN], sibling_live[KEY_LEN], later[KEY_LEN];
} closed_keys;

static int import_closed(void *ctx)
{
    const closed_keys *keys = ctx;
    expect_key_refused(keys->closed);
    expect_key_refused(keys->sibling_closed);
    expect_key_reads(keys->later, 4096, 0x5A, 0x11);
    expect_key_reads(keys->sibling_live, 0, 0x11, 0x22); /* the later key's write, same memory */
    return child_status();
}

static void test_closed_keys_fail(void)
{
    closed_keys keys;
    void *block = NULL;
    EXPECT_OK(aclrtMalloc(&block, BLOCK_BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_OK(aclrtMemset(block, BLOCK_BYTES, 0x5A, BLOCK_BYTES));
    EXPECT_OK(aclrtIpcMemGetExportKey(block, BLOCK_BYTES, keys.closed, KEY_LEN, 0));
    EXPECT_OK(aclrtIpcMemClose(keys.closed));
    /* the lowest free descriptor is the one the key named: a file of the same size takes it */
    char path[] = "/tmp/aclnn_ipc_keys_XXXXXX";
    int other = mkstemp(path);
    CHECK(other >= 0, "mkstemp failed");
    unlink(path);
    CHECK(ftruncate(other, (off_t)BLOCK_BYTES) == 0, "ftruncate failed");
    CHECK(pwrite(other, "file", 4, 0) == 4, "pwrite failed");
    /* two keys of one memory; one is closed, then a third key is made */
    EXPECT_OK(aclrtIpcMemGetExportKey(block, BLOCK_BYTES, keys.sibling_closed, KEY_LEN, 0));
    EXPECT_OK(aclrtIpcMemGetExportKey(block, BLOCK_BYTES, keys.sibling_live, KEY_LEN, 0));
    EXPECT_OK(aclrtIpcMemClose(keys.sibling_closed));
    EXPECT_OK(aclrtIpcMemGetExportKey(block, BLOCK_BYTES, keys.later, KEY_LEN, 0));
    EXPECT(aclrtIpcMemClose(keys.closed), ACL_ERROR_INVALID_PARAM, keys.closed);
    if (run_importer(import_closed, &keys, "closed keys")) {
        char head[5] = {0};
        CHECK(pread(other, head, 4, 0) == 4 && memcmp(head, "file", 4) == 0,
              "the file that took the closed key's descriptor was changed: \"%s\"", head);
        unsigned first = tu_dev_byte(block, 0);
        CHECK(first == 0x22, "the exporter sees %#x at byte 0", first);
    }
    close(other);
    EXPECT_OK(aclrtIpcMemClose(keys.sibling_live));
    EXPECT_OK(aclrtIpcMemClose(keys.later));
    EXPECT_OK(aclrtFree(block));
}

/* ---- aclrtMapMem memory: IPC keys and shareable handles ------------------------------------ */

typedef struct vmm_keys {
    char closed[KEY_LEN], live[KEY_LEN];
    uint64_t shareable;
    size_t size;
} vmm_keys;

static int import_vmm_live(void *ctx)
{
    const vmm_keys *keys = ctx;
    expect_key_refused(keys->closed);
    expect_key_reads(keys->live, keys->size - 1, 0x66, 0x77);
    aclrtDrvMemHandle mine = NULL;
    void *va = NULL;
    EXPECT_OK(aclrtMemImportFromShareableHandle(keys->shareable, 0, &mine));
    EXPECT_OK(aclrtReserveMemAddress(&va, keys->size, 0, NULL, 0));
    EXPECT_OK(aclrtMapMem(va, keys->size, 0, mine, 0));
    unsigned seen = tu_dev_byte(va, 0);
    CHECK(seen == 0x77, "the shareable handle shows %#x, expected the key's write 0x77", seen);
    EXPECT_OK(aclrtMemset((char *)va + 1, 1, 0x88, 1));
    EXPECT_OK(aclrtUnmapMem(va));
    EXPECT_OK(aclrtFreePhysical(mine));
    EXPECT_OK(aclrtReleaseMemAddress(va));
    return child_status();
}

static int import_vmm_freed(void *ctx)
{
    const vmm_keys *keys = ctx;
    expect_key_refused(keys->live);
    aclrtDrvMemHandle mine = NULL;
    char needle[32];
    snprintf(needle, sizeof needle, "%#llx", (unsigned long long)keys->shareable);
    EXPECT(aclrtMemImportFromShareableHandle(keys->shareable, 0, &mine), ACL_ERROR_RT_PARAM_INVALID, needle);
    CHECK(mine == NULL, "a refused import returned handle %p", (void *)mine);
    return child_status();
}

static void test_vmm_exports_die_with_handle(void)
{
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    vmm_keys keys;
    EXPECT_OK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &keys.size));
    aclrtDrvMemHandle handle = NULL;
    void *va = NULL;
    EXPECT_OK(aclrtMallocPhysical(&handle, keys.size, &prop, 0));
    EXPECT_OK(aclrtReserveMemAddress(&va, keys.size, 0, NULL, 0));
    EXPECT_OK(aclrtMapMem(va, keys.size, 0, handle, 0));
    EXPECT_OK(aclrtMemset(va, keys.size, 0x66, keys.size));
    EXPECT_OK(aclrtIpcMemGetExportKey(va, keys.size, keys.closed, KEY_LEN, 0));
    EXPECT_OK(aclrtIpcMemClose(keys.closed)); /* the handle lives on: the key must still die */
    EXPECT_OK(aclrtIpcMemGetExportKey(va, keys.size, keys.live, KEY_LEN, 0));
    EXPECT_OK(aclrtMemExportToShareableHandle(handle, ACL_MEM_HANDLE_TYPE_NONE, ACL_RT_VMM_EXPORT_FLAG_DEFAULT,
                                              &keys.shareable));
    if (run_importer(import_vmm_live, &keys, "aclrtMapMem memory")) {
        unsigned first = tu_dev_byte(va, 0), second = tu_dev_byte(va, 1);
        CHECK(first == 0x77 && second == 0x88, "the exporter sees %#x %#x", first, second);
    }
    EXPECT_OK(aclrtUnmapMem(va));
    EXPECT_OK(aclrtFreePhysical(handle)); /* the live key and the shareable handle die here */
    EXPECT_OK(aclrtReleaseMemAddress(va));
    char path[] = "/tmp/aclnn_ipc_handle_XXXXXX";
    int other = mkstemp(path); /* takes the freed handle's descriptor number */
    CHECK(other >= 0, "mkstemp failed");
    unlink(path);
    CHECK(ftruncate(other, (off_t)keys.size) == 0, "ftruncate failed");
    run_importer(import_vmm_freed, &keys, "freed handle");
    close(other);
    EXPECT(aclrtIpcMemClose(keys.live), ACL_ERROR_INVALID_PARAM, keys.live);
}

int main(void)
{
    if (tu_open_device() != 0)
        return 1;
    test_free_kills_keys();
    test_freed_pages_are_private();
    test_closed_keys_fail();
    test_vmm_exports_die_with_handle();
    tu_close_device();
    return tu_finish("test_runtime_ipc_keys");
}
