/*
 * Drives ggml's CANN backend through ggml's public ggml-backend API, using only the parts
 * that need no aclnn operator libaclnn lacks: device enumeration and memory, device and
 * host buffers, set/get (sync and async), memset and clear, device-to-device copies on one
 * stream and between two devices, events between two streams, and graph compute of a graph of views (with the
 * ACL graph build this is a capture followed by a replay). Every value read back is
 * compared with what the host wrote. Built and run by tools/ggml_cann.sh, not by CI.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"

/* Small buffers on purpose: ggml-cann places tensors 128-aligned from a buffer's start and
 * sizes the buffer as if the start were aligned, which aclrtMalloc's alignment must honour. */
enum { PROBE_ELEMENTS = 4096, VIEW_ELEMENTS = 4096 };

static int failures;

static void check(int ok, const char *what)
{
    printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) {
        failures++;
    }
}

/* Values no memset or zero fill can produce, distinct per element. */
static void fill_pattern(float *values, int count, float offset)
{
    for (int i = 0; i < count; i++) {
        values[i] = offset + 0.25f * (float)i;
    }
}

static int same_floats(const float *expected, const float *actual, int count)
{
    return memcmp(expected, actual, (size_t)count * sizeof(float)) == 0;
}

static int all_bytes(const unsigned char *bytes, size_t count, unsigned char value)
{
    for (size_t i = 0; i < count; i++) {
        if (bytes[i] != value) {
            return 0;
        }
    }
    return 1;
}

static ggml_backend_dev_t probe_devices(void)
{
    ggml_backend_dev_t cann = ggml_backend_dev_by_name("CANN0");
    printf("devices: %zu\n", ggml_backend_dev_count());
    for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
        ggml_backend_dev_t dev = ggml_backend_dev_get(i);
        printf("  %s: %s\n", ggml_backend_dev_name(dev), ggml_backend_dev_description(dev));
    }
    check(cann != NULL, "CANN0 is enumerated");
    if (cann != NULL) {
        size_t free_bytes = 0;
        size_t total_bytes = 0;
        ggml_backend_dev_memory(cann, &free_bytes, &total_bytes);
        printf("  CANN0 memory: %zu free of %zu\n", free_bytes, total_bytes);
        check(total_bytes > 0 && free_bytes <= total_bytes, "CANN0 reports its memory");
    }
    return cann;
}

static void probe_set_get_copy(ggml_backend_t backend)
{
    struct ggml_init_params params = { 4 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, 1 };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_tensor *a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, PROBE_ELEMENTS);
    struct ggml_tensor *b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, PROBE_ELEMENTS);
    ggml_backend_buffer_t buffer = ggml_backend_alloc_ctx_tensors(ctx, backend);
    float *written = malloc(PROBE_ELEMENTS * sizeof(float));
    float *read = malloc(PROBE_ELEMENTS * sizeof(float));
    size_t bytes = PROBE_ELEMENTS * sizeof(float);

    check(buffer != NULL && ggml_backend_buffer_get_size(buffer) >= 2 * bytes, "device buffer allocated");
    fill_pattern(written, PROBE_ELEMENTS, 1.0f);
    ggml_backend_tensor_set(a, written, 0, bytes);
    ggml_backend_tensor_get(a, read, 0, bytes);
    check(same_floats(written, read, PROBE_ELEMENTS), "tensor_set then tensor_get");

    ggml_backend_tensor_get(a, read, bytes / 2, bytes / 4);
    check(same_floats(written + PROBE_ELEMENTS / 2, read, PROBE_ELEMENTS / 4), "tensor_get of a slice");

    ggml_backend_buffer_clear(buffer, 0);
    ggml_backend_tensor_get(a, read, 0, bytes);
    check(all_bytes((const unsigned char *)read, bytes, 0), "buffer_clear");

    ggml_backend_tensor_set(a, written, 0, bytes);
    ggml_backend_tensor_copy(a, b);
    ggml_backend_tensor_get(b, read, 0, bytes);
    check(same_floats(written, read, PROBE_ELEMENTS), "tensor_copy device to device");

    ggml_backend_tensor_memset(b, 0x5a, 64, 256);
    ggml_backend_tensor_get(b, read, 0, bytes);
    check(same_floats(written, read, 16) && all_bytes((const unsigned char *)read + 64, 256, 0x5a) &&
              same_floats(written + 80, read + 80, PROBE_ELEMENTS - 80),
          "tensor_memset of a range");

    fill_pattern(written, PROBE_ELEMENTS, -7.0f);
    ggml_backend_tensor_set_async(backend, a, written, 0, bytes);
    ggml_backend_synchronize(backend);
    ggml_backend_tensor_get_async(backend, a, read, 0, bytes);
    ggml_backend_synchronize(backend);
    check(same_floats(written, read, PROBE_ELEMENTS), "tensor_set_async then tensor_get_async");

    memset(read, 0, bytes);
    ggml_backend_tensor_copy_async(backend, backend, a, b);
    ggml_backend_synchronize(backend);
    ggml_backend_tensor_get(b, read, 0, bytes);
    check(same_floats(written, read, PROBE_ELEMENTS), "tensor_copy_async on one stream");

    free(read);
    free(written);
    ggml_backend_buffer_free(buffer);
    ggml_free(ctx);
}

/* ggml copies between two devices with aclrtDeviceCanAccessPeer, aclrtDeviceEnablePeerAccess
 * (both directions, again at every copy) and aclrtMemcpyAsync; the runtime shows a second
 * device when ASCEND_RT_VISIBLE_DEVICES names two. ggml enables access to the source device
 * from whichever device is current before it switches to the source, which CANN refuses
 * (100000) when the source is current; so the destination is made current first, as after
 * ggml's scheduler has worked on it. */
static void probe_peer_copy(ggml_backend_t backend)
{
    ggml_backend_dev_t peer_dev = ggml_backend_dev_by_name("CANN1");
    if (peer_dev == NULL) {
        printf("skip peer copy: no CANN1 (set ASCEND_RT_VISIBLE_DEVICES=0,1)\n");
        return;
    }
    ggml_backend_t peer = ggml_backend_dev_init(peer_dev, NULL);
    struct ggml_init_params params = { 2 * ggml_tensor_overhead(), NULL, 1 };
    struct ggml_context *src_ctx = ggml_init(params);
    struct ggml_context *dst_ctx = ggml_init(params);
    struct ggml_tensor *src = ggml_new_tensor_1d(src_ctx, GGML_TYPE_F32, PROBE_ELEMENTS);
    struct ggml_tensor *dst = ggml_new_tensor_1d(dst_ctx, GGML_TYPE_F32, PROBE_ELEMENTS);
    ggml_backend_buffer_t src_buffer = ggml_backend_alloc_ctx_tensors(src_ctx, backend);
    ggml_backend_buffer_t dst_buffer = ggml_backend_alloc_ctx_tensors(dst_ctx, peer);
    float *written = malloc(PROBE_ELEMENTS * sizeof(float));
    float *read = malloc(PROBE_ELEMENTS * sizeof(float));
    size_t bytes = PROBE_ELEMENTS * sizeof(float);
    int copied = 1;

    for (int round = 0; round < 2; round++) {
        fill_pattern(written, PROBE_ELEMENTS, 100.0f * (float)round);
        ggml_backend_tensor_set(src, written, 0, bytes);
        ggml_backend_synchronize(peer);
        ggml_backend_tensor_copy_async(backend, peer, src, dst);
        ggml_backend_synchronize(peer);
        ggml_backend_tensor_get(dst, read, 0, bytes);
        copied = copied && same_floats(written, read, PROBE_ELEMENTS);
    }
    check(copied, "tensor_copy_async CANN0 -> CANN1, twice");

    free(read);
    free(written);
    ggml_backend_buffer_free(dst_buffer);
    ggml_backend_buffer_free(src_buffer);
    ggml_free(dst_ctx);
    ggml_free(src_ctx);
    ggml_backend_free(peer);
}

static void probe_host_buffer(ggml_backend_dev_t dev)
{
    ggml_backend_buffer_type_t host_type = ggml_backend_dev_host_buffer_type(dev);
    ggml_backend_buffer_t host = host_type ? ggml_backend_buft_alloc_buffer(host_type, 1 << 20) : NULL;

    check(host != NULL && ggml_backend_buffer_is_host(host), "pinned host buffer allocated");
    if (host != NULL) {
        memset(ggml_backend_buffer_get_base(host), 0x11, 1 << 20);
        check(all_bytes(ggml_backend_buffer_get_base(host), 1 << 20, 0x11), "pinned host buffer is host memory");
        ggml_backend_buffer_free(host);
    }
}

static void probe_events(ggml_backend_dev_t dev, ggml_backend_t backend, ggml_backend_t second)
{
    ggml_backend_event_t event = ggml_backend_event_new(dev);

    check(event != NULL, "event created");
    if (event != NULL) {
        ggml_backend_event_record(event, backend);
        ggml_backend_event_wait(second, event);
        ggml_backend_event_synchronize(event);
        ggml_backend_synchronize(second);
        check(1, "event recorded, waited for and synchronized");
        ggml_backend_event_free(event);
    }
}

/* A graph of views only: ggml-cann skips view nodes, so with the ACL graph build the
 * first compute captures an empty model runtime instance and every compute replays it. */
static void probe_view_graph(ggml_backend_t backend)
{
    struct ggml_init_params params = { 8 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, 1 };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_tensor *a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, VIEW_ELEMENTS);
    struct ggml_tensor *square = ggml_reshape_2d(ctx, a, 64, VIEW_ELEMENTS / 64);
    struct ggml_tensor *turned = ggml_transpose(ctx, square);
    struct ggml_cgraph *graph = ggml_new_graph(ctx);
    ggml_backend_buffer_t buffer = ggml_backend_alloc_ctx_tensors(ctx, backend);
    float *written = malloc(VIEW_ELEMENTS * sizeof(float));
    float *read = malloc(VIEW_ELEMENTS * sizeof(float));
    int computed = 1;

    ggml_build_forward_expand(graph, turned);
    fill_pattern(written, VIEW_ELEMENTS, 3.0f);
    ggml_backend_tensor_set(a, written, 0, VIEW_ELEMENTS * sizeof(float));
    for (int round = 0; round < 3; round++) {
        computed = computed && ggml_backend_graph_compute(backend, graph) == GGML_STATUS_SUCCESS;
    }
    ggml_backend_tensor_get(a, read, 0, VIEW_ELEMENTS * sizeof(float));
    check(computed && same_floats(written, read, VIEW_ELEMENTS), "graph of views computed three times");

    free(read);
    free(written);
    ggml_backend_buffer_free(buffer);
    ggml_free(ctx);
}

int main(void)
{
    ggml_backend_dev_t dev = probe_devices();
    if (dev == NULL) {
        return 1;
    }
    ggml_backend_t backend = ggml_backend_dev_init(dev, NULL);
    ggml_backend_t second = ggml_backend_dev_init(dev, NULL);
    check(backend != NULL && second != NULL, "two CANN0 backends (streams) created");
    if (backend == NULL || second == NULL) {
        return 1;
    }
    probe_set_get_copy(backend);
    probe_peer_copy(backend);
    probe_host_buffer(dev);
    probe_events(dev, backend, second);
    probe_view_graph(backend);
    ggml_backend_free(second);
    ggml_backend_free(backend);
    printf("%s: %d failure(s)\n", failures ? "FAIL" : "ok", failures);
    return failures ? 1 : 0;
}
