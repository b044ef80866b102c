/* Handles outlive a range of handle space (libaclnn/src/meta/handle_space.c): objects are carved
 * from 1 GiB ranges of reserved addresses and no address is handed out twice (design decision
 * 20, docs/runtime.md).  About 1.6 million tensors created and destroyed use up the first range;
 * across the switch to the next one a tensor created before it keeps working, a destroyed
 * tensor's handle stays dead, and addresses only grow inside a range.  Leaving a used-up range
 * once read one entry past the range's page counts (found by `make fuzz`); the -O3 build never
 * made that read, so only `make sanitize` (ASan) sees it fail without the fix. */
#include <stdint.h>
#include <stdio.h>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "test_util.h"

/* More tensors than one range holds (1 GiB / 4 KiB pages, six 656-byte tensors a page: 1,572,864),
 * so a new range is reached well before the cap. */
#define MAX_TENSORS 4000000L

static aclTensor *small_tensor(int64_t n)
{
    const int64_t dims[1] = {n}, strides[1] = {1};
    return aclCreateTensor(dims, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, dims, 1, (void *)(uintptr_t)64);
}

/* The tensor's one dimension, or -1. */
static int64_t first_dim(const aclTensor *t)
{
    int64_t *dims = NULL;
    uint64_t ndim = 0;
    if (aclGetViewShape(t, &dims, &ndim) != 0 || ndim != 1) return -1;
    const int64_t d = dims[0];
    aclnnCpuFreeArray(dims);
    return d;
}

int main(void)
{
    aclTensor *kept = small_tensor(7);
    aclTensor *stale = small_tensor(3);
    CHECK(kept != NULL && stale != NULL, "tensors created");
    EXPECT_OK(aclDestroyTensor(stale));

    uintptr_t prev = (uintptr_t)kept;
    long created = 0, switches = 0;
    while (created < MAX_TENSORS && switches == 0) {
        aclTensor *t = small_tensor(1);
        created++;
        if (t == NULL) {
            CHECK(0, "tensor %ld not created", created);
            break;
        }
        const uintptr_t at = (uintptr_t)t;
        CHECK(at != (uintptr_t)stale, "tensor %ld got the destroyed tensor's address", created);
        if (at < prev || at - prev > 8192) switches++; /* a new range */
        prev = at;
        EXPECT_OK(aclDestroyTensor(t));
    }
    CHECK(switches == 1, "no new range after %ld tensors", created);
    printf("a new range after %ld tensors\n", created);

    /* the next range works: objects keep coming, in increasing order */
    for (int i = 0; i < 1000; i++) {
        aclTensor *t = small_tensor(i + 1);
        CHECK(t != NULL && (uintptr_t)t > prev, "tensor %d of the new range at %p after %p", i, (void *)t,
              (void *)prev);
        CHECK(first_dim(t) == i + 1, "tensor %d of the new range reads back", i);
        prev = (uintptr_t)t;
        EXPECT_OK(aclDestroyTensor(t));
    }
    /* the tensor from before the switch still works; the destroyed one is still dead */
    CHECK(first_dim(kept) == 7, "the tensor created before the switch reads back");
    EXPECT(aclDestroyTensor(stale), ACLNN_ERR_PARAM_INVALID, "aclDestroyTensor");
    EXPECT_OK(aclDestroyTensor(kept));
    return tu_finish("test_meta_handle_space");
}
