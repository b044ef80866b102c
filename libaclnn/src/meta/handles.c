/*
 * handles.c - the registry of live meta objects (aclTensor, arrays, scalars, lists).
 *
 * A handle is looked up here before any of its fields is read: a destroyed pointer, a pointer
 * that was never a handle (a stack or heap address) or a handle of another kind is then a
 * status and a message instead of a read of freed or foreign memory.  A magic word inside the
 * object cannot do this: reading it from a freed block is itself the use-after-free, and the
 * compiler may drop the store that clears it just before free().
 *
 * The registry is a hash set of pointers with their kind: open addressing, linear probing,
 * tombstones for removed entries, grown at half load, under one mutex.  A lookup costs a hash and
 * usually one probe; an operator's phase 1 makes one per handle argument.
 */
#include <stdint.h>
#include <stdlib.h>

#include <pthread.h>

#include "base/nn_base.h"
#include "check/nn_check.h"
#include "meta/nn_meta.h"

#define TOMBSTONE ((uintptr_t)1) /* a removed entry: probing goes on past it */

typedef struct slot {
    uintptr_t handle; /* 0 = empty, TOMBSTONE = removed */
    nn_handle_kind kind;
} slot;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static slot *g_slots;
static size_t g_capacity; /* a power of two, or 0 before the first handle */
static size_t g_used;     /* live entries plus tombstones */

static size_t home_of(uintptr_t handle, size_t capacity)
{
    /* Heap addresses share their low bits (alignment) and often their high ones: mix them. */
    uint64_t h = (uint64_t)handle * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 32) & (capacity - 1);
}

/* The slot holding `handle`, or NULL (under g_lock). */
static slot *find_locked(uintptr_t handle)
{
    if (g_capacity == 0)
        return NULL;
    for (size_t i = home_of(handle, g_capacity);; i = (i + 1) & (g_capacity - 1)) {
        if (g_slots[i].handle == handle)
            return &g_slots[i];
        if (g_slots[i].handle == 0)
            return NULL;
    }
}

static void place_locked(slot *slots, size_t capacity, uintptr_t handle, nn_handle_kind kind)
{
    size_t i = home_of(handle, capacity);
    while (slots[i].handle != 0 && slots[i].handle != TOMBSTONE)
        i = (i + 1) & (capacity - 1);
    slots[i].handle = handle;
    slots[i].kind = kind;
}

/* Rebuilds the table with room for four times the live entries, dropping tombstones (under
 * g_lock); the capacity may stay the same when most of the used slots were tombstones. */
static bool grow_locked(void)
{
    size_t live = 0;
    for (size_t i = 0; i < g_capacity; i++)
        live += g_slots[i].handle > TOMBSTONE;
    size_t capacity = 256;
    while (capacity < 4 * (live + 1))
        capacity *= 2;
    slot *slots = calloc(capacity, sizeof *slots);
    if (slots == NULL)
        return false;
    for (size_t i = 0; i < g_capacity; i++)
        if (g_slots[i].handle > TOMBSTONE)
            place_locked(slots, capacity, g_slots[i].handle, g_slots[i].kind);
    free(g_slots);
    g_slots = slots;
    g_capacity = capacity;
    g_used = live;
    return true;
}

bool nn_handle_add(const void *handle, nn_handle_kind kind)
{
    bool added = false;
    pthread_mutex_lock(&g_lock);
    if (2 * (g_used + 1) <= g_capacity || grow_locked()) {
        place_locked(g_slots, g_capacity, (uintptr_t)handle, kind);
        g_used++;
        added = true;
    }
    pthread_mutex_unlock(&g_lock);
    return added;
}

nn_handle_kind nn_handle_remove(const void *handle, nn_handle_kind kind)
{
    pthread_mutex_lock(&g_lock);
    slot *s = handle == NULL ? NULL : find_locked((uintptr_t)handle);
    nn_handle_kind found = s ? s->kind : NN_HANDLE_NONE;
    if (found == kind)
        s->handle = TOMBSTONE; /* still counted in g_used until the next growth */
    pthread_mutex_unlock(&g_lock);
    return found;
}

nn_handle_kind nn_handle_kind_of(const void *handle)
{
    if (handle == NULL)
        return NN_HANDLE_NONE;
    pthread_mutex_lock(&g_lock);
    const slot *s = find_locked((uintptr_t)handle);
    nn_handle_kind kind = s ? s->kind : NN_HANDLE_NONE;
    pthread_mutex_unlock(&g_lock);
    return kind;
}

size_t nn_tensors_current_data(const aclTensor *const *tensors, const uint64_t *serials, size_t count,
                               void **data)
{
    size_t dead = count;
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < count && dead == count; i++) {
        if (tensors[i] == NULL)
            continue;
        const slot *s = find_locked((uintptr_t)tensors[i]);
        if (s == NULL || s->kind != NN_HANDLE_TENSOR || tensors[i]->serial != serials[i])
            dead = i;
        else
            data[i] = tensors[i]->data;
    }
    pthread_mutex_unlock(&g_lock);
    return dead;
}

/* With the article, for messages: "an aclTensor". */
static const char *const kind_phrases[] = {
    [NN_HANDLE_NONE] = "a destroyed or foreign handle",
    [NN_HANDLE_TENSOR] = "an aclTensor",
    [NN_HANDLE_INT_ARRAY] = "an aclIntArray",
    [NN_HANDLE_FLOAT_ARRAY] = "an aclFloatArray",
    [NN_HANDLE_BOOL_ARRAY] = "an aclBoolArray",
    [NN_HANDLE_SCALAR] = "an aclScalar",
    [NN_HANDLE_TENSOR_LIST] = "an aclTensorList",
    [NN_HANDLE_SCALAR_LIST] = "an aclScalarList",
};

const char *nn_handle_kind_name(nn_handle_kind kind)
{
    return kind == NN_HANDLE_NONE ? "handle" : kind_phrases[kind] + 3; /* past "an " */
}

const char *nn_handle_problem(const void *handle, nn_handle_kind expected)
{
    nn_handle_kind kind = nn_handle_kind_of(handle);
    return kind == expected ? NULL : kind_phrases[kind];
}

aclnnStatus nn_handle_check(const char *fn, const char *name, const void *handle,
                          nn_handle_kind kind)
{
    const char *problem = nn_handle_problem(handle, kind);
    if (problem == NULL)
        return ACLNN_SUCCESS;
    return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: %s must be a live %s, got %s (%p).", fn, name,
                    nn_handle_kind_name(kind), problem, handle);
}

void *nn_handle_register(void *object, nn_handle_kind kind, const char *fn)
{
    if (object != NULL && !nn_handle_add(object, kind)) {
        nn_handle_free(object);
        nn_error(ACLNN_ERR_INNER_NULLPTR, "%s: out of memory.", fn);
        return NULL;
    }
    nn_check_object_created(object, nn_handle_kind_name(kind), fn, false);
    return object;
}

aclnnStatus nn_handle_release(const char *fn, const char *name, const void *handle,
                              nn_handle_kind kind)
{
    nn_handle_kind found = nn_handle_remove(handle, kind);
    if (found == kind) {
        nn_check_object_destroyed(handle);
        return ACLNN_SUCCESS;
    }
    return nn_error(ACLNN_ERR_PARAM_INVALID, "%s: %s %p is not a live %s (it is %s).", fn, name,
                    handle, nn_handle_kind_name(kind), kind_phrases[found]);
}
