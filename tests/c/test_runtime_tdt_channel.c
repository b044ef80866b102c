/*
 * test_runtime_tdt_channel.c - data channels (acl/acl_tdt.h):
 *   - a dataset of four items (float32 [2,3], int8 [5], an int64 scalar, an end-of-sequence
 *     marker) arrives with the same types, dims, byte counts and bytes; the bytes were copied at
 *     the send (changing the source after it changes nothing received);
 *   - datasets come out in the order they went in; the channel's size counts them;
 *   - capacity 2: the third send with timeout 0 returns ACL_ERROR_RT_QUEUE_FULL (207014) at once,
 *     with 100 ms after at least 100 ms; a receive on an empty channel returns
 *     ACL_ERROR_RT_QUEUE_EMPTY (207013) likewise;
 *   - timeout -1 waits: a receiver blocked on an empty channel gets what another thread sends
 *     50 ms later, a sender blocked on a full channel finishes once a receive made room;
 *   - acltdtCleanChannel empties the channel; stop then destroy succeed;
 *   - bad arguments fail with CANN's codes and a message naming the function.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "acl/acl_tdt.h"

#include "test_util.h"

#define QUEUE_FULL 207014
#define QUEUE_EMPTY 207013

/* A channel name no other process of the user holds. */
static const char *unique_name(const char *what)
{
    static char name[96];
    snprintf(name, sizeof name, "test_tdt_%s_%d", what, (int)getpid());
    return name;
}

/* A dataset of one float32 item [1, 2] holding {value, value + 1}. */
static acltdtDataset *one_float_dataset(float *storage, float value)
{
    storage[0] = value;
    storage[1] = value + 1;
    int64_t dims[] = {1, 2};
    acltdtDataset *ds = acltdtCreateDataset();
    acltdtAddDataItem(ds, acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 2, ACL_FLOAT, storage, 2 * sizeof(float)));
    return ds;
}

static void destroy_with_items(acltdtDataset *ds)
{
    for (size_t i = 0; i < acltdtGetDatasetSize(ds); i++)
        acltdtDestroyDataItem(acltdtGetDataItem(ds, i));
    acltdtDestroyDataset(ds);
}

/* The first float of the one item a received dataset holds (-1 if it holds none). */
static float first_float(const acltdtDataset *ds)
{
    if (acltdtGetDatasetSize(ds) != 1)
        return -1.0f;
    const float *data = acltdtGetDataAddrFromItem(acltdtGetDataItem(ds, 0));
    return data ? data[0] : -1.0f;
}

static void test_round_trip(void)
{
    acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, unique_name("trip"), 4);
    CHECK(ch != NULL, "create: %s", aclGetRecentErrMsg());
    float f32[6] = {1.5f, -2.0f, 3.25f, 4.0f, 5.5f, -6.75f};
    int8_t i8[5] = {-128, -1, 0, 1, 127};
    int64_t scalar = 0x123456789abcdefLL;
    int64_t dims_f32[] = {2, 3}, dims_i8[] = {5};
    acltdtDataset *sent = acltdtCreateDataset();
    EXPECT_OK(acltdtAddDataItem(sent, acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims_f32, 2, ACL_FLOAT, f32, sizeof f32)));
    EXPECT_OK(acltdtAddDataItem(sent, acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims_i8, 1, ACL_INT8, i8, sizeof i8)));
    EXPECT_OK(acltdtAddDataItem(sent, acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, NULL, 0, ACL_INT64, &scalar, 8)));
    EXPECT_OK(acltdtAddDataItem(sent, acltdtCreateDataItem(ACL_TENSOR_DATA_END_OF_SEQUENCE, NULL, 0, ACL_FLOAT, NULL, 0)));
    EXPECT_OK(acltdtSendTensor(ch, sent, 0));
    f32[0] = 99.0f; /* after the send: the channel holds a copy */
    size_t size = 0;
    EXPECT_OK(acltdtQueryChannelSize(ch, &size));
    CHECK(size == 1, "size after one send %zu", size);

    acltdtDataset *got = acltdtCreateDataset();
    EXPECT_OK(acltdtReceiveTensor(ch, got, 0));
    CHECK(acltdtGetDatasetSize(got) == 4, "received %zu items", acltdtGetDatasetSize(got));
    const float want_f32[6] = {1.5f, -2.0f, 3.25f, 4.0f, 5.5f, -6.75f};
    struct {
        acltdtTensorType type;
        aclDataType dtype;
        size_t dim_num;
        const int64_t *dims;
        const void *bytes;
        size_t size;
    } want[4] = {{ACL_TENSOR_DATA_TENSOR, ACL_FLOAT, 2, dims_f32, want_f32, sizeof want_f32},
                 {ACL_TENSOR_DATA_TENSOR, ACL_INT8, 1, dims_i8, i8, sizeof i8},
                 {ACL_TENSOR_DATA_TENSOR, ACL_INT64, 0, NULL, &scalar, 8},
                 {ACL_TENSOR_DATA_END_OF_SEQUENCE, ACL_DT_UNDEFINED, 0, NULL, NULL, 0}};
    for (size_t i = 0; i < 4 && acltdtGetDatasetSize(got) == 4; i++) {
        acltdtDataItem *item = acltdtGetDataItem(got, i);
        CHECK(acltdtGetTensorTypeFromItem(item) == want[i].type, "item %zu type %d", i,
              (int)acltdtGetTensorTypeFromItem(item));
        CHECK(acltdtGetDataTypeFromItem(item) == want[i].dtype, "item %zu dtype %d", i,
              (int)acltdtGetDataTypeFromItem(item));
        CHECK(acltdtGetDimNumFromItem(item) == want[i].dim_num, "item %zu dim num %zu", i,
              acltdtGetDimNumFromItem(item));
        int64_t dims[4] = {0};
        if (want[i].dim_num) {
            EXPECT_OK(acltdtGetDimsFromItem(item, dims, 4));
            CHECK(memcmp(dims, want[i].dims, want[i].dim_num * sizeof(int64_t)) == 0, "item %zu dims", i);
        }
        CHECK(acltdtGetDataSizeFromItem(item) == want[i].size, "item %zu bytes %zu", i,
              acltdtGetDataSizeFromItem(item));
        const void *data = acltdtGetDataAddrFromItem(item);
        CHECK(want[i].size == 0 || (data != NULL && memcmp(data, want[i].bytes, want[i].size) == 0),
              "item %zu bytes differ", i);
        size_t slice_num = 9, slice_id = 9;
        EXPECT_OK(acltdtGetSliceInfoFromItem(item, &slice_num, &slice_id));
        CHECK(slice_num == 0 && slice_id == 0, "item %zu slice %zu/%zu", i, slice_num, slice_id);
    }
    /* A dataset of received items takes no added ones (CANN: 200006). */
    EXPECT(acltdtAddDataItem(got, acltdtGetDataItem(sent, 0)), ACL_ERROR_FEATURE_UNSUPPORTED, "acltdtAddDataItem");
    /* A second receive into it replaces its items (empty channel: 207013 first, nothing lost). */
    CHECK(acltdtReceiveTensor(ch, got, 0) == QUEUE_EMPTY, "empty channel");
    CHECK(acltdtGetDatasetSize(got) == 4, "a failed receive kept the items");
    /* A dataset holding items the program added cannot receive. */
    EXPECT_OK(acltdtSendTensor(ch, sent, 0));
    EXPECT(acltdtReceiveTensor(ch, sent, 0), ACL_ERROR_INVALID_PARAM, "acltdtReceiveTensor");
    EXPECT_OK(acltdtQueryChannelSize(ch, &size));
    CHECK(size == 1, "a refused receive took nothing (size %zu)", size);
    EXPECT_OK(acltdtReceiveTensor(ch, got, -1));
    CHECK(acltdtGetDatasetSize(got) == 4 && *(const float *)acltdtGetDataAddrFromItem(acltdtGetDataItem(got, 0)) == 99.0f,
          "the second dataset replaced the first");
    EXPECT_OK(acltdtDestroyDataset(got));
    destroy_with_items(sent);
    EXPECT_OK(acltdtStopChannel(ch));
    EXPECT_OK(acltdtDestroyChannel(ch));
}

static void test_order_capacity_timeouts(void)
{
    acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, unique_name("cap"), 2);
    CHECK(ch != NULL, "create: %s", aclGetRecentErrMsg());
    float a[2], b[2], c[2];
    acltdtDataset *da = one_float_dataset(a, 10), *db = one_float_dataset(b, 20), *dc = one_float_dataset(c, 30);
    EXPECT_OK(acltdtSendTensor(ch, da, 0));
    EXPECT_OK(acltdtSendTensor(ch, db, 0));
    double t0 = tu_now_ms();
    CHECK(acltdtSendTensor(ch, dc, 0) == QUEUE_FULL, "third send under capacity 2");
    CHECK(tu_now_ms() - t0 < 50, "timeout 0 returned after %.1f ms", tu_now_ms() - t0);
    t0 = tu_now_ms();
    CHECK(acltdtSendTensor(ch, dc, 100) == QUEUE_FULL, "third send with 100 ms");
    double waited = tu_now_ms() - t0;
    CHECK(waited >= 99, "a 100 ms send timeout returned after %.1f ms", waited);
    size_t size = 0;
    EXPECT_OK(acltdtQueryChannelSize(ch, &size));
    CHECK(size == 2, "size %zu", size);

    acltdtDataset *got = acltdtCreateDataset();
    EXPECT_OK(acltdtReceiveTensor(ch, got, 0));
    CHECK(first_float(got) == 10.0f, "first out %g", first_float(got));
    EXPECT_OK(acltdtSendTensor(ch, dc, 0));
    EXPECT_OK(acltdtReceiveTensor(ch, got, 0));
    CHECK(first_float(got) == 20.0f, "second out %g", first_float(got));
    EXPECT_OK(acltdtReceiveTensor(ch, got, 0));
    CHECK(first_float(got) == 30.0f, "third out %g", first_float(got));
    t0 = tu_now_ms();
    CHECK(acltdtReceiveTensor(ch, got, 0) == QUEUE_EMPTY, "receive on an empty channel");
    t0 = tu_now_ms();
    CHECK(acltdtReceiveTensor(ch, got, 60) == QUEUE_EMPTY, "receive with 60 ms");
    waited = tu_now_ms() - t0;
    CHECK(waited >= 59, "a 60 ms receive timeout returned after %.1f ms", waited);

    EXPECT_OK(acltdtSendTensor(ch, da, 0));
    EXPECT_OK(acltdtSendTensor(ch, db, 0));
    EXPECT_OK(acltdtCleanChannel(ch));
    EXPECT_OK(acltdtQueryChannelSize(ch, &size));
    CHECK(size == 0, "size after clean %zu", size);
    CHECK(acltdtReceiveTensor(ch, got, 0) == QUEUE_EMPTY, "receive after clean");
    EXPECT_OK(acltdtDestroyDataset(got));
    destroy_with_items(da);
    destroy_with_items(db);
    destroy_with_items(dc);
    EXPECT_OK(acltdtDestroyChannel(ch));
}

typedef struct blocking_ctx {
    acltdtChannelHandle *ch;
    float value;    /* what the thread received (receiver) */
    aclError ret;
    double done_ms; /* when its call returned */
} blocking_ctx;

static void *receive_forever(void *arg)
{
    blocking_ctx *ctx = arg;
    acltdtDataset *got = acltdtCreateDataset();
    ctx->ret = acltdtReceiveTensor(ctx->ch, got, -1);
    ctx->done_ms = tu_now_ms();
    ctx->value = first_float(got);
    acltdtDestroyDataset(got);
    return NULL;
}

static void *send_forever(void *arg)
{
    blocking_ctx *ctx = arg;
    float v[2];
    acltdtDataset *ds = one_float_dataset(v, ctx->value);
    ctx->ret = acltdtSendTensor(ctx->ch, ds, -1);
    ctx->done_ms = tu_now_ms();
    destroy_with_items(ds);
    return NULL;
}

static void test_blocking_between_threads(void)
{
    acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, unique_name("block"), 2);
    CHECK(ch != NULL, "create: %s", aclGetRecentErrMsg());
    blocking_ctx rx = {ch, 0, -1, 0};
    pthread_t thread;
    pthread_create(&thread, NULL, receive_forever, &rx);
    tu_sleep_ms(50);
    float v[2];
    acltdtDataset *ds = one_float_dataset(v, 7);
    double sent_at = tu_now_ms();
    EXPECT_OK(acltdtSendTensor(ch, ds, 0));
    pthread_join(thread, NULL);
    CHECK(rx.ret == ACL_SUCCESS && rx.value == 7.0f, "blocked receiver got ret %d value %g", rx.ret, rx.value);
    CHECK(rx.done_ms >= sent_at, "the receiver returned before the send");

    EXPECT_OK(acltdtSendTensor(ch, ds, 0));
    EXPECT_OK(acltdtSendTensor(ch, ds, 0)); /* full */
    blocking_ctx tx = {ch, 8, -1, 0};
    pthread_create(&thread, NULL, send_forever, &tx);
    tu_sleep_ms(50);
    size_t size = 0;
    EXPECT_OK(acltdtQueryChannelSize(ch, &size));
    CHECK(size == 2 && tx.ret == -1, "the sender waits on a full channel (size %zu, ret %d)", size, tx.ret);
    acltdtDataset *got = acltdtCreateDataset();
    double received_at = tu_now_ms();
    EXPECT_OK(acltdtReceiveTensor(ch, got, 0));
    pthread_join(thread, NULL);
    CHECK(tx.ret == ACL_SUCCESS && tx.done_ms >= received_at, "blocked sender: ret %d", tx.ret);
    EXPECT_OK(acltdtReceiveTensor(ch, got, 0));
    EXPECT_OK(acltdtReceiveTensor(ch, got, 0));
    CHECK(first_float(got) == 8.0f, "the blocked sender's dataset came last (%g)", first_float(got));
    EXPECT_OK(acltdtDestroyDataset(got));
    destroy_with_items(ds);
    EXPECT_OK(acltdtDestroyChannel(ch));
}

static void test_bad_arguments(void)
{
    CHECK(acltdtCreateChannelWithCapacity(0, NULL, 4) == NULL, "NULL name");
    EXPECT_MSG("NULL name", "acltdtCreateChannelWithCapacity", "name");
    CHECK(acltdtCreateChannelWithCapacity(0, unique_name("small"), 1) == NULL, "capacity 1");
    EXPECT_MSG("capacity 1", "acltdtCreateChannelWithCapacity", "capacity");
    CHECK(acltdtCreateChannelWithCapacity(0, unique_name("big"), 8193) == NULL, "capacity 8193");
    char long_name[200];
    memset(long_name, 'x', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    CHECK(acltdtCreateChannelWithCapacity(0, long_name, 4) == NULL, "a 200-character name");
    EXPECT_MSG("long name", "acltdtCreateChannelWithCapacity", "length");
    acltdtChannelHandle *ch = acltdtCreateChannelWithCapacity(0, unique_name("dup"), 2);
    CHECK(acltdtCreateChannelWithCapacity(0, unique_name("dup"), 2) == NULL, "a second channel of the same name");
    EXPECT_MSG("duplicate", "exists");
    acltdtChannelHandle *plain = acltdtCreateChannel(0, unique_name("plain"));
    CHECK(plain != NULL, "acltdtCreateChannel: %s", aclGetRecentErrMsg());
    EXPECT_OK(acltdtDestroyChannel(plain));

    int64_t dims[] = {2, 2};
    CHECK(acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, NULL, 2, ACL_FLOAT, NULL, 0) == NULL, "dims NULL, dimNum 2");
    EXPECT_MSG("dims NULL", "acltdtCreateDataItem", "dimNum");
    CHECK(acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 0, ACL_FLOAT, NULL, 0) == NULL, "dims, dimNum 0");
    CHECK(acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 129, ACL_FLOAT, NULL, 0) == NULL, "129 dims");
    CHECK(acltdtCreateDataItem(ACL_TENSOR_DATA_END_OF_SEQUENCE, dims, 2, ACL_FLOAT, NULL, 0) == NULL,
          "dims on an end-of-sequence item");
    float data[4] = {0};
    acltdtDataItem *item = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 2, ACL_FLOAT, data, sizeof data);
    int64_t out[1];
    EXPECT(acltdtGetDimsFromItem(item, out, 1), ACL_ERROR_INVALID_PARAM, "dimNum");
    EXPECT(acltdtGetDimsFromItem(NULL, out, 1), ACL_ERROR_INVALID_PARAM, "acltdtGetDimsFromItem");
    acltdtDataset *ds = acltdtCreateDataset();
    CHECK(acltdtGetDataItem(ds, 0) == NULL, "index 0 of an empty dataset");
    EXPECT_MSG("index", "acltdtGetDataItem", "index");
    CHECK(acltdtGetDatasetName(ds) != NULL && acltdtGetDatasetName(ds)[0] == '\0', "a dataset's name is \"\"");
    EXPECT(acltdtSendTensor(NULL, ds, 0), ACL_ERROR_INVALID_PARAM, "acltdtSendTensor");
    EXPECT(acltdtSendTensor(ch, NULL, 0), ACL_ERROR_INVALID_PARAM, "dataset");
    EXPECT(acltdtReceiveTensor(ch, NULL, 0), ACL_ERROR_INVALID_PARAM, "acltdtReceiveTensor");
    size_t size;
    EXPECT(acltdtQueryChannelSize(ch, NULL), ACL_ERROR_INVALID_PARAM, "acltdtQueryChannelSize");
    EXPECT(acltdtQueryChannelSize(NULL, &size), ACL_ERROR_INVALID_PARAM, "handle");
    EXPECT(acltdtDestroyChannel(NULL), ACL_ERROR_INVALID_PARAM, "acltdtDestroyChannel");
    EXPECT(acltdtDestroyDataset(NULL), ACL_ERROR_INVALID_PARAM, "acltdtDestroyDataset");
    EXPECT_OK(acltdtDestroyDataItem(item));
    EXPECT_OK(acltdtDestroyDataset(ds));
    EXPECT_OK(acltdtDestroyChannel(ch));
}

int main(void)
{
    if (tu_open_device() != 0)
        return 1;
    test_round_trip();
    test_order_capacity_timeouts();
    test_blocking_between_threads();
    test_bad_arguments();
    tu_close_device();
    return tu_finish("test_runtime_tdt_channel");
}
