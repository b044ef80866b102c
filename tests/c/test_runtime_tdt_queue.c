/*
 * test_runtime_tdt_queue.c - queues by id (acl/acl_tdt_queue.h):
 *   - attributes: name and depth set and read back; a short `len` is refused;
 *   - plain bytes: acltdtEnqueueData / acltdtDequeueData carry bytes and user data; a full queue
 *     returns ACL_ERROR_RT_QUEUE_FULL (207014), an empty one ACL_ERROR_RT_QUEUE_EMPTY (207013),
 *     after the timeout; a buffer too small is refused with the size needed and the message stays;
 *   - mbufs: a chain of three buffers (data lengths, user data) enqueued comes back as a chain of
 *     three with the same contents; the enqueued chain is gone (freed by the queue); a
 *     reference copy shares the bytes; acltdtEnqueue / acltdtDequeue give ACL_ERROR_FAILURE
 *     (500001) past the timeout, as CANN;
 *   - routes: a bound route forwards what enters the source to the destination, holding what the
 *     destination has no room for until a dequeue makes room; queries by source, destination and
 *     both; a queue with a route cannot be destroyed until it is unbound;
 *   - two threads: 300 messages through a queue of depth 4, in order, both sides waiting (-1);
 *   - two processes: a child (this program run again: a fresh process that finds the queues by
 *     id alone) without a grant is refused (ACL_ERROR_RT_NO_PERMISSION), then attaches once the
 *     parent granted it DEQUEUE on one queue and ENQUEUE on another, and answers each of the
 *     parent's 20 messages; an attach with no grant times out;
 *   - a queue whose process exited without destroying it (still holding messages) is reclaimed by
 *     the next acltdtCreateQueue: its id stops naming a queue.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "acl/acl_tdt_queue.h"

#include "test_util.h"

#define QUEUE_FULL 207014
#define QUEUE_EMPTY 207013
#define NO_PERMISSION 207006

/* A queue of `depth` named after `what` and this process. */
static uint32_t make_queue(const char *what, uint32_t depth)
{
    char name[96];
    snprintf(name, sizeof name, "test_tdtq_%s_%d", what, (int)getpid());
    const char *name_ptr = name;
    acltdtQueueAttr *attr = acltdtCreateQueueAttr();
    EXPECT_OK(acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_NAME_PTR, sizeof name_ptr, &name_ptr));
    EXPECT_OK(acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, sizeof depth, &depth));
    uint32_t qid = 0;
    EXPECT_OK(acltdtCreateQueue(attr, &qid));
    EXPECT_OK(acltdtDestroyQueueAttr(attr));
    return qid;
}

static void test_attributes(void)
{
    acltdtQueueAttr *attr = acltdtCreateQueueAttr();
    uint32_t depth = 0;
    size_t ret_size = 0;
    EXPECT_OK(acltdtGetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, sizeof depth, &ret_size, &depth));
    CHECK(depth == 8 && ret_size == 4, "default depth %u (%zu bytes)", depth, ret_size);
    const char *name = "attr_queue", *got = NULL;
    EXPECT_OK(acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_NAME_PTR, sizeof name, &name));
    EXPECT_OK(acltdtGetQueueAttr(attr, ACL_TDT_QUEUE_NAME_PTR, sizeof got, &ret_size, &got));
    CHECK(got != NULL && got != name && strcmp(got, "attr_queue") == 0, "name read back");
    uint16_t short_depth = 3;
    EXPECT(acltdtGetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, sizeof short_depth, &ret_size, &short_depth),
           ACL_ERROR_INVALID_PARAM, "acltdtGetQueueAttr");
    uint64_t long_depth = 3;
    EXPECT(acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, sizeof long_depth, &long_depth),
           ACL_ERROR_INVALID_PARAM, "acltdtSetQueueAttr");
    EXPECT(acltdtSetQueueAttr(attr, (acltdtQueueAttrType)7, sizeof depth, &depth), ACL_ERROR_INVALID_PARAM,
           "acltdtQueueAttrType");
    depth = 1;
    EXPECT_OK(acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, sizeof depth, &depth));
    uint32_t qid;
    EXPECT(acltdtCreateQueue(attr, &qid), ACL_ERROR_INVALID_PARAM, "depth");
    EXPECT_OK(acltdtDestroyQueueAttr(attr));
}

static void test_plain_bytes(void)
{
    uint32_t q = make_queue("bytes", 2);
    const char first[] = "first message", second[] = "second";
    unsigned char user[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    EXPECT_OK(acltdtEnqueueData(q, first, sizeof first, user, sizeof user, 0, 0));
    EXPECT_OK(acltdtEnqueueData(q, second, sizeof second, NULL, 0, 0, 0));
    CHECK(acltdtEnqueueData(q, first, sizeof first, NULL, 0, 0, 0) == QUEUE_FULL, "depth 2 holds 2");
    double t0 = tu_now_ms();
    CHECK(acltdtEnqueueData(q, first, sizeof first, NULL, 0, 80, 0) == QUEUE_FULL, "full after 80 ms");
    CHECK(tu_now_ms() - t0 >= 79, "an 80 ms timeout returned after %.1f ms", tu_now_ms() - t0);

    char buf[64];
    unsigned char user_out[8] = {0};
    size_t got = 0;
    EXPECT(acltdtDequeueData(q, buf, 4, &got, NULL, 0, 0), ACL_ERROR_INVALID_PARAM, "fit");
    CHECK(got == sizeof first, "the size needed is reported (%zu)", got);
    EXPECT_OK(acltdtDequeueData(q, buf, sizeof buf, &got, user_out, sizeof user_out, 0));
    CHECK(got == sizeof first && strcmp(buf, first) == 0, "first message back (%zu bytes)", got);
    CHECK(memcmp(user_out, user, sizeof user) == 0, "user data back");
    EXPECT_OK(acltdtDequeueData(q, buf, sizeof buf, &got, NULL, 0, -1));
    CHECK(got == sizeof second && strcmp(buf, second) == 0, "second message back");
    CHECK(acltdtDequeueData(q, buf, sizeof buf, &got, NULL, 0, 0) == QUEUE_EMPTY, "empty");
    t0 = tu_now_ms();
    CHECK(acltdtDequeueData(q, buf, sizeof buf, &got, NULL, 0, 50) == QUEUE_EMPTY, "empty after 50 ms");
    CHECK(tu_now_ms() - t0 >= 49, "a 50 ms timeout returned after %.1f ms", tu_now_ms() - t0);

    EXPECT(acltdtEnqueueData(q, NULL, 4, NULL, 0, 0, 0), ACL_ERROR_INVALID_PARAM, "acltdtEnqueueData");
    EXPECT(acltdtEnqueueData(q, first, sizeof first, user, 97, 0, 0), ACL_ERROR_INVALID_PARAM, "userDataSize");
    EXPECT(acltdtEnqueueData(987654, first, sizeof first, NULL, 0, 0, 0), ACL_ERROR_RT_PARAM_INVALID, "987654");
    EXPECT_OK(acltdtDestroyQueue(q));
    EXPECT(acltdtDestroyQueue(q), ACL_ERROR_RT_PARAM_INVALID, "acltdtDestroyQueue");
}

/* A buffer of `len` bytes, each (seed + i), with user data byte 0 = seed at offset 5. */
static acltdtBuf filled_buf(size_t len, unsigned char seed)
{
    acltdtBuf buf = NULL;
    EXPECT_OK(acltdtAllocBuf(len + 10, ACL_TDT_NORMAL_MEM, &buf));
    void *data = NULL;
    size_t size = 0;
    EXPECT_OK(acltdtGetBufData(buf, &data, &size));
    CHECK(size == len + 10, "buffer size %zu", size);
    for (size_t i = 0; i < len; i++)
        ((unsigned char *)data)[i] = (unsigned char)(seed + i);
    EXPECT_OK(acltdtSetBufDataLen(buf, len));
    EXPECT_OK(acltdtSetBufUserData(buf, &seed, 1, 5));
    return buf;
}

static void check_buf(acltdtBuf buf, size_t len, unsigned char seed, int index)
{
    size_t data_len = 0;
    EXPECT_OK(acltdtGetBufDataLen(buf, &data_len));
    CHECK(data_len == len, "buffer %d: %zu bytes, expected %zu", index, data_len, len);
    void *data = NULL;
    size_t size = 0;
    EXPECT_OK(acltdtGetBufData(buf, &data, &size));
    int same = 1;
    for (size_t i = 0; data && i < len && i < size; i++)
        same = same && ((unsigned char *)data)[i] == (unsigned char)(seed + i);
    CHECK(same, "buffer %d: bytes differ", index);
    unsigned char user = 0;
    EXPECT_OK(acltdtGetBufUserData(buf, &user, 1, 5));
    CHECK(user == seed, "buffer %d: user data %u", index, user);
}

static void test_mbufs(void)
{
    uint32_t q = make_queue("mbuf", 2);
    acltdtBuf head = filled_buf(100, 1), b1 = filled_buf(7, 50), b2 = filled_buf(3000, 200);
    EXPECT_OK(acltdtAppendBufChain(head, b1));
    EXPECT_OK(acltdtAppendBufChain(head, b2));
    EXPECT(acltdtAppendBufChain(head, b1), ACL_ERROR_INVALID_PARAM, "chain");
    EXPECT(acltdtFreeBuf(b1), ACL_ERROR_INVALID_PARAM, "head");
    uint32_t num = 0;
    EXPECT_OK(acltdtGetBufChainNum(head, &num));
    CHECK(num == 3, "chain of %u", num);
    acltdtBuf second = NULL;
    EXPECT_OK(acltdtGetBufFromChain(head, 1, &second));
    CHECK(second == b1, "index 1 is the first appended buffer");
    EXPECT(acltdtGetBufFromChain(head, 3, &second), ACL_ERROR_INVALID_PARAM, "index");
    unsigned char big[97];
    EXPECT(acltdtSetBufUserData(head, big, 97, 0), ACL_ERROR_INVALID_PARAM, "96");
    EXPECT(acltdtSetBufUserData(head, big, 2, 95), ACL_ERROR_INVALID_PARAM, "offset");
    EXPECT(acltdtSetBufDataLen(head, 111), ACL_ERROR_INVALID_PARAM, "len");
    EXPECT(acltdtAllocBuf(8, 2, &second), ACL_ERROR_INVALID_PARAM, "type");

    EXPECT_OK(acltdtEnqueue(q, head, 0));
    EXPECT(acltdtFreeBuf(head), ACL_ERROR_INVALID_PARAM, "live"); /* the queue took the chain */
    acltdtBuf ref = NULL, copy = NULL;
    acltdtBuf lone = filled_buf(16, 9);
    EXPECT_OK(acltdtCopyBufRef(lone, &ref));
    void *lone_data, *ref_data;
    size_t size;
    EXPECT_OK(acltdtGetBufData(lone, &lone_data, &size));
    EXPECT_OK(acltdtGetBufData(ref, &ref_data, &size));
    CHECK(lone_data == ref_data, "a reference copy shares the bytes");
    EXPECT_OK(acltdtFreeBuf(lone));
    check_buf(ref, 16, 9, -1); /* still there through the reference */
    EXPECT_OK(acltdtEnqueue(q, ref, 0));
    copy = filled_buf(4, 4);
    double t0 = tu_now_ms();
    EXPECT(acltdtEnqueue(q, copy, 30), ACL_ERROR_FAILURE, "full");
    CHECK(tu_now_ms() - t0 >= 29, "a 30 ms enqueue timeout returned after %.1f ms", tu_now_ms() - t0);
    EXPECT_OK(acltdtFreeBuf(copy));

    acltdtBuf out = NULL;
    EXPECT_OK(acltdtDequeue(q, &out, 0));
    EXPECT_OK(acltdtGetBufChainNum(out, &num));
    CHECK(num == 3, "the chain came back with %u buffers", num);
    const size_t lens[3] = {100, 7, 3000};
    const unsigned char seeds[3] = {1, 50, 200};
    for (uint32_t i = 0; i < num && i < 3; i++) {
        acltdtBuf member = NULL;
        EXPECT_OK(acltdtGetBufFromChain(out, i, &member));
        check_buf(member, lens[i], seeds[i], (int)i);
    }
    EXPECT_OK(acltdtFreeBuf(out));
    EXPECT_OK(acltdtDequeue(q, &out, -1));
    check_buf(out, 16, 9, 9);
    EXPECT_OK(acltdtFreeBuf(out));
    EXPECT(acltdtDequeue(q, &out, 0), ACL_ERROR_FAILURE, "empty");
    EXPECT_OK(acltdtDestroyQueue(q));
}

/* How many bound routes a query finds (-1 on failure). */
static int count_routes(int mode, uint32_t src, uint32_t dst)
{
    acltdtQueueRouteQueryInfo *info = acltdtCreateQueueRouteQueryInfo();
    acltdtQueueRouteList *list = acltdtCreateQueueRouteList();
    EXPECT_OK(acltdtSetQueueRouteQueryInfo(info, ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM, sizeof mode, &mode));
    EXPECT_OK(acltdtSetQueueRouteQueryInfo(info, ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32, sizeof src, &src));
    EXPECT_OK(acltdtSetQueueRouteQueryInfo(info, ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32, sizeof dst, &dst));
    int n = acltdtQueryQueueRoutes(info, list) == ACL_SUCCESS ? (int)acltdtGetQueueRouteNum(list) : -1;
    acltdtDestroyQueueRouteList(list);
    acltdtDestroyQueueRouteQueryInfo(info);
    return n;
}

static void test_routes(void)
{
    uint32_t src = make_queue("route_src", 4), dst = make_queue("route_dst", 2), other = make_queue("route_o", 2);
    acltdtQueueRoute *route = acltdtCreateQueueRoute(src, dst);
    acltdtQueueRouteList *list = acltdtCreateQueueRouteList();
    EXPECT_OK(acltdtAddQueueRoute(list, route));
    EXPECT_OK(acltdtBindQueueRoutes(list));
    acltdtQueueRoute *view = acltdtCreateQueueRoute(0, 0); /* a route object to copy into */
    EXPECT_OK(acltdtGetQueueRoute(list, 0, view));
    int32_t status = -1;
    uint32_t view_src = 0;
    size_t ret_size;
    EXPECT_OK(acltdtGetQueueRouteParam(view, ACL_TDT_QUEUE_ROUTE_STATUS_INT32, sizeof status, &ret_size, &status));
    EXPECT_OK(acltdtGetQueueRouteParam(view, ACL_TDT_QUEUE_ROUTE_SRC_UINT32, sizeof view_src, &ret_size, &view_src));
    CHECK(status == ACL_TDT_QUEUE_ROUTE_BIND && view_src == src, "after bind: status %d, src %u", status, view_src);
    EXPECT(acltdtGetQueueRoute(list, 1, view), ACL_ERROR_INVALID_PARAM, "index");
    EXPECT_OK(acltdtDestroyQueueRoute(view));

    for (int i = 0; i < 4; i++)
        EXPECT_OK(acltdtEnqueueData(src, &i, sizeof i, NULL, 0, 0, 0));
    int value = -1;
    size_t got;
    EXPECT_OK(acltdtDequeueData(dst, &value, sizeof value, &got, NULL, 0, 0));
    CHECK(value == 0, "first forwarded %d", value);
    EXPECT_OK(acltdtDequeueData(dst, &value, sizeof value, &got, NULL, 0, 0));
    CHECK(value == 1, "second forwarded %d", value);
    EXPECT_OK(acltdtDequeueData(dst, &value, sizeof value, &got, NULL, 0, 0));
    CHECK(value == 2, "third forwarded once the destination had room: %d", value);
    EXPECT_OK(acltdtDequeueData(dst, &value, sizeof value, &got, NULL, 0, 0));
    CHECK(value == 3, "fourth %d", value);
    CHECK(acltdtDequeueData(src, &value, sizeof value, &got, NULL, 0, 0) == QUEUE_EMPTY, "the source kept nothing");

    CHECK(count_routes(ACL_TDT_QUEUE_ROUTE_QUERY_SRC, src, 0) == 1, "by source");
    CHECK(count_routes(ACL_TDT_QUEUE_ROUTE_QUERY_DST, 0, dst) == 1, "by destination");
    CHECK(count_routes(ACL_TDT_QUEUE_ROUTE_QUERY_SRC_AND_DST, src, dst) == 1, "by both");
    CHECK(count_routes(ACL_TDT_QUEUE_ROUTE_QUERY_SRC_AND_DST, src, other) == 0, "another pair");
    acltdtQueueRouteQueryInfo *bare = acltdtCreateQueueRouteQueryInfo();
    acltdtQueueRouteList *scratch = acltdtCreateQueueRouteList(); /* a query empties its list first */
    EXPECT(acltdtQueryQueueRoutes(bare, scratch), ACL_ERROR_INVALID_PARAM, "mode");
    EXPECT_OK(acltdtDestroyQueueRouteQueryInfo(bare));
    EXPECT_OK(acltdtDestroyQueueRouteList(scratch));
    EXPECT(acltdtDestroyQueue(dst), ACL_ERROR_FAILURE, "unbound first");

    EXPECT_OK(acltdtUnbindQueueRoutes(list));
    CHECK(count_routes(ACL_TDT_QUEUE_ROUTE_QUERY_SRC, src, 0) == 0, "unbound");
    EXPECT_OK(acltdtEnqueueData(src, &value, sizeof value, NULL, 0, 0, 0));
    CHECK(acltdtDequeueData(dst, &value, sizeof value, &got, NULL, 0, 0) == QUEUE_EMPTY, "no longer forwarded");
    EXPECT_OK(acltdtDestroyQueueRouteList(list));
    EXPECT_OK(acltdtDestroyQueueRoute(route));
    EXPECT_OK(acltdtDestroyQueue(src));
    EXPECT_OK(acltdtDestroyQueue(dst));
    EXPECT_OK(acltdtDestroyQueue(other));
}

#define THREAD_MESSAGES 300

typedef struct pipe_ctx {
    uint32_t qid;
    int bad;
} pipe_ctx;

static void *consume(void *arg)
{
    pipe_ctx *ctx = arg;
    for (int i = 0; i < THREAD_MESSAGES; i++) {
        int pair[2] = {-1, -1};
        size_t got = 0;
        if (acltdtDequeueData(ctx->qid, pair, sizeof pair, &got, NULL, 0, -1) != ACL_SUCCESS || got != sizeof pair ||
            pair[0] != i || pair[1] != i * i)
            ctx->bad++;
    }
    return NULL;
}

static void test_two_threads(void)
{
    pipe_ctx ctx = {make_queue("threads", 4), 0};
    pthread_t thread;
    pthread_create(&thread, NULL, consume, &ctx);
    for (int i = 0; i < THREAD_MESSAGES; i++) {
        int pair[2] = {i, i * i};
        EXPECT_OK(acltdtEnqueueData(ctx.qid, pair, sizeof pair, NULL, 0, -1, 0));
    }
    pthread_join(thread, NULL);
    CHECK(ctx.bad == 0, "%d of %d messages arrived wrong or out of order", ctx.bad, THREAD_MESSAGES);
    EXPECT_OK(acltdtDestroyQueue(ctx.qid));
}

#define PROCESS_MESSAGES 20

/* The child: answers each request of `in` with its value doubled on `out`; exit status 0 when
 * every step went as expected. */
static int child_main(uint32_t in, uint32_t out, uint32_t never_granted)
{
    int bad = 0;
    int value = 0;
    size_t got = 0;
    bad += acltdtDequeueData(in, &value, sizeof value, &got, NULL, 0, 0) != NO_PERMISSION;
    uint32_t permission = 0;
    bad += acltdtAttachQueue(in, 5000, &permission) != ACL_SUCCESS;
    bad += permission != ACL_TDT_QUEUE_PERMISSION_DEQUEUE;
    bad += acltdtAttachQueue(out, 5000, &permission) != ACL_SUCCESS;
    bad += permission != ACL_TDT_QUEUE_PERMISSION_ENQUEUE;
    bad += acltdtAttachQueue(never_granted, 30, &permission) != NO_PERMISSION;
    bad += acltdtEnqueueData(in, &value, sizeof value, NULL, 0, 0, 0) != NO_PERMISSION; /* DEQUEUE only */
    for (int i = 0; i < PROCESS_MESSAGES; i++) {
        if (acltdtDequeueData(in, &value, sizeof value, &got, NULL, 0, 5000) != ACL_SUCCESS) {
            bad++;
            break;
        }
        value *= 2;
        bad += acltdtEnqueueData(out, &value, sizeof value, NULL, 0, 5000, 0) != ACL_SUCCESS;
    }
    return bad == 0 ? 0 : 10 + bad;
}

static void test_two_processes(const char *self)
{
    uint32_t in = make_queue("proc_in", 4), out = make_queue("proc_out", 4), lone = make_queue("proc_lone", 2);
    char ids[3][16];
    snprintf(ids[0], sizeof ids[0], "%u", in);
    snprintf(ids[1], sizeof ids[1], "%u", out);
    snprintf(ids[2], sizeof ids[2], "%u", lone);
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        /* cross-built tests run under user-mode qemu (ACLNN_TEST_EMULATOR): so must this program */
        const char *emulator = getenv("ACLNN_TEST_EMULATOR");
        if (emulator != NULL && emulator[0] != '\0')
            execlp(emulator, emulator, self, "child", ids[0], ids[1], ids[2], (char *)NULL);
        else
            execl(self, self, "child", ids[0], ids[1], ids[2], (char *)NULL);
        _exit(127);
    }
    tu_sleep_ms(20); /* the child tries before any grant */
    EXPECT_OK(acltdtGrantQueue(in, child, ACL_TDT_QUEUE_PERMISSION_DEQUEUE, 0));
    EXPECT_OK(acltdtGrantQueue(out, child, ACL_TDT_QUEUE_PERMISSION_ENQUEUE, 0));
    EXPECT(acltdtGrantQueue(in, child, 8, 0), ACL_ERROR_INVALID_PARAM, "permission");
    int bad = 0;
    for (int i = 0; i < PROCESS_MESSAGES; i++) {
        int value = 100 + i, answer = -1;
        size_t got = 0;
        EXPECT_OK(acltdtEnqueueData(in, &value, sizeof value, NULL, 0, 5000, 0));
        if (acltdtDequeueData(out, &answer, sizeof answer, &got, NULL, 0, 5000) != ACL_SUCCESS || answer != 2 * value)
            bad++;
    }
    CHECK(bad == 0, "%d of %d answers from the other process were wrong", bad, PROCESS_MESSAGES);
    int wstatus = 0;
    waitpid(child, &wstatus, 0);
    CHECK(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0, "the child process failed (status %d)", wstatus);
    EXPECT_OK(acltdtDestroyQueue(in));
    EXPECT_OK(acltdtDestroyQueue(out));
    EXPECT_OK(acltdtDestroyQueue(lone));
}

/* `self orphan`: creates a queue, queues three messages and exits without destroying it; prints
 * the queue's id. */
static int run_orphan(void)
{
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS)
        return 2;
    uint32_t q = make_queue("orphan", 4);
    for (int i = 0; i < 3; i++)
        EXPECT_OK(acltdtEnqueueData(q, &i, sizeof i, NULL, 0, 0, 0));
    printf("%u\n", q);
    return failures == 0 ? 0 : 3;
}

static void test_orphans_reclaimed(const char *self)
{
    char command[600];
    const char *emulator = getenv("ACLNN_TEST_EMULATOR"); /* as in test_two_processes */
    snprintf(command, sizeof command, "%s '%s' orphan", emulator != NULL ? emulator : "", self);
    FILE *child = popen(command, "r");
    unsigned q = 0;
    int read = child ? fscanf(child, "%u", &q) : 0;
    int status = child ? pclose(child) : -1;
    CHECK(read == 1 && status == 0, "the orphaning process failed (status %d)", status);
    int value;
    size_t got;
    EXPECT(acltdtDequeueData(q, &value, sizeof value, &got, NULL, 0, 0), NO_PERMISSION, "permission");
    uint32_t fresh = make_queue("after_orphan", 2); /* reclaims the orphan */
    EXPECT(acltdtDequeueData(q, &value, sizeof value, &got, NULL, 0, 0), ACL_ERROR_RT_PARAM_INVALID, "not a queue");
    EXPECT_OK(acltdtDestroyQueue(fresh));
}

/* The child's run: `self child <in> <out> <never granted>`. */
static int run_child(char **argv)
{
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS)
        return 2;
    int status = child_main((uint32_t)strtoul(argv[2], NULL, 10), (uint32_t)strtoul(argv[3], NULL, 10),
                            (uint32_t)strtoul(argv[4], NULL, 10));
    aclrtResetDevice(0);
    aclFinalize();
    return status;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "child") == 0)
        return run_child(argv);
    if (argc == 2 && strcmp(argv[1], "orphan") == 0)
        return run_orphan();
    if (tu_open_device() != 0)
        return 1;
    test_attributes();
    test_plain_bytes();
    test_mbufs();
    test_routes();
    test_two_threads();
    test_two_processes(argv[0]);
    test_orphans_reclaimed(argv[0]);
    tu_close_device();
    return tu_finish("test_runtime_tdt_queue");
}
