/*
 * tdt_shared.c - the queues behind acltdt*: one registry in POSIX shared memory per user, so that
 * a queue id names the same queue in every process of that user (CANN's queues live on the
 * device, where any process that was granted access attaches to them by id).
 *
 * The registry (shm "/aclnn-tdt-<uid>-<layout>-<size>") holds a fixed table of queues and routes
 * under one process-shared robust mutex; a process that dies holding it leaves it consistent
 * again for the next one (EOWNERDEAD).  Each queue is a ring of `depth` slots; a slot names a
 * message by a serial number, the message itself being a shared-memory object of its own
 * (tdt_message.c), so the lock is never held during a copy of the payload.  One condition per
 * queue (CLOCK_MONOTONIC, process-shared) is broadcast on every change; waiters re-check their
 * queue, which may also have been destroyed meanwhile.
 *
 * Permissions: the creating process has all three; another process has those a manager granted
 * it (acltdtGrantQueue) once it attached (acltdtAttachQueue).  Queues whose creator and
 * attached processes have all exited are reclaimed, messages included, by the next process that
 * creates a queue (a crash leaves nothing behind for longer than that).
 *
 * Routes: a bound route forwards what arrives in its source queue to its destination queue, as
 * CANN's queue scheduler does on the device: here the process that enqueues into the source (or
 * dequeues from the destination, making room) moves the messages under the lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/tdt_internal.h"

#define TDTQ_MAX_QUEUES 64
#define TDTQ_MAX_GRANTS 16
#define TDTQ_MAX_ROUTES 128
#define TDTQ_LAYOUT 0x7464747131ULL /* "tdtq1": bump when the registry's layout changes */
#define TDTQ_ROUTE_DEPTH 8          /* longest src -> dst -> dst chain forwarded in one go */

typedef struct tdtq_grant {
    int32_t pid;
    uint32_t permission;
    bool attached;
} tdtq_grant;

typedef struct tdtq_slot {
    uint64_t serial;
    uint64_t data_size; /* the segments' bytes together (acltdtDequeueData checks its buffer) */
} tdtq_slot;

typedef struct tdtq_queue {
    bool in_use;
    uint32_t qid;
    int32_t owner_pid;
    uint32_t depth;
    char name[NN_TDT_NAME_MAX];
    uint32_t head;  /* oldest slot */
    uint32_t count; /* messages queued */
    pthread_cond_t changed;
    tdtq_grant grants[TDTQ_MAX_GRANTS];
    tdtq_slot slots[NN_TDT_DEPTH_MAX];
} tdtq_queue;

typedef struct tdtq_route {
    bool in_use;
    uint32_t src;
    uint32_t dst;
} tdtq_route;

typedef struct tdtq_registry {
    uint64_t layout;
    _Atomic uint32_t ready;
    pthread_mutex_t lock;
    pthread_cond_t grants_changed;
    uint32_t next_qid;
    uint64_t next_serial;
    tdtq_route routes[TDTQ_MAX_ROUTES];
    tdtq_queue queues[TDTQ_MAX_QUEUES];
} tdtq_registry;

static tdtq_registry *registry;
static aclError registry_status = ACL_SUCCESS;
static pthread_once_t registry_once = PTHREAD_ONCE_INIT;

/* ---- the registry's memory ------------------------------------------------------------------ */

static void registry_init_objects(tdtq_registry *reg)
{
    pthread_mutexattr_t mattr;
    pthread_mutexattr_init(&mattr);
    pthread_mutexattr_setpshared(&mattr, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&mattr, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&reg->lock, &mattr);
    pthread_mutexattr_destroy(&mattr);
    pthread_condattr_t cattr;
    pthread_condattr_init(&cattr);
    pthread_condattr_setpshared(&cattr, PTHREAD_PROCESS_SHARED);
    pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
    pthread_cond_init(&reg->grants_changed, &cattr);
    for (int i = 0; i < TDTQ_MAX_QUEUES; i++)
        pthread_cond_init(&reg->queues[i].changed, &cattr);
    pthread_condattr_destroy(&cattr);
    reg->layout = TDTQ_LAYOUT;
    reg->next_qid = 1;
    reg->next_serial = 1;
    atomic_store(&reg->ready, 1);
}

/* Maps the registry, creating it when this process is the first; the creator initializes it
 * and the others wait (briefly) for its ready flag. */
static void registry_open(void)
{
    char name[80], layout[40];
    snprintf(layout, sizeof layout, "%llx-%zx", (unsigned long long)TDTQ_LAYOUT, sizeof(tdtq_registry));
    nn_tdt_shm_name(name, sizeof name, layout);
    bool creator = true;
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 && errno == EEXIST) {
        creator = false;
        fd = shm_open(name, O_RDWR, 0600);
    }
    if (fd < 0 || (creator && ftruncate(fd, sizeof(tdtq_registry)) != 0)) {
        registry_status = nn_error(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "acltdt: cannot open the queue registry %s: %s.",
                                   name, strerror(errno));
        if (fd >= 0)
            close(fd);
        return;
    }
    struct stat st;
    for (int tries = 0; !creator && fstat(fd, &st) == 0 && (size_t)st.st_size < sizeof(tdtq_registry) &&
                        tries < 2000; tries++)
        usleep(1000);
    void *map = mmap(NULL, sizeof(tdtq_registry), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        registry_status = nn_error(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "acltdt: cannot map the queue registry %s: %s.",
                                   name, strerror(errno));
        return;
    }
    tdtq_registry *reg = map;
    if (creator)
        registry_init_objects(reg);
    for (int tries = 0; atomic_load(&reg->ready) == 0 && tries < 2000; tries++)
        usleep(1000);
    if (atomic_load(&reg->ready) == 0 || reg->layout != TDTQ_LAYOUT) {
        registry_status = nn_error(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "acltdt: the queue registry %s was never "
                                   "initialized (its creator died?): remove it from /dev/shm.", name);
        munmap(map, sizeof(tdtq_registry));
        return;
    }
    registry = reg;
}

static void reg_lock(void)
{
    if (pthread_mutex_lock(&registry->lock) == EOWNERDEAD)
        pthread_mutex_consistent(&registry->lock);
}

static void reg_unlock(void) { pthread_mutex_unlock(&registry->lock); }

/* Locks the registry (opening it once); false with the error in *err when it cannot be had. */
static bool reg_enter(aclError *err)
{
    pthread_once(&registry_once, registry_open);
    if (registry == NULL) {
        *err = registry_status;
        return false;
    }
    reg_lock();
    return true;
}

/* Waits on `cond` until `deadline` (NULL: forever); false once the deadline passed. */
static bool reg_wait(pthread_cond_t *cond, const struct timespec *deadline)
{
    int rc = deadline ? pthread_cond_timedwait(cond, &registry->lock, deadline)
                      : pthread_cond_wait(cond, &registry->lock);
    if (rc == EOWNERDEAD)
        pthread_mutex_consistent(&registry->lock);
    return rc != ETIMEDOUT;
}

/* ---- queues --------------------------------------------------------------------------------- */

static tdtq_queue *queue_find_locked(uint32_t qid)
{
    for (int i = 0; i < TDTQ_MAX_QUEUES; i++)
        if (registry->queues[i].in_use && registry->queues[i].qid == qid)
            return &registry->queues[i];
    return NULL;
}

static bool pid_alive(int32_t pid)
{
    return pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH);
}

static uint32_t permission_locked(const tdtq_queue *q, int32_t pid)
{
    if (q->owner_pid == pid)
        return NN_TDT_PERMISSION_ALL;
    for (int i = 0; i < TDTQ_MAX_GRANTS; i++)
        if (q->grants[i].pid == pid && q->grants[i].attached)
            return q->grants[i].permission;
    return 0;
}

/* The queue `qid` if this process may do `need` with it, else NULL and the error in *err. */
static tdtq_queue *queue_for_locked(const char *api, uint32_t qid, uint32_t need, aclError *err)
{
    tdtq_queue *q = queue_find_locked(qid);
    if (q == NULL) {
        *err = nn_error(ACL_ERROR_RT_PARAM_INVALID, "%s: qid %u is not a queue (never created, or destroyed).",
                        api, qid);
        return NULL;
    }
    if ((permission_locked(q, (int32_t)getpid()) & need) != need) {
        *err = nn_error(ACL_ERROR_RT_NO_PERMISSION, "%s: this process (pid %d) lacks permission %u on queue %u: "
                        "the creator grants it (acltdtGrantQueue) and this process attaches (acltdtAttachQueue).",
                        api, (int)getpid(), need, qid);
        return NULL;
    }
    return q;
}

static void queue_drop_messages_locked(tdtq_queue *q)
{
    for (uint32_t i = 0; i < q->count; i++)
        nn_tdt_message_unlink(q->slots[(q->head + i) % q->depth].serial);
    q->head = 0;
    q->count = 0;
    pthread_cond_broadcast(&q->changed);
}

static void queue_release_locked(tdtq_queue *q)
{
    queue_drop_messages_locked(q);
    for (int i = 0; i < TDTQ_MAX_ROUTES; i++) {
        tdtq_route *r = &registry->routes[i];
        if (r->in_use && (r->src == q->qid || r->dst == q->qid))
            r->in_use = false;
    }
    q->in_use = false;
    memset(q->grants, 0, sizeof q->grants);
    pthread_cond_broadcast(&registry->grants_changed);
}

/* Queues no live process uses any more (their creator and every attached process exited). */
static void reclaim_orphans_locked(void)
{
    for (int i = 0; i < TDTQ_MAX_QUEUES; i++) {
        tdtq_queue *q = &registry->queues[i];
        if (!q->in_use || pid_alive(q->owner_pid))
            continue;
        bool used = false;
        for (int g = 0; g < TDTQ_MAX_GRANTS; g++)
            used = used || (q->grants[g].attached && pid_alive(q->grants[g].pid));
        if (!used)
            queue_release_locked(q);
    }
}

static bool name_taken_locked(const char *name)
{
    for (int i = 0; i < TDTQ_MAX_QUEUES; i++)
        if (registry->queues[i].in_use && strcmp(registry->queues[i].name, name) == 0)
            return true;
    return false;
}

aclError nn_tdtq_create(const char *api, const char *name, uint32_t depth, uint32_t *qid)
{
    if (depth < NN_TDT_DEPTH_MIN || depth > NN_TDT_DEPTH_MAX)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: depth %u is outside [%d, %d].", api, depth, NN_TDT_DEPTH_MIN,
                        NN_TDT_DEPTH_MAX);
    aclError err = ACL_SUCCESS;
    if (!reg_enter(&err))
        return err;
    reclaim_orphans_locked();
    tdtq_queue *q = NULL;
    for (int i = 0; i < TDTQ_MAX_QUEUES && q == NULL; i++)
        if (!registry->queues[i].in_use)
            q = &registry->queues[i];
    if (name[0] != '\0' && name_taken_locked(name))
        err = nn_error(ACL_ERROR_INVALID_PARAM, "%s: a queue named \"%s\" exists already.", api, name);
    else if (q == NULL)
        err = nn_error(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "%s: all %d queues are in use.", api, TDTQ_MAX_QUEUES);
    if (err != ACL_SUCCESS) {
        reg_unlock();
        return err;
    }
    q->qid = registry->next_qid++;
    q->owner_pid = (int32_t)getpid();
    q->depth = depth;
    q->head = 0;
    q->count = 0;
    memset(q->grants, 0, sizeof q->grants);
    if (name[0] != '\0')
        snprintf(q->name, sizeof q->name, "%s", name);
    else
        snprintf(q->name, sizeof q->name, "queue_%u", q->qid);
    q->in_use = true;
    *qid = q->qid;
    reg_unlock();
    return ACL_SUCCESS;
}

static bool has_route_locked(uint32_t qid)
{
    for (int i = 0; i < TDTQ_MAX_ROUTES; i++)
        if (registry->routes[i].in_use && (registry->routes[i].src == qid || registry->routes[i].dst == qid))
            return true;
    return false;
}

aclError nn_tdtq_destroy(const char *api, uint32_t qid)
{
    aclError err = ACL_SUCCESS;
    if (!reg_enter(&err))
        return err;
    tdtq_queue *q = queue_for_locked(api, qid, ACL_TDT_QUEUE_PERMISSION_MANAGE, &err);
    if (q != NULL && has_route_locked(qid))
        err = nn_error(ACL_ERROR_FAILURE, "%s: qid [%u] can not be destroyed, it needs to be unbound first.", api,
                       qid);
    else if (q != NULL)
        queue_release_locked(q);
    reg_unlock();
    return err;
}

/* ---- messages in and out -------------------------------------------------------------------- */

static void queue_put_locked(tdtq_queue *q, uint64_t serial, uint64_t data_size)
{
    tdtq_slot *slot = &q->slots[(q->head + q->count) % q->depth];
    slot->serial = serial;
    slot->data_size = data_size;
    q->count++;
    pthread_cond_broadcast(&q->changed);
}

static void forward_locked(tdtq_queue *src, int depth_left);

/* Moves messages of the queues routed into `dst` that were waiting for room. */
static void refill_locked(tdtq_queue *dst, int depth_left)
{
    for (int i = 0; i < TDTQ_MAX_ROUTES; i++) {
        tdtq_route *r = &registry->routes[i];
        tdtq_queue *src = r->in_use && r->dst == dst->qid ? queue_find_locked(r->src) : NULL;
        if (src != NULL)
            forward_locked(src, depth_left);
    }
}

/* Forwards the messages of `src` to the destinations of its routes while each has room. */
static void forward_locked(tdtq_queue *src, int depth_left)
{
    if (depth_left <= 0)
        return;
    tdtq_queue *dsts[TDTQ_MAX_ROUTES];
    int ndst = 0;
    for (int i = 0; i < TDTQ_MAX_ROUTES; i++) {
        tdtq_route *r = &registry->routes[i];
        tdtq_queue *dst = r->in_use && r->src == src->qid ? queue_find_locked(r->dst) : NULL;
        if (dst != NULL && dst != src)
            dsts[ndst++] = dst;
    }
    while (ndst > 0 && src->count > 0) {
        for (int d = 0; d < ndst; d++)
            if (dsts[d]->count >= dsts[d]->depth)
                return;
        tdtq_slot slot = src->slots[src->head];
        src->head = (src->head + 1) % src->depth;
        src->count--;
        pthread_cond_broadcast(&src->changed);
        for (int d = 0; d < ndst; d++) {
            uint64_t serial = slot.serial;
            if (d > 0 && !nn_tdt_message_copy(slot.serial, serial = registry->next_serial++))
                continue;
            queue_put_locked(dsts[d], serial, slot.data_size);
        }
        for (int d = 0; d < ndst; d++)
            forward_locked(dsts[d], depth_left - 1);
    }
}

/* Waits until `ready(q)` or the deadline; the queue may be destroyed meanwhile (NULL, *err set).
 * *timed_out says whether the deadline passed first. */
static tdtq_queue *wait_queue_locked(const char *api, uint32_t qid, uint32_t need, bool want_room,
                                     int32_t timeout_ms, bool *timed_out, aclError *err)
{
    struct timespec deadline;
    if (timeout_ms > 0)
        nn_rt_deadline(&deadline, timeout_ms);
    bool expired = timeout_ms == 0;
    *timed_out = false;
    for (;;) {
        tdtq_queue *q = queue_for_locked(api, qid, need, err);
        if (q == NULL)
            return NULL;
        bool ready = want_room ? q->count < q->depth : q->count > 0;
        if (ready || expired) { /* a change that came with the deadline still counts */
            *timed_out = !ready;
            return q;
        }
        expired = !reg_wait(&q->changed, timeout_ms > 0 ? &deadline : NULL);
    }
}

aclError nn_tdtq_push(const char *api, uint32_t qid, const nn_tdt_segment *segments, uint32_t count,
                      int32_t timeout_ms)
{
    aclError err = ACL_SUCCESS;
    if (!reg_enter(&err))
        return err;
    uint64_t serial = registry->next_serial++;
    reg_unlock();
    err = nn_tdt_message_write(api, serial, segments, count);
    if (err != ACL_SUCCESS)
        return err;
    uint64_t data_size = 0;
    for (uint32_t i = 0; i < count; i++)
        data_size += segments[i].len;
    reg_lock();
    bool timed_out;
    tdtq_queue *q = wait_queue_locked(api, qid, ACL_TDT_QUEUE_PERMISSION_ENQUEUE, true, timeout_ms, &timed_out, &err);
    if (q != NULL && !timed_out) {
        queue_put_locked(q, serial, data_size);
        forward_locked(q, TDTQ_ROUTE_DEPTH);
    }
    reg_unlock();
    if (q == NULL || timed_out) {
        nn_tdt_message_unlink(serial);
        return q == NULL ? err : ACL_ERROR_RT_QUEUE_FULL;
    }
    return ACL_SUCCESS;
}

aclError nn_tdtq_pop(const char *api, uint32_t qid, int32_t timeout_ms, size_t max_data, size_t *data_size,
                     nn_tdt_message *out)
{
    aclError err = ACL_SUCCESS;
    if (!reg_enter(&err))
        return err;
    bool timed_out;
    tdtq_queue *q = wait_queue_locked(api, qid, ACL_TDT_QUEUE_PERMISSION_DEQUEUE, false, timeout_ms, &timed_out,
                                      &err);
    tdtq_slot slot = {0, 0};
    if (q != NULL && !timed_out) {
        slot = q->slots[q->head];
        *data_size = (size_t)slot.data_size;
        if (slot.data_size > max_data) {
            err = nn_error(ACL_ERROR_INVALID_PARAM, "%s: the message (%llu bytes) does not fit the %zu-byte buffer; "
                           "it stays in queue %u.", api, (unsigned long long)slot.data_size, max_data, qid);
        } else {
            q->head = (q->head + 1) % q->depth;
            q->count--;
            pthread_cond_broadcast(&q->changed);
            refill_locked(q, TDTQ_ROUTE_DEPTH);
        }
    }
    reg_unlock();
    if (q == NULL || err != ACL_SUCCESS)
        return err;
    if (timed_out)
        return ACL_ERROR_RT_QUEUE_EMPTY;
    return nn_tdt_message_read(api, slot.serial, out);
}

aclError nn_tdtq_size(const char *api, uint32_t qid, size_t *size)
{
    aclError err = ACL_SUCCESS;
    if (!reg_enter(&err))
        return err;
    tdtq_queue *q = queue_for_locked(api, qid, 0, &err);
    if (q != NULL)
        *size = q->count;
    reg_unlock();
    return err;
}

aclError nn_tdtq_reset(const char *api, uint32_t qid)
{
    aclError err = ACL_SUCCESS;
    if (!reg_enter(&err))
        return err;
    tdtq_queue *q = queue_for_locked(api, qid, ACL_TDT_QUEUE_PERMISSION_MANAGE, &err);
    if (q != NULL) {
        queue_drop_messages_locked(q);
        refill_locked(q, TDTQ_ROUTE_DEPTH);
    }
    reg_unlock();
    return err;
}

/* ---- other processes ------------------------------------------------------------------------ */

aclError nn_tdtq_grant(const char *api, uint32_t qid, int32_t pid, uint32_t permission, int32_t timeout_ms)
{
    (void)timeout_ms; /* granting never waits here: the registry is local */
    if (permission == 0 || (permission & ~(uint32_t)NN_TDT_PERMISSION_ALL) != 0)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: permission %u must be a non-empty mix of MANAGE (1), "
                        "DEQUEUE (2) and ENQUEUE (4).", api, permission);
    if (pid <= 0)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: pid %d is not a process id.", api, (int)pid);
    aclError err = ACL_SUCCESS;
    if (!reg_enter(&err))
        return err;
    tdtq_queue *q = queue_for_locked(api, qid, ACL_TDT_QUEUE_PERMISSION_MANAGE, &err);
    tdtq_grant *slot = NULL;
    for (int i = 0; q != NULL && i < TDTQ_MAX_GRANTS && (slot == NULL || slot->pid != pid); i++)
        if (q->grants[i].pid == pid || (slot == NULL && q->grants[i].pid == 0))
            slot = &q->grants[i];
    if (q != NULL && slot == NULL)
        err = nn_error(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "%s: queue %u already has %d grants.", api, qid,
                       TDTQ_MAX_GRANTS);
    if (slot != NULL) {
        slot->attached = slot->pid == pid && slot->attached;
        slot->pid = pid;
        slot->permission = permission;
        pthread_cond_broadcast(&registry->grants_changed);
    }
    reg_unlock();
    return err;
}

aclError nn_tdtq_attach(const char *api, uint32_t qid, int32_t timeout_ms, uint32_t *permission)
{
    aclError err = ACL_SUCCESS;
    if (!reg_enter(&err))
        return err;
    struct timespec deadline;
    if (timeout_ms > 0)
        nn_rt_deadline(&deadline, timeout_ms);
    int32_t me = (int32_t)getpid();
    for (;;) {
        tdtq_queue *q = queue_find_locked(qid);
        if (q == NULL) {
            err = nn_error(ACL_ERROR_RT_PARAM_INVALID, "%s: qid %u is not a queue.", api, qid);
            break;
        }
        tdtq_grant *grant = NULL;
        for (int i = 0; i < TDTQ_MAX_GRANTS && grant == NULL; i++)
            grant = q->grants[i].pid == me ? &q->grants[i] : NULL;
        if (q->owner_pid == me || grant != NULL) {
            if (grant != NULL)
                grant->attached = true;
            *permission = permission_locked(q, me);
            break;
        }
        if (timeout_ms == 0 || !reg_wait(&registry->grants_changed, timeout_ms > 0 ? &deadline : NULL)) {
            err = nn_error(ACL_ERROR_RT_NO_PERMISSION, "%s: queue %u granted this process (pid %d) nothing within "
                           "%d ms.", api, qid, (int)me, (int)timeout_ms);
            break;
        }
    }
    reg_unlock();
    return err;
}

/* ---- routes --------------------------------------------------------------------------------- */

static tdtq_route *route_find_locked(uint32_t src, uint32_t dst)
{
    for (int i = 0; i < TDTQ_MAX_ROUTES; i++)
        if (registry->routes[i].in_use && registry->routes[i].src == src && registry->routes[i].dst == dst)
            return &registry->routes[i];
    return NULL;
}

aclError nn_tdtq_bind(const char *api, uint32_t src, uint32_t dst, int32_t *status)
{
    aclError err = ACL_SUCCESS;
    if (!reg_enter(&err))
        return err;
    tdtq_queue *from = queue_for_locked(api, src, ACL_TDT_QUEUE_PERMISSION_DEQUEUE, &err);
    tdtq_queue *to = from ? queue_for_locked(api, dst, ACL_TDT_QUEUE_PERMISSION_ENQUEUE, &err) : NULL;
    tdtq_route *route = NULL;
    if (to != NULL && src == dst)
        err = nn_error(ACL_ERROR_INVALID_PARAM, "%s: a route from queue %u to itself.", api, src);
    else if (to != NULL && route_find_locked(src, dst) == NULL) {
        for (int i = 0; i < TDTQ_MAX_ROUTES && route == NULL; i++)
            route = registry->routes[i].in_use ? NULL : &registry->routes[i];
        if (route == NULL)
            err = nn_error(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "%s: all %d routes are in use.", api, TDTQ_MAX_ROUTES);
    }
    if (route != NULL) {
        *route = (tdtq_route){true, src, dst};
        forward_locked(from, TDTQ_ROUTE_DEPTH);
    }
    *status = err == ACL_SUCCESS ? ACL_TDT_QUEUE_ROUTE_BIND : ACL_TDT_QUEUE_ROUTE_BIND_ABNORMAL;
    reg_unlock();
    return err;
}

aclError nn_tdtq_unbind(const char *api, uint32_t src, uint32_t dst, int32_t *status)
{
    aclError err = ACL_SUCCESS;
    if (!reg_enter(&err))
        return err;
    tdtq_route *route = route_find_locked(src, dst);
    if (route == NULL)
        err = nn_error(ACL_ERROR_INVALID_PARAM, "%s: no route from queue %u to queue %u is bound.", api, src, dst);
    else
        route->in_use = false;
    *status = err == ACL_SUCCESS ? ACL_TDT_QUEUE_ROUTE_UNBIND : ACL_TDT_QUEUE_ROUTE_BIND_ABNORMAL;
    reg_unlock();
    return err;
}

static bool route_matches(const tdtq_route *r, int32_t mode, uint32_t src, uint32_t dst)
{
    switch (mode) {
    case ACL_TDT_QUEUE_ROUTE_QUERY_SRC:
        return r->src == src;
    case ACL_TDT_QUEUE_ROUTE_QUERY_DST:
        return r->dst == dst;
    case ACL_TDT_QUEUE_ROUTE_QUERY_SRC_AND_DST:
        return r->src == src && r->dst == dst;
    default: /* ABNORMAL: a bound route here never is */
        return false;
    }
}

aclError nn_tdtq_query_routes(const char *api, int32_t mode, uint32_t src, uint32_t dst,
                              bool (*visit)(void *ctx, uint32_t src, uint32_t dst, int32_t status), void *ctx)
{
    aclError err = ACL_SUCCESS;
    if (!reg_enter(&err))
        return err;
    for (int i = 0; i < TDTQ_MAX_ROUTES && err == ACL_SUCCESS; i++) {
        const tdtq_route *r = &registry->routes[i];
        if (r->in_use && route_matches(r, mode, src, dst) && !visit(ctx, r->src, r->dst, ACL_TDT_QUEUE_ROUTE_BIND))
            err = nn_error(ACL_ERROR_BAD_ALLOC, "%s: out of memory listing routes.", api);
    }
    reg_unlock();
    return err;
}
