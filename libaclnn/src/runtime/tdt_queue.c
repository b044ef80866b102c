/*
 * tdt_queue.c - queues by id (acl/acl_tdt_queue.h): their attributes, creation, plain-bytes
 * messages, grants between processes, and route objects, lists and queries.  Mbufs are in
 * tdt_buf.c, the queues themselves in tdt_shared.c.
 *
 * The checks and codes follow runtime:src/acl/acl_tdt_queue/queue.cpp (attribute and route
 * parameters are copied with a length check: a `len` shorter than the value is
 * ACL_ERROR_INVALID_PARAM) and queue_process.cpp (acltdtEnqueueData / acltdtDequeueData return
 * ACL_ERROR_RT_QUEUE_FULL / ACL_ERROR_RT_QUEUE_EMPTY when the timeout passes: 0 does not wait,
 * -1 waits for ever).  CANN's host-side queue processor answers the mbuf calls and the grants with
 * ACL_ERROR_FEATURE_UNSUPPORTED; libaclnn serves them as the device-side processor does, since
 * here host and device are one machine.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/tdt_internal.h"

struct acltdtQueueRoute {
    uint32_t srcId;
    uint32_t dstId;
    int32_t status;
};

struct acltdtQueueRouteList {
    acltdtQueueRoute *routes;
    size_t count;
    size_t capacity;
};

struct acltdtQueueRouteQueryInfo {
    int32_t mode;
    uint32_t srcId;
    uint32_t dstId;
    bool mode_set;
    bool src_set;
    bool dst_set;
};

/* Copies a `src_len`-byte value into a `dst_len`-byte slot, as CANN's CopyParam does. */
static aclError copy_param(const char *api, const void *src, size_t src_len, void *dst, size_t dst_len,
                           size_t *copied)
{
    if (src_len > dst_len)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: a %zu-byte value does not fit %zu bytes (check len).", api,
                        src_len, dst_len);
    memcpy(dst, src, src_len);
    if (copied != NULL)
        *copied = src_len;
    return ACL_SUCCESS;
}

/* ---- attributes ----------------------------------------------------------------------------- */

ACL_FUNC_VISIBILITY acltdtQueueAttr *acltdtCreateQueueAttr(void)
{
    acltdtQueueAttr *attr = calloc(1, sizeof *attr);
    if (attr == NULL) {
        nn_error(ACL_ERROR_BAD_ALLOC, "acltdtCreateQueueAttr: out of memory.");
        return NULL;
    }
    attr->depth = NN_TDT_DEPTH_DEFAULT;
    return attr;
}

ACL_FUNC_VISIBILITY aclError acltdtDestroyQueueAttr(const acltdtQueueAttr *attr)
{
    if (attr == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "acltdtDestroyQueueAttr: attr is NULL.");
    free((void *)attr);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError acltdtSetQueueAttr(acltdtQueueAttr *attr, acltdtQueueAttrType type, size_t len,
                                                const void *param)
{
    const char *api = "acltdtSetQueueAttr";
    if (attr == NULL || param == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL.", api, attr == NULL ? "attr" : "param");
    if (type == ACL_TDT_QUEUE_DEPTH_UINT32)
        return copy_param(api, param, len, &attr->depth, sizeof attr->depth, NULL);
    if (type != ACL_TDT_QUEUE_NAME_PTR)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: invalid acltdtQueueAttrType %d (expected "
                        "ACL_TDT_QUEUE_NAME_PTR or ACL_TDT_QUEUE_DEPTH_UINT32).", api, (int)type);
    const char *name = NULL;
    aclError ret = copy_param(api, param, len, (void *)&name, sizeof name, NULL);
    if (ret != ACL_SUCCESS)
        return ret;
    if (name == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: the name pointer is NULL.", api);
    size_t name_len = strnlen(name, NN_TDT_NAME_MAX);
    if (name_len + 1 > NN_TDT_NAME_MAX)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: queue name length %zu is outside [0, %d].", api, name_len + 1,
                        NN_TDT_NAME_MAX);
    memcpy(attr->name, name, name_len + 1);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError acltdtGetQueueAttr(const acltdtQueueAttr *attr, acltdtQueueAttrType type, size_t len,
                                                size_t *paramRetSize, void *param)
{
    const char *api = "acltdtGetQueueAttr";
    if (attr == NULL || param == NULL || paramRetSize == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL.", api,
                        attr == NULL ? "attr" : param == NULL ? "param" : "paramRetSize");
    if (type == ACL_TDT_QUEUE_DEPTH_UINT32)
        return copy_param(api, &attr->depth, sizeof attr->depth, param, len, paramRetSize);
    if (type != ACL_TDT_QUEUE_NAME_PTR)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: invalid acltdtQueueAttrType %d.", api, (int)type);
    const char *name = attr->name;
    return copy_param(api, (const void *)&name, sizeof name, param, len, paramRetSize);
}

/* ---- queues and plain-bytes messages -------------------------------------------------------- */

ACL_FUNC_VISIBILITY aclError acltdtCreateQueue(const acltdtQueueAttr *attr, uint32_t *qid)
{
    const char *api = "acltdtCreateQueue";
    if (qid == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: qid is NULL.", api);
    int32_t device;
    if (aclrtGetDevice(&device) != ACL_SUCCESS)
        return nn_error(ACL_ERROR_RT_CONTEXT_NULL, "%s: no device is set on this thread (aclrtSetDevice).", api);
    return nn_tdtq_create(api, attr ? attr->name : "", attr ? attr->depth : NN_TDT_DEPTH_DEFAULT, qid);
}

ACL_FUNC_VISIBILITY aclError acltdtDestroyQueue(uint32_t qid)
{
    return nn_tdtq_destroy("acltdtDestroyQueue", qid);
}

ACL_FUNC_VISIBILITY aclError acltdtEnqueueData(uint32_t qid, const void *data, size_t dataSize,
                                               const void *userData, size_t userDataSize, int32_t timeout,
                                               uint32_t rsv)
{
    const char *api = "acltdtEnqueueData";
    (void)rsv;
    if (data == NULL || dataSize == 0)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: %s.", api, data == NULL ? "data is NULL" : "dataSize is 0");
    if (userDataSize > NN_TDT_USER_DATA_MAX || (userData == NULL && userDataSize != 0))
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: userDataSize %zu must be at most %d, with userData set.", api,
                        userDataSize, NN_TDT_USER_DATA_MAX);
    nn_tdt_segment segment = {data, dataSize, userData, userDataSize};
    return nn_tdtq_push(api, qid, &segment, 1, timeout);
}

ACL_FUNC_VISIBILITY aclError acltdtDequeueData(uint32_t qid, void *data, size_t dataSize, size_t *retDataSize,
                                               void *userData, size_t userDataSize, int32_t timeout)
{
    const char *api = "acltdtDequeueData";
    if (data == NULL || retDataSize == NULL || dataSize == 0)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: %s.", api,
                        data == NULL ? "data is NULL" : retDataSize == NULL ? "retDataSize is NULL" : "dataSize is 0");
    if (userData == NULL && userDataSize != 0)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: userData is NULL but userDataSize is %zu.", api, userDataSize);
    nn_tdt_message message;
    aclError ret = nn_tdtq_pop(api, qid, timeout, dataSize, retDataSize, &message);
    if (ret != ACL_SUCCESS)
        return ret;
    size_t at = 0;
    for (uint32_t i = 0; i < message.segments; i++) { /* a chain's buffers arrive back to back */
        nn_tdt_segment seg;
        nn_tdt_message_segment(&message, i, &seg);
        memcpy((unsigned char *)data + at, seg.data, seg.len);
        at += seg.len;
        if (i == 0 && userDataSize != 0) {
            memset(userData, 0, userDataSize);
            memcpy(userData, seg.user, seg.user_len < userDataSize ? seg.user_len : userDataSize);
        }
    }
    nn_tdt_message_free(&message);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError acltdtGrantQueue(uint32_t qid, int32_t pid, uint32_t permission, int32_t timeout)
{
    return nn_tdtq_grant("acltdtGrantQueue", qid, pid, permission, timeout);
}

ACL_FUNC_VISIBILITY aclError acltdtAttachQueue(uint32_t qid, int32_t timeout, uint32_t *permission)
{
    if (permission == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "acltdtAttachQueue: permission is NULL.");
    return nn_tdtq_attach("acltdtAttachQueue", qid, timeout, permission);
}

/* ---- route objects -------------------------------------------------------------------------- */

ACL_FUNC_VISIBILITY acltdtQueueRoute *acltdtCreateQueueRoute(uint32_t srcId, uint32_t dstId)
{
    acltdtQueueRoute *route = calloc(1, sizeof *route);
    if (route == NULL) {
        nn_error(ACL_ERROR_BAD_ALLOC, "acltdtCreateQueueRoute: out of memory.");
        return NULL;
    }
    route->srcId = srcId;
    route->dstId = dstId;
    return route;
}

ACL_FUNC_VISIBILITY aclError acltdtDestroyQueueRoute(const acltdtQueueRoute *route)
{
    if (route == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "acltdtDestroyQueueRoute: route is NULL.");
    free((void *)route);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError acltdtGetQueueRouteParam(const acltdtQueueRoute *route, acltdtQueueRouteParamType type,
                                                      size_t len, size_t *paramRetSize, void *param)
{
    const char *api = "acltdtGetQueueRouteParam";
    if (route == NULL || param == NULL || paramRetSize == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL.", api,
                        route == NULL ? "route" : param == NULL ? "param" : "paramRetSize");
    switch (type) {
    case ACL_TDT_QUEUE_ROUTE_SRC_UINT32:
        return copy_param(api, &route->srcId, sizeof route->srcId, param, len, paramRetSize);
    case ACL_TDT_QUEUE_ROUTE_DST_UINT32:
        return copy_param(api, &route->dstId, sizeof route->dstId, param, len, paramRetSize);
    case ACL_TDT_QUEUE_ROUTE_STATUS_INT32:
        return copy_param(api, &route->status, sizeof route->status, param, len, paramRetSize);
    default:
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: invalid acltdtQueueRouteParamType %d.", api, (int)type);
    }
}

ACL_FUNC_VISIBILITY acltdtQueueRouteList *acltdtCreateQueueRouteList(void)
{
    acltdtQueueRouteList *list = calloc(1, sizeof *list);
    if (list == NULL)
        nn_error(ACL_ERROR_BAD_ALLOC, "acltdtCreateQueueRouteList: out of memory.");
    return list;
}

ACL_FUNC_VISIBILITY aclError acltdtDestroyQueueRouteList(const acltdtQueueRouteList *routeList)
{
    if (routeList == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "acltdtDestroyQueueRouteList: routeList is NULL.");
    free(routeList->routes);
    free((void *)routeList);
    return ACL_SUCCESS;
}

/* Appends a route (nn_sorted_insert at the end: the arrays' growth by doubling). */
static bool list_append(void *ctx, uint32_t src, uint32_t dst, int32_t status)
{
    acltdtQueueRouteList *list = ctx;
    acltdtQueueRoute route = {src, dst, status};
    acltdtQueueRoute *routes = nn_sorted_insert(list->routes, &list->count, &list->capacity, 4, sizeof route,
                                                list->count, &route);
    if (routes != NULL)
        list->routes = routes;
    return routes != NULL;
}

ACL_FUNC_VISIBILITY aclError acltdtAddQueueRoute(acltdtQueueRouteList *routeList, const acltdtQueueRoute *route)
{
    if (routeList == NULL || route == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "acltdtAddQueueRoute: %s is NULL.",
                        routeList == NULL ? "routeList" : "route");
    if (!list_append(routeList, route->srcId, route->dstId, route->status))
        return nn_error(ACL_ERROR_BAD_ALLOC, "acltdtAddQueueRoute: out of memory.");
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError acltdtGetQueueRoute(const acltdtQueueRouteList *routeList, size_t index,
                                                 acltdtQueueRoute *route)
{
    const char *api = "acltdtGetQueueRoute";
    if (routeList == NULL || route == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL.", api, routeList == NULL ? "routeList" : "route");
    if (index >= routeList->count)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: index [%zu] must be smaller than [%zu].", api, index,
                        routeList->count);
    *route = routeList->routes[index];
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY size_t acltdtGetQueueRouteNum(const acltdtQueueRouteList *routeList)
{
    if (routeList == NULL) {
        nn_error(ACL_ERROR_INVALID_PARAM, "acltdtGetQueueRouteNum: routeList is NULL.");
        return 0;
    }
    return routeList->count;
}

ACL_FUNC_VISIBILITY acltdtQueueRouteQueryInfo *acltdtCreateQueueRouteQueryInfo(void)
{
    acltdtQueueRouteQueryInfo *info = calloc(1, sizeof *info);
    if (info == NULL)
        nn_error(ACL_ERROR_BAD_ALLOC, "acltdtCreateQueueRouteQueryInfo: out of memory.");
    return info;
}

ACL_FUNC_VISIBILITY aclError acltdtDestroyQueueRouteQueryInfo(const acltdtQueueRouteQueryInfo *info)
{
    if (info == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "acltdtDestroyQueueRouteQueryInfo: info is NULL.");
    free((void *)info);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError acltdtSetQueueRouteQueryInfo(acltdtQueueRouteQueryInfo *param,
                                                          acltdtQueueRouteQueryInfoParamType type, size_t len,
                                                          const void *value)
{
    const char *api = "acltdtSetQueueRouteQueryInfo";
    if (param == NULL || value == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL.", api, param == NULL ? "param" : "value");
    aclError ret;
    switch (type) {
    case ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM:
        ret = copy_param(api, value, len, &param->mode, sizeof param->mode, NULL);
        param->mode_set = param->mode_set || ret == ACL_SUCCESS;
        return ret;
    case ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32:
        ret = copy_param(api, value, len, &param->srcId, sizeof param->srcId, NULL);
        param->src_set = param->src_set || ret == ACL_SUCCESS;
        return ret;
    case ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32:
        ret = copy_param(api, value, len, &param->dstId, sizeof param->dstId, NULL);
        param->dst_set = param->dst_set || ret == ACL_SUCCESS;
        return ret;
    default:
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: invalid acltdtQueueRouteQueryInfoParamType %d.", api, (int)type);
    }
}

/* ---- routes --------------------------------------------------------------------------------- */

/* Binds (or unbinds) every route of the list, setting each one's status; the first failure is
 * returned after all were tried, as CANN reports per-route statuses. */
static aclError bind_all(const char *api, acltdtQueueRouteList *list, bool bind)
{
    if (list == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: qRouteList is NULL.", api);
    aclError first = ACL_SUCCESS;
    for (size_t i = 0; i < list->count; i++) {
        acltdtQueueRoute *r = &list->routes[i];
        aclError ret = bind ? nn_tdtq_bind(api, r->srcId, r->dstId, &r->status)
                            : nn_tdtq_unbind(api, r->srcId, r->dstId, &r->status);
        first = first == ACL_SUCCESS ? ret : first;
    }
    return first;
}

ACL_FUNC_VISIBILITY aclError acltdtBindQueueRoutes(acltdtQueueRouteList *qRouteList)
{
    return bind_all("acltdtBindQueueRoutes", qRouteList, true);
}

ACL_FUNC_VISIBILITY aclError acltdtUnbindQueueRoutes(acltdtQueueRouteList *qRouteList)
{
    return bind_all("acltdtUnbindQueueRoutes", qRouteList, false);
}

/* CANN's CheckQueueRouteQueryInfo: the mode, and the ids it needs, must have been set. */
static aclError check_query(const char *api, const acltdtQueueRouteQueryInfo *info)
{
    if (!info->mode_set)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: mode must be set in acltdtQueueRouteQueryInfo, please use "
                        "acltdtSetQueueRouteQueryInfo.", api);
    bool need_src = info->mode == ACL_TDT_QUEUE_ROUTE_QUERY_SRC || info->mode == ACL_TDT_QUEUE_ROUTE_QUERY_SRC_AND_DST;
    bool need_dst = info->mode == ACL_TDT_QUEUE_ROUTE_QUERY_DST || info->mode == ACL_TDT_QUEUE_ROUTE_QUERY_SRC_AND_DST;
    if (!need_src && !need_dst && info->mode != ACL_TDT_QUEUE_ROUTE_QUERY_ABNORMAL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: invalid mode %d.", api, (int)info->mode);
    if ((need_src && !info->src_set) || (need_dst && !info->dst_set))
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: the %s qid must be set in acltdtQueueRouteQueryInfo for mode "
                        "%d.", api, need_src && !info->src_set ? "src" : "dst", (int)info->mode);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError acltdtQueryQueueRoutes(const acltdtQueueRouteQueryInfo *queryInfo,
                                                    acltdtQueueRouteList *qRouteList)
{
    const char *api = "acltdtQueryQueueRoutes";
    if (qRouteList == NULL || queryInfo == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL.", api, qRouteList == NULL ? "qRouteList" : "queryInfo");
    qRouteList->count = 0;
    aclError ret = check_query(api, queryInfo);
    if (ret != ACL_SUCCESS)
        return ret;
    return nn_tdtq_query_routes(api, queryInfo->mode, queryInfo->srcId, queryInfo->dstId, list_append, qRouteList);
}
