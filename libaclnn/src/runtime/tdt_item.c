/*
 * tdt_item.c - data items and datasets (acl/acl_tdt.h), and the bytes a dataset travels as on a
 * channel.
 *
 * An item the program creates points at the program's data (never copied, never freed here, as
 * CANN's acltdtCreateDataItem keeps the pointer); a dataset lists items it does not own.  A
 * dataset filled by acltdtReceiveTensor owns its items and one buffer their data points into
 * (CANN's `freeSelf` datasets and their shared receive buffer): acltdtDestroyDataset frees both,
 * and the next receive into it replaces them.  The checks and their order follow
 * runtime:src/acl/acl_tdt_channel/tensor_data_transfer.cpp.
 *
 * On a channel a dataset is one message segment: a uint32 item count, then per item a header
 * (tensor type, dtype, slice number and id, dim count, byte count) followed by the dims and the
 * bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/tdt_internal.h"

#define TDT_MAX_DIMS 128 /* CANN's MAX_DIM_CNT */

struct acltdtDataItem {
    acltdtTensorType tdt_type;
    aclDataType data_type;
    size_t dim_num;
    int64_t *dims;
    void *data;
    size_t size;
    uint16_t slice_num;
    uint16_t slice_id;
};

struct acltdtDataset {
    acltdtDataItem **items;
    size_t count;
    size_t capacity;
    bool owns_items;          /* filled by a receive */
    unsigned char *received;  /* what the received items point into */
    char name[NN_TDT_NAME_MAX];
};

typedef struct item_header {
    int32_t tdt_type;
    int32_t data_type;
    uint16_t slice_num;
    uint16_t slice_id;
    uint32_t dim_num;
    uint64_t size;
} item_header;

/* ---- items ---------------------------------------------------------------------------------- */

ACL_FUNC_VISIBILITY acltdtDataItem *acltdtCreateDataItem(acltdtTensorType tdtType, const int64_t *dims,
                                                         size_t dimNum, aclDataType dataType, void *data,
                                                         size_t size)
{
    const char *api = "acltdtCreateDataItem";
    if (dims == NULL && dimNum != 0) {
        nn_error(ACL_ERROR_INVALID_PARAM, "%s: dims is NULL but dimNum is %zu: if dims is nullptr, dimNum should "
                 "be 0.", api, dimNum);
        return NULL;
    }
    if (dims != NULL && dimNum == 0) {
        nn_error(ACL_ERROR_INVALID_PARAM, "%s: dims is not NULL but dimNum is 0: dimNum should be greater than 0.",
                 api);
        return NULL;
    }
    if (dimNum > TDT_MAX_DIMS) {
        nn_error(ACL_ERROR_INVALID_PARAM, "%s: dimNum %zu can't be larger than %d.", api, dimNum, TDT_MAX_DIMS);
        return NULL;
    }
    if (tdtType != ACL_TENSOR_DATA_TENSOR && dims != NULL) {
        nn_error(ACL_ERROR_INVALID_PARAM, "%s: dims must be NULL for tdtType %d (only ACL_TENSOR_DATA_TENSOR "
                 "has dims).", api, (int)tdtType);
        return NULL;
    }
    acltdtDataItem *item = calloc(1, sizeof *item);
    int64_t *copy = dimNum ? malloc(dimNum * sizeof *copy) : NULL;
    if (item == NULL || (dimNum != 0 && copy == NULL)) {
        free(item);
        free(copy);
        nn_error(ACL_ERROR_BAD_ALLOC, "%s: out of memory.", api);
        return NULL;
    }
    if (dimNum)
        memcpy(copy, dims, dimNum * sizeof *copy);
    bool tensor = tdtType == ACL_TENSOR_DATA_TENSOR;
    *item = (acltdtDataItem){tdtType, tensor ? dataType : ACL_DT_UNDEFINED, dimNum, copy, tensor ? data : NULL,
                             tensor ? size : 0, 0, 0};
    return item;
}

ACL_FUNC_VISIBILITY aclError acltdtDestroyDataItem(acltdtDataItem *dataItem)
{
    if (dataItem == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "acltdtDestroyDataItem: dataItem is NULL.");
    free(dataItem->dims);
    free(dataItem);
    return ACL_SUCCESS;
}

/* False (with a message naming `api`) for a NULL item: the getters then return CANN's fallbacks. */
static bool item_ok(const char *api, const acltdtDataItem *item)
{
    if (item == NULL)
        nn_error(ACL_ERROR_INVALID_PARAM, "%s: dataItem is NULL.", api);
    return item != NULL;
}

ACL_FUNC_VISIBILITY acltdtTensorType acltdtGetTensorTypeFromItem(const acltdtDataItem *dataItem)
{
    return item_ok("acltdtGetTensorTypeFromItem", dataItem) ? dataItem->tdt_type : ACL_TENSOR_DATA_UNDEFINED;
}

ACL_FUNC_VISIBILITY aclDataType acltdtGetDataTypeFromItem(const acltdtDataItem *dataItem)
{
    return item_ok("acltdtGetDataTypeFromItem", dataItem) ? dataItem->data_type : ACL_DT_UNDEFINED;
}

ACL_FUNC_VISIBILITY void *acltdtGetDataAddrFromItem(const acltdtDataItem *dataItem)
{
    return item_ok("acltdtGetDataAddrFromItem", dataItem) ? dataItem->data : NULL;
}

ACL_FUNC_VISIBILITY size_t acltdtGetDataSizeFromItem(const acltdtDataItem *dataItem)
{
    return item_ok("acltdtGetDataSizeFromItem", dataItem) ? dataItem->size : 0;
}

ACL_FUNC_VISIBILITY size_t acltdtGetDimNumFromItem(const acltdtDataItem *dataItem)
{
    return item_ok("acltdtGetDimNumFromItem", dataItem) ? dataItem->dim_num : 0;
}

ACL_FUNC_VISIBILITY aclError acltdtGetSliceInfoFromItem(const acltdtDataItem *dataItem, size_t *sliceNum,
                                                        size_t *sliceId)
{
    if (dataItem == NULL || sliceNum == NULL || sliceId == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "acltdtGetSliceInfoFromItem: %s is NULL.",
                        dataItem == NULL ? "dataItem" : sliceNum == NULL ? "sliceNum" : "sliceId");
    *sliceNum = dataItem->slice_num;
    *sliceId = dataItem->slice_id;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError acltdtGetDimsFromItem(const acltdtDataItem *dataItem, int64_t *dims, size_t dimNum)
{
    const char *api = "acltdtGetDimsFromItem";
    if (dataItem == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: dataItem is NULL.", api);
    if (dims == NULL && dimNum != 0)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: dims is NULL but dimNum is %zu.", api, dimNum);
    if (dims != NULL && dimNum == 0)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: dims is not NULL but dimNum is 0.", api);
    if (dimNum < dataItem->dim_num)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: dimNum %zu cannot be less than the size of dataItem's dims "
                        "%zu.", api, dimNum, dataItem->dim_num);
    if (dataItem->dim_num)
        memcpy(dims, dataItem->dims, dataItem->dim_num * sizeof *dims);
    return ACL_SUCCESS;
}

/* ---- datasets ------------------------------------------------------------------------------- */

ACL_FUNC_VISIBILITY acltdtDataset *acltdtCreateDataset(void)
{
    acltdtDataset *dataset = calloc(1, sizeof *dataset);
    if (dataset == NULL)
        nn_error(ACL_ERROR_BAD_ALLOC, "acltdtCreateDataset: out of memory.");
    return dataset;
}

static void dataset_drop_received(acltdtDataset *dataset)
{
    for (size_t i = 0; dataset->owns_items && i < dataset->count; i++)
        acltdtDestroyDataItem(dataset->items[i]);
    if (dataset->owns_items)
        dataset->count = 0;
    free(dataset->received);
    dataset->received = NULL;
}

ACL_FUNC_VISIBILITY aclError acltdtDestroyDataset(acltdtDataset *dataset)
{
    if (dataset == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "acltdtDestroyDataset: dataset is NULL.");
    dataset_drop_received(dataset);
    free(dataset->items);
    free(dataset);
    return ACL_SUCCESS;
}

/* Appends (nn_sorted_insert at the end: the arrays' growth by doubling). */
static bool dataset_append(acltdtDataset *dataset, acltdtDataItem *item)
{
    acltdtDataItem **items = nn_sorted_insert(dataset->items, &dataset->count, &dataset->capacity, 4, sizeof item,
                                              dataset->count, &item);
    if (items != NULL)
        dataset->items = items;
    return items != NULL;
}

ACL_FUNC_VISIBILITY aclError acltdtAddDataItem(acltdtDataset *dataset, acltdtDataItem *dataItem)
{
    const char *api = "acltdtAddDataItem";
    if (dataset == NULL || dataItem == NULL)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL.", api, dataset == NULL ? "dataset" : "dataItem");
    if (dataset->owns_items)
        return nn_error(ACL_ERROR_FEATURE_UNSUPPORTED, "%s: item cannot be added because internal item already "
                        "exists (the dataset holds received items).", api);
    if (!dataset_append(dataset, dataItem))
        return nn_error(ACL_ERROR_BAD_ALLOC, "%s: out of memory.", api);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY acltdtDataItem *acltdtGetDataItem(const acltdtDataset *dataset, size_t index)
{
    if (dataset == NULL) {
        nn_error(ACL_ERROR_INVALID_PARAM, "acltdtGetDataItem: dataset is NULL.");
        return NULL;
    }
    if (index >= dataset->count) {
        nn_error(ACL_ERROR_INVALID_PARAM, "acltdtGetDataItem: index %zu is greater than or equal to dataset size "
                 "%zu.", index, dataset->count);
        return NULL;
    }
    return dataset->items[index];
}

ACL_FUNC_VISIBILITY size_t acltdtGetDatasetSize(const acltdtDataset *dataset)
{
    if (dataset == NULL) {
        nn_error(ACL_ERROR_INVALID_PARAM, "acltdtGetDatasetSize: dataset is NULL.");
        return 0;
    }
    return dataset->count;
}

ACL_FUNC_VISIBILITY const char *acltdtGetDatasetName(const acltdtDataset *dataset)
{
    if (dataset == NULL) {
        nn_error(ACL_ERROR_INVALID_PARAM, "acltdtGetDatasetName: dataset is NULL.");
        return NULL;
    }
    return dataset->name;
}

/* ---- a dataset as bytes --------------------------------------------------------------------- */

aclError nn_tdt_dataset_pack(const char *api, const acltdtDataset *dataset, unsigned char **bytes, size_t *size)
{
    size_t total = sizeof(uint32_t);
    for (size_t i = 0; i < dataset->count; i++) {
        const acltdtDataItem *item = dataset->items[i];
        if (item->size != 0 && item->data == NULL)
            return nn_error(ACL_ERROR_INVALID_PARAM, "%s: item %zu has %zu bytes but no data.", api, i, item->size);
        total += sizeof(item_header) + item->dim_num * sizeof(int64_t) + item->size;
    }
    unsigned char *out = malloc(total);
    if (out == NULL)
        return nn_error(ACL_ERROR_BAD_ALLOC, "%s: out of memory packing %zu bytes.", api, total);
    uint32_t count = (uint32_t)dataset->count;
    memcpy(out, &count, sizeof count);
    size_t at = sizeof count;
    for (size_t i = 0; i < dataset->count; i++) {
        const acltdtDataItem *item = dataset->items[i];
        item_header h = {(int32_t)item->tdt_type, (int32_t)item->data_type, item->slice_num, item->slice_id,
                         (uint32_t)item->dim_num, item->size};
        memcpy(out + at, &h, sizeof h);
        at += sizeof h;
        if (item->dim_num)
            memcpy(out + at, item->dims, item->dim_num * sizeof(int64_t));
        at += item->dim_num * sizeof(int64_t);
        if (item->size)
            memcpy(out + at, item->data, item->size);
        at += item->size;
    }
    *bytes = out;
    *size = total;
    return ACL_SUCCESS;
}

/* One received item from bytes[*at..size), pointing into them; NULL when they are short. */
static acltdtDataItem *unpack_item(unsigned char *bytes, size_t size, size_t *at)
{
    item_header h;
    if (size - *at < sizeof h)
        return NULL;
    memcpy(&h, bytes + *at, sizeof h);
    *at += sizeof h;
    size_t dims_bytes = (size_t)h.dim_num * sizeof(int64_t);
    if (h.dim_num > TDT_MAX_DIMS || size - *at < dims_bytes || size - *at - dims_bytes < h.size)
        return NULL;
    acltdtDataItem *item = calloc(1, sizeof *item);
    int64_t *dims = h.dim_num ? malloc(dims_bytes) : NULL;
    if (item == NULL || (h.dim_num && dims == NULL)) {
        free(item);
        free(dims);
        return NULL;
    }
    if (h.dim_num)
        memcpy(dims, bytes + *at, dims_bytes);
    *at += dims_bytes;
    *item = (acltdtDataItem){(acltdtTensorType)h.tdt_type, (aclDataType)h.data_type, h.dim_num, dims,
                             h.size ? bytes + *at : NULL, (size_t)h.size, h.slice_num, h.slice_id};
    *at += (size_t)h.size;
    return item;
}

aclError nn_tdt_dataset_check_receivable(const char *api, const acltdtDataset *dataset)
{
    if (dataset->count != 0 && !dataset->owns_items)
        return nn_error(ACL_ERROR_INVALID_PARAM, "%s: the dataset holds %zu items the program added: dataset must "
                        "be empty (or hold received items) before a receive.", api, dataset->count);
    return ACL_SUCCESS;
}

aclError nn_tdt_dataset_unpack(const char *api, acltdtDataset *dataset, unsigned char *bytes, size_t size)
{
    aclError ret = nn_tdt_dataset_check_receivable(api, dataset);
    if (ret != ACL_SUCCESS) {
        free(bytes);
        return ret;
    }
    dataset_drop_received(dataset);
    dataset->owns_items = true;
    dataset->received = bytes;
    uint32_t count = 0;
    if (size >= sizeof count)
        memcpy(&count, bytes, sizeof count);
    size_t at = sizeof count;
    for (uint32_t i = 0; i < count; i++) {
        acltdtDataItem *item = unpack_item(bytes, size, &at);
        if (item == NULL || !dataset_append(dataset, item)) {
            if (item != NULL)
                acltdtDestroyDataItem(item);
            dataset_drop_received(dataset);
            return nn_error(ACL_ERROR_BAD_ALLOC, "%s: cannot rebuild item %u of %u.", api, i, count);
        }
    }
    return ACL_SUCCESS;
}
