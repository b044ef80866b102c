/*
 * pool_free_race.c - racecheck and memory pools (tests/test_check_mem_pool.py): a block of a
 * stream-ordered pool, written by an aclrtMemsetAsync on a second stream that a host function
 * holds back, is freed with aclrtMemPoolFreeAsync on the first stream.  argv[1]:
 *   race    no event orders the fill before the free: the block could go back to the pool (and to
 *           a new owner) while the fill still writes it, which racecheck must report
 *   event   the first stream waits for an event recorded after the fill: ordered, no report
 * Either way the program waits for both streams and destroys the pool; it prints "done".
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"
#include "acl/acl_rt_memory_soma.h"
#include "check_program.h"

static atomic_int g_release;

static void hold_stream(void *unused)
{
    (void)unused;
    const struct timespec pause = {0, 1000000};
    while (!atomic_load(&g_release))
        nanosleep(&pause, NULL);
}

static int free_while_filled(aclrtStream stream, const char *layout)
{
    aclrtStream filler = NULL;
    aclrtMemPool pool = NULL;
    aclrtMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    props.maxSize = (size_t)8 << 20;
    void *block = NULL;
    aclrtEvent filled = NULL;
    if (aclrtCreateStream(&filler) != ACL_SUCCESS || aclrtMemPoolCreate(&pool, &props) != ACL_SUCCESS ||
        aclrtMemPoolMallocAsync(&block, 4096, pool, stream) != ACL_SUCCESS || aclrtCreateEvent(&filled) != ACL_SUCCESS)
        return 1;
    aclrtSynchronizeStream(stream); /* the filler's tasks come after the allocation */
    aclrtLaunchHostFunc(filler, hold_stream, NULL);
    aclrtMemsetAsync(block, 4096, 0x7f, 4096, filler);
    aclrtRecordEvent(filled, filler);
    if (strcmp(layout, "event") == 0)
        aclrtStreamWaitEvent(stream, filled);
    int rc = aclrtMemPoolFreeAsync(block, stream) == ACL_SUCCESS ? 0 : 1;
    atomic_store(&g_release, 1);
    aclrtSynchronizeStream(filler);
    aclrtSynchronizeStream(stream);
    aclrtDestroyEvent(filled);
    aclrtDestroyStream(filler);
    if (aclrtMemPoolDestroy(pool) != ACL_SUCCESS)
        rc = 1;
    printf("done\n");
    return rc;
}

static int run_race(aclrtStream stream, const char *unused)
{
    (void)unused;
    return free_while_filled(stream, "race");
}

static int run_event(aclrtStream stream, const char *unused)
{
    (void)unused;
    return free_while_filled(stream, "event");
}

int main(int argc, char **argv)
{
    static const check_case cases[] = {{"race", run_race}, {"event", run_event}};
    return run_check_case(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
